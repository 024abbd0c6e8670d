"""Where lanes run, as the executor's own check sees it (on Ray: the head answers, its version, and a live
node that offers the lane resource each lane's job asks for; with none, every lane would sit PENDING
until it times out). Each executor says what to look at in its `check` hook (`bot/executors/`); this
probe only words its findings as lines."""

from __future__ import annotations

from dataclasses import dataclass

from bot.domain.errors import CsbBotError
from bot.executors.base import Probe, ProbeStatus
from bot.executors.registry import check_executor
from bot.probes.base import Line, Mark, ProbeContext, fail, note

_MARKS = {ProbeStatus.OK: Mark.OK, ProbeStatus.WARN: Mark.NOTE, ProbeStatus.FAIL: Mark.FAIL}


@dataclass(frozen=True)
class ExecutorProbe:
    name: str = "executor"
    timeout_sec: float = 15.0

    async def run(self, context: ProbeContext) -> list[Line]:
        if context.settings is None:
            return [note("executor not checked: no settings")]
        try:
            settings = context.settings.executor(context.config)
        except CsbBotError as exc:
            return [fail(str(exc))]
        found = await check_executor(settings)
        return [_line(each) for each in found] or [
            note(f"lanes run on the {settings.kind} executor: nothing more to check")
        ]


def _line(found: Probe) -> Line:
    return Line(_MARKS[found.status], found.message)
