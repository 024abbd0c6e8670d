"""The checks shown on an approval card: CSB preflight and the pairing guard. Blocking ones refuse Approve."""

from __future__ import annotations

import asyncio
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from bot.csb.child_env import ChildEnv
from bot.csb.counterparts import missing_counterparts
from bot.csb.docker_daemon import PING_TIMEOUT_SEC
from bot.csb.preflight import AccountHealth, account_health, run_preflight
from bot.csb.trial_index import TrialIndex
from bot.domain.budget import BudgetCheck
from bot.domain.estimate import RunEstimate
from bot.domain.redact import Redactor
from bot.domain.spec import RunSpec
from bot.domain.words import agree, plural
from bot.services.spend import SpendChecks, SpendService

MISSING_SHOWN = 10


class CheckLine(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    ok: bool
    blocking: bool
    message: str
    skipped: bool = False  # the check did not run (no script in this checkout, nothing to check)


class RequestChecks(BaseModel):
    """Stored on the request as JSON and rendered on its card."""

    model_config = ConfigDict(frozen=True)

    lines: tuple[CheckLine, ...] = ()
    missing_counterparts: tuple[str, ...] = ()
    unpaired_override: bool = False
    recommended_parallel: int | None = None
    # What the run will cost (from finished lanes) and its budget lines, as the card showed them:
    # the report compares the actual cost with this estimate.
    estimate: RunEstimate | None = None
    budget: BudgetCheck = BudgetCheck()

    @property
    def unpaired_refused(self) -> bool:
        return bool(self.missing_counterparts) and not self.unpaired_override

    @property
    def blocking_reasons(self) -> list[str]:
        reasons = [line.message for line in self.lines if line.blocking]
        if self.unpaired_refused:
            reasons.append(
                f"{_tasks_have(len(self.missing_counterparts))} no clean counterpart result for a "
                "single-lane run (pass `--allow-unpaired` to override, which needs an override approver)"
            )
        return reasons


def _tasks_have(count: int) -> str:
    return f"{plural(count, 'task')} {agree(count, 'has', 'have')}"


class CheckRunner:
    """Runs the checks off the event loop: they read result files and may start CSB's preflight scripts.

    Whatever those scripts print is redacted with `redact` (the bot's secrets) before it is kept. The
    pairing guard's trial folders are indexed for as long as the runner lives (one per bot process).
    """

    def __init__(
        self,
        repo: Path,
        env: ChildEnv,
        *,
        daytona: bool,
        redact: Redactor,
        timeout_s: float,
        docker: bool = False,
        docker_ping_s: float = PING_TIMEOUT_SEC,
        spend: SpendService | None = None,
    ) -> None:
        """`docker`: lanes build on the local Docker daemon, so the preflight asks it (`docker_ping_s`).
        `spend`: the estimate and budget lines (none without it)."""
        self._spend = spend
        self._repo = repo
        self._docker = docker
        self._docker_ping_s = docker_ping_s
        self._env = env
        self._daytona = daytona
        self._redact = redact
        self._timeout_s = timeout_s
        self._trials = TrialIndex()

    async def run(self, spec: RunSpec) -> RequestChecks:
        report, missing, spent = await asyncio.gather(
            run_preflight(
                self._repo,
                spec,
                self._env,
                daytona=self._daytona,
                timeout_s=self._timeout_s,
                redact=self._redact,
                docker=self._docker,
                docker_ping_s=self._docker_ping_s,
            ),
            asyncio.to_thread(missing_counterparts, self._repo, spec, self._trials),
            self._assess(spec),
        )
        lines = tuple(
            CheckLine(name=f.check, ok=f.ok, blocking=f.blocking, message=f.message, skipped=f.skipped)
            for f in report.findings
        )
        return RequestChecks(
            lines=lines,
            missing_counterparts=tuple(missing),
            unpaired_override=spec.params.allow_unpaired,
            recommended_parallel=report.recommended_parallel,
            estimate=spent.estimate if spent else None,
            budget=spent.budget if spent else BudgetCheck(),
        )

    async def _assess(self, spec: RunSpec) -> SpendChecks | None:
        return await self._spend.assess(spec) if self._spend is not None else None

    async def budget_now(self, spec: RunSpec, estimate: RunEstimate | None) -> BudgetCheck:
        """The budget lines at this moment, for a click: the month may have spent more since the card."""
        return await self._spend.budget(spec, estimate) if self._spend is not None else BudgetCheck()

    async def accounts(self) -> AccountHealth | None:
        """CSB's account verdict for `/csb accounts`, with the same environment, limit and redaction."""
        return await account_health(self._repo, self._env, timeout_s=self._timeout_s, redact=self._redact)
