"""`/csb run --tasks id,id`: the parse, then the ids checked against the example bench's suite file and
written as a selection file in CSB's shape; every refusal is one line and writes nothing."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from bot.csb.catalog import Catalog
from bot.csb.named_tasks import pick
from bot.csb.task_file import parse_task_file
from bot.domain.command_line import parse_run_args, parse_run_line
from bot.domain.errors import UserInputError

BENCH = Path(__file__).resolve().parents[1] / "configs" / "example-bench"
SUITE_FILE = "benchmarks/suites/csb-example.json"


def test_tasks_parse_as_typed_each_once() -> None:
    line = parse_run_line("csb_sdlc_fix --tasks Slug-1,pag-2, slug-1 --model m")
    assert line.tasks == ("Slug-1", "pag-2")
    assert (line.params.suite, line.params.model) == ("csb_sdlc_fix", "m")
    assert parse_run_line("--tasks=a").tasks == ("a",)
    assert parse_run_line("csb_sdlc_fix").tasks == ()


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("--tasks", "`--tasks` needs task ids: `--tasks ID[,ID…]`"),
        ("--tasks , --model m", "`--tasks` needs task ids"),
        ("--tasks a --tasks b", "`--tasks` given twice"),
        ("--task a", "unknown flag `--task`; did you mean `--tasks`?"),
    ],
)
def test_tasks_refusals_name_the_fix(text: str, words: str) -> None:
    with pytest.raises(UserInputError) as caught:
        parse_run_line(text)
    assert words in caught.value.message
    assert "[--tasks ID,…]" in str(caught.value.hint)


def test_the_run_parser_alone_does_not_drop_tasks() -> None:
    with pytest.raises(UserInputError, match="`--tasks` is not taken here"):
        parse_run_args("--tasks a")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return Path(shutil.copytree(BENCH, tmp_path / "csb", ignore=shutil.ignore_patterns("runs")))


def test_named_tasks_match_any_case_and_are_copied_as_the_suite_file_has_them(repo: Path) -> None:
    catalog = Catalog(repo)
    named = pick(
        catalog, None, "csb_sdlc_fix", ("PAGINATION-offset-fix-001", "slugify-punctuation-fix-001"), 20, "T1"
    )
    assert named.selection_file.startswith("configs/harnesses/tasks_T1_")
    written = json.loads((repo / named.selection_file).read_text())
    suite_tasks = {t["task_id"]: t for t in json.loads((repo / SUITE_FILE).read_text())["tasks"]}
    assert written == {
        "metadata": {
            "description": f"Quick rerun of 2 named tasks of suite `csb_sdlc_fix` of {SUITE_FILE}",
            "task_count": 2,
        },
        "tasks": [  # in the order named, each with CSB's `benchmark` beside the suite file's fields
            {**suite_tasks["pagination-offset-fix-001"], "benchmark": "csb_sdlc_fix"},
            {**suite_tasks["slugify-punctuation-fix-001"], "benchmark": "csb_sdlc_fix"},
        ],
    }
    read_back = parse_task_file(repo, named.selection_file, (repo / named.selection_file).read_bytes())
    assert [(t.task_id, t.suite) for t in read_back.tasks] == [
        ("pagination-offset-fix-001", "csb_sdlc_fix"),
        ("slugify-punctuation-fix-001", "csb_sdlc_fix"),
    ]
    assert read_back.shape == "selection"


@pytest.mark.parametrize(
    ("suite", "ids", "limit", "words"),
    [
        (
            "csb_sdlc_fix",
            ("pagination-ofset-fix-001",),
            20,
            "`pagination-ofset-fix-001` is not a task of suite `csb_sdlc_fix` of "
            f"`{SUITE_FILE}`; did you mean `pagination-offset-fix-001`?",
        ),
        (
            "csb_sdlc_debug",
            ("pagination-offset-fix-001",),
            20,
            "`pagination-offset-fix-001` is not a task of suite `csb_sdlc_debug`",
        ),
        (
            "csb_sdlc_fx",
            ("a",),
            20,
            f"`csb_sdlc_fx` is not a suite of `{SUITE_FILE}`; did you mean `csb_sdlc_fix`?",
        ),
        (
            None,
            ("a", "b", "c"),
            2,
            "`--tasks` names 3 tasks; a quick rerun takes at most 2 (the `quick_rerun_max_tasks` setting)",
        ),
    ],
)
def test_refusals_are_one_line_and_write_nothing(
    repo: Path, suite: str | None, ids: tuple[str, ...], limit: int, words: str
) -> None:
    with pytest.raises(UserInputError) as caught:
        pick(Catalog(repo), None, suite, ids, limit, "T1")
    assert words in caught.value.message and "\n" not in caught.value.message
    assert not (repo / "configs" / "harnesses").exists()
