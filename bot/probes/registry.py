"""Every probe `csb-bot check` runs, in the order their lines are printed: a new probe is one line here."""

from __future__ import annotations

from collections.abc import Mapping

from bot.probes.accounts import AccountsProbe
from bot.probes.base import Probe, ProbeReport
from bot.probes.checkout import CheckoutProbe
from bot.probes.credentials import CredentialsProbe
from bot.probes.database import DatabaseProbe
from bot.probes.executor import ExecutorProbe
from bot.probes.harbor import HarborProbe
from bot.probes.infra import DiskProbe, DockerProbe
from bot.probes.orphans import OrphansProbe
from bot.probes.runner import run_probes
from bot.probes.slack_api import SlackProbe

PROBES: tuple[Probe, ...] = (
    DatabaseProbe(),
    SlackProbe(),
    CheckoutProbe(),
    HarborProbe(),
    CredentialsProbe(),
    DockerProbe(),
    DiskProbe(),
    AccountsProbe(),
    ExecutorProbe(),
    OrphansProbe(),
)


async def run_check(environ: Mapping[str, str]) -> list[ProbeReport]:
    """The settings, then every probe above."""
    return await run_probes(PROBES, environ)
