"""`csb-bot check`: one probe per dependency, each with its own time limit, every problem on its own line."""

from bot.probes.base import Line, Mark, Probe, ProbeContext, ProbeReport
from bot.probes.registry import PROBES, run_check
from bot.probes.view import passed, print_json, print_text

__all__ = [
    "PROBES",
    "Line",
    "Mark",
    "Probe",
    "ProbeContext",
    "ProbeReport",
    "passed",
    "print_json",
    "print_text",
    "run_check",
]
