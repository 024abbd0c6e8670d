"""Run every probe, each under its own time limit, all at once: a hung dependency costs its own limit only."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence

from bot.domain.errors import CsbBotError
from bot.domain.redact import Redactor
from bot.probes.base import Line, Probe, ProbeContext, ProbeReport, fail
from bot.probes.settings_probe import load_context

log = logging.getLogger(__name__)


async def run_probes(probes: Sequence[Probe], environ: Mapping[str, str]) -> list[ProbeReport]:
    """The settings first (every other probe starts from them), then the rest concurrently, in order."""
    context, settings = load_context(environ)
    reports = await asyncio.gather(*(_run_one(probe, context) for probe in probes))
    secrets = context.settings.secret_values(context.config) if context.settings else []
    redact = Redactor.from_env(environ, secrets)  # a probe's answer may quote a secret
    return [_redacted(report, redact) for report in (settings, *reports)]


def _redacted(report: ProbeReport, redact: Redactor) -> ProbeReport:
    return ProbeReport(report.name, tuple(Line(line.mark, redact(line.text)) for line in report.lines))


async def _run_one(probe: Probe, context: ProbeContext) -> ProbeReport:
    try:
        lines = await asyncio.wait_for(probe.run(context), probe.timeout_sec)
    except TimeoutError:
        lines = [fail(f"{probe.name}: no answer in {probe.timeout_sec:g} s (stopped waiting)")]
    except CsbBotError as exc:
        lines = [fail(f"{probe.name}: {exc}")]
    except Exception as exc:  # a probe's own bug must not hide the other probes' findings
        log.debug("probe %s failed", probe.name, exc_info=True)
        lines = [fail(f"{probe.name}: the probe itself failed ({type(exc).__name__})")]
    return ProbeReport(probe.name, tuple(lines))
