"""The words of `csb-bot check`: one line per finding (✓ passed, · not applicable or a warning, ✗ failed),
or the same as JSON for automation. The one place probe output is printed."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TextIO

from bot.probes.base import Mark, ProbeReport

SYMBOLS = {Mark.OK: "✓", Mark.NOTE: "·", Mark.FAIL: "✗"}


def passed(reports: Sequence[ProbeReport]) -> bool:
    return not any(report.failed for report in reports)


def print_text(reports: Sequence[ProbeReport], out: TextIO) -> None:
    for report in reports:
        for line in report.lines:
            print(f"{SYMBOLS[line.mark]} {line.text}", file=out)
    failures = sum(1 for report in reports for line in report.lines if line.mark is Mark.FAIL)
    if failures:
        print(f"{failures} problem{'s' if failures != 1 else ''} found", file=out)
    else:
        print("ready: every probe passed", file=out)


def print_json(reports: Sequence[ProbeReport], out: TextIO) -> None:
    document = {
        "ok": passed(reports),
        "probes": [
            {
                "name": report.name,
                "ok": not report.failed,
                "lines": [{"mark": line.mark.value, "text": line.text} for line in report.lines],
            }
            for report in reports
        ],
    }
    json.dump(document, out, ensure_ascii=False, indent=2)
    out.write("\n")
