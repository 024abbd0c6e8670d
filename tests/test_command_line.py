"""`/csb` text → subcommand and `RunParams`: good inputs, every error message, help, and a fuzz test."""

from __future__ import annotations

import re
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.domain.command_line import (
    COMMAND_USAGE,
    GRAMMAR,
    POSITIONAL_FIELD,
    RUN_EXAMPLE,
    RUN_FLAGS,
    SUBCOMMANDS,
    USAGE,
    CommandLine,
    is_usage,
    nearest,
    parse_command,
    parse_run_args,
    subcommand,
    usage_of,
)
from bot.domain.errors import UserInputError
from bot.domain.help_text import help_overview, run_help
from bot.domain.slack_limits import MAX_SECTION_TEXT
from bot.domain.spec import Category, Mode, RunParams

SONNET = "anthropic/claude-sonnet-4-6"
NBSP = "\u00a0"

GOOD: list[tuple[str, dict[str, Any]]] = [
    ("", {}),
    ("   ", {}),
    ("csb_sdlc_fix", {"suite": "csb_sdlc_fix"}),
    ("--suite csb_sdlc_fix", {"suite": "csb_sdlc_fix"}),
    ("--benchmark csb_sdlc_fix", {"suite": "csb_sdlc_fix"}),
    (
        "--suite=csb_sdlc_fix --model=" + SONNET + " --parallel=8",
        {"suite": "csb_sdlc_fix", "model": SONNET, "parallel": 8},
    ),
    (
        "csb_sdlc_fix --model " + SONNET + " --parallel 8",
        {"suite": "csb_sdlc_fix", "model": SONNET, "parallel": 8},
    ),
    ('--suite-file "benchmarks/suites/my suite.json"', {"suite_file": "benchmarks/suites/my suite.json"}),
    ("--suite-file 'benchmarks/suites/my suite.json'", {"suite_file": "benchmarks/suites/my suite.json"}),
    ('--suite-file="benchmarks/suites/my suite.json"', {"suite_file": "benchmarks/suites/my suite.json"}),
    ("--suite-file “benchmarks/suites/my suite.json”", {"suite_file": "benchmarks/suites/my suite.json"}),
    ("—suite-file ‘benchmarks/suites/my suite.json’", {"suite_file": "benchmarks/suites/my suite.json"}),
    ("—model " + SONNET + " —parallel 4", {"model": SONNET, "parallel": 4}),
    ("–dry-run –allow-unpaired", {"dry_run": True, "allow_unpaired": True}),
    ("—-full-only", {"mode": Mode.FULL_ONLY}),
    (f"csb_sdlc_fix{NBSP}--parallel{NBSP}2", {"suite": "csb_sdlc_fix", "parallel": 2}),
    ("--baseline-only", {"mode": Mode.BASELINE_ONLY}),
    ("--full-only", {"mode": Mode.FULL_ONLY}),
    ("--mode full-only", {"mode": Mode.FULL_ONLY}),
    ("--mode=PAIRED", {"mode": Mode.PAIRED}),
    ("--category official", {"category": Category.OFFICIAL}),
    ("--category=Staging", {"category": Category.STAGING}),
    ("--full-config mcp-remote-artifact", {"full_config": "mcp-remote-artifact"}),
    ("--MODEL " + SONNET, {"model": SONNET}),
    (
        "csb_sdlc_fix --selection-file configs/selected_benchmark_tasks.json",
        {"suite": "csb_sdlc_fix", "selection_file": "configs/selected_benchmark_tasks.json"},
    ),
    (
        "--suite-file benchmarks/suites/a.json csb_org_x",
        {"suite_file": "benchmarks/suites/a.json", "suite": "csb_org_x"},
    ),
    ("--parallel 08", {"parallel": 8}),
]


@pytest.mark.parametrize(("text", "expected"), GOOD)
def test_good_run_args(text: str, expected: dict[str, Any]) -> None:
    assert parse_run_args(text) == RunParams(**expected)


def test_parallel_at_the_bound_is_accepted() -> None:
    assert parse_run_args("--parallel 16", max_parallel=16).parallel == 16


def test_help_example_parses() -> None:
    assert parse_run_args(RUN_EXAMPLE.removeprefix("/csb run ")) == RunParams(
        suite="csb_sdlc_fix", model=SONNET, parallel=8
    )


BAD: list[tuple[str, int | None, str]] = [
    ("--paralel 3", None, "unknown flag `--paralel`; did you mean `--parallel`?"),
    ("--benchmrk x", None, "unknown flag `--benchmrk`; did you mean `--benchmark`?"),
    ("—paralel 3", None, "unknown flag `--paralel`; did you mean `--parallel`?"),
    ("--xyz", None, "unknown flag `--xyz`; flags: `--model`, `--suite`, `--benchmark`, `--suite-file`"),
    ("-p 3", None, "unknown flag `-p`; flags: `--model`"),
    ("--help", None, "`/csb help run` lists the flags of `/csb run`"),
    ("--" + "x" * 500, None, "unknown flag `--xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx…`"),
    ("--model", None, "`--model` needs a value: `--model M`"),
    ("--model --dry-run", None, "`--model` needs a value: `--model M`"),
    ("--model=", None, "`--model` needs a value: `--model M`"),
    ("--suite-file", None, "`--suite-file` needs a value: `--suite-file PATH`"),
    ("--parallel", None, "`--parallel` needs a value: `--parallel N`, a whole number, 1 or more"),
    ("--parallel", 16, "`--parallel` needs a value: `--parallel N`, a whole number from 1 to 16"),
    ("--category", None, "`--category` needs a value: `--category CATEGORY`, one of `staging`, `official`"),
    ("--parallel 0", None, "`--parallel` must be a whole number, 1 or more; got `0`"),
    ("--parallel abc", 16, "`--parallel` must be a whole number from 1 to 16; got `abc`"),
    ("--parallel 17", 16, "`--parallel` must be a whole number from 1 to 16; got `17`"),
    ("--parallel=2.5", None, "`--parallel` must be a whole number, 1 or more; got `2.5`"),
    ("--parallel -4", None, "`--parallel` must be a whole number, 1 or more; got `-4`"),
    ("--parallel ٣", None, "`--parallel` must be a whole number, 1 or more; got `٣`"),
    (
        "--parallel 99999999999999999999",
        16,
        "must be a whole number from 1 to 16; got `99999999999999999999`",
    ),
    ("--category prod", None, "`--category` must be one of `staging`, `official`; got `prod`"),
    ("--mode both", None, "`--mode` must be one of `paired`, `baseline-only`, `full-only`; got `both`"),
    ("--model a --model b", None, "`--model` given twice"),
    ("--dry-run --dry-run", None, "`--dry-run` given twice"),
    ("--suite a b", None, "`--suite` and the bare suite key `b` both set the suite; give one"),
    ("a --benchmark b", None, "the bare suite key `a` and `--benchmark` both set the suite; give one"),
    ("a b", None, "only one bare suite key is allowed; got `a` and `b`"),
    ("a a", None, "only one bare suite key is allowed; got `a` and `a`"),
    ("--benchmark a --suite b", None, "`--benchmark` and `--suite` both set the suite; give one"),
    ("--baseline-only --full-only", None, "`--baseline-only` and `--full-only` both set the mode; give one"),
    ("—baseline-only –full-only", None, "`--baseline-only` and `--full-only` both set the mode; give one"),
    ("--mode paired --full-only", None, "`--mode` and `--full-only` both set the mode; give one"),
    (
        "--suite-file a --selection-file b",
        None,
        "`--suite-file` and `--selection-file` both name the task file",
    ),
    ("--dry-run=yes", None, "`--dry-run` is a switch and takes no value"),
    ("--baseline-only=", None, "`--baseline-only` is a switch and takes no value"),
    (
        '--suite-file "benchmarks/suites/my suite.json',
        None,
        "unbalanced quotes: every `\"` or `'` needs a closing one",
    ),
    ("--suite-file “my suite.json", None, "unbalanced quotes"),
    ("csb_sdlc_fix \\", None, "the text ends with a lone backslash"),
    ('""', None, "the bare suite key is empty; drop the empty quotes"),
    ("--model a\u200bb", None, "`--model` contains an invisible or control character (U+200B)"),
    ("csb\x00fix", None, "the bare suite key contains an invisible or control character (U+0000)"),
    ("--model `x` --model y", None, "`--model` given twice"),
]


@pytest.mark.parametrize(("text", "max_parallel", "message"), BAD)
def test_run_arg_errors(text: str, max_parallel: int | None, message: str) -> None:
    with pytest.raises(UserInputError) as caught:
        parse_run_args(text, max_parallel=max_parallel)
    assert message in caught.value.message
    assert caught.value.hint == USAGE


def test_echoed_text_cannot_break_the_code_span() -> None:
    with pytest.raises(UserInputError) as caught:
        parse_run_args("--category `oops`")
    assert "got `'oops'`" in caught.value.message


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", CommandLine(name="help")),
        ("  \n ", CommandLine(name="help")),
        ("--help", CommandLine(name="help")),
        ("—help", CommandLine(name="help")),
        ("help run", CommandLine(name="help", args="run")),
        ("run csb_sdlc_fix --parallel 8", CommandLine(name="run", args="csb_sdlc_fix --parallel 8")),
        ("RUN  —dry-run ", CommandLine(name="run", args="--dry-run")),
        (f"status{NBSP}42", CommandLine(name="status", args="42")),
        *((name, CommandLine(name=name)) for name in SUBCOMMANDS),
    ],
)
def test_parse_command(text: str, expected: CommandLine) -> None:
    assert parse_command(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "stauts",
            "unknown subcommand `stauts`; did you mean `status`? Subcommands: `run`, `help`, `suites`",
        ),
        ("rnu csb_sdlc_fix", "unknown subcommand `rnu`; did you mean `run`?"),
        ("xyzzy", "unknown subcommand `xyzzy`. Subcommands: `run`, `help`, `suites`, `status`, `cancel`"),
        ("csb_sdlc_fix --parallel 8", "unknown subcommand `csb_sdlc_fix`"),
    ],
)
def test_unknown_subcommand(text: str, message: str) -> None:
    with pytest.raises(UserInputError) as caught:
        parse_command(text)
    assert message in caught.value.message
    assert "`accounts`" in caught.value.message
    assert caught.value.hint == COMMAND_USAGE


# --- one schema: flags, help and usage agree with RunParams -------------------------------------


def test_every_field_has_a_flag_and_every_flag_a_field() -> None:
    assert {flag.field for flag in RUN_FLAGS} == set(RunParams.model_fields)
    assert POSITIONAL_FIELD in RunParams.model_fields
    spellings = [s for flag in RUN_FLAGS for s in (flag.name, *flag.aliases)]
    assert len(spellings) == len(set(spellings))


def test_contract_flags_exist() -> None:
    spellings = {s for flag in RUN_FLAGS for s in (flag.name, *flag.aliases)}
    contract = "--model --suite --benchmark --suite-file --selection-file --baseline-only --full-only"
    contract += " --full-config --parallel --category --dry-run --allow-unpaired"
    assert set(contract.split()) <= spellings


def test_every_field_is_described_and_switches_set_valid_values() -> None:
    for name, info in RunParams.model_fields.items():
        assert info.description, name
    for flag in RUN_FLAGS:
        if flag.is_switch:
            RunParams(**{flag.field: flag.sets})
            assert parse_run_args(flag.name) == RunParams(**{flag.field: flag.sets})


def test_usage_is_one_line_with_every_usage_flag() -> None:
    assert "\n" not in USAGE
    assert USAGE.startswith("/csb run [suite] [--model M]")
    usage_flags = set(re.findall(r"--[a-z-]+", USAGE))
    assert usage_flags == {flag.name for flag in RUN_FLAGS if flag.in_usage} | {"--tasks"}
    assert "--category staging|official" in USAGE


def test_run_help_is_generated_from_the_schema() -> None:
    text = run_help()
    for flag in RUN_FLAGS:
        for spelling in (flag.name, *flag.aliases):
            assert f"`{spelling}" in text
    for name, info in RunParams.model_fields.items():
        assert str(info.description) in text, name
    for member in (*Mode, *Category):
        assert f"`{member.value}`" in text
    assert "`anthropic/claude-haiku-4-5-20251001`" in text
    assert "`mcp-remote-direct`" in text
    assert "Default: auto" in text
    assert RUN_EXAMPLE in text
    assert USAGE in text


def test_help_overview_lists_every_subcommand() -> None:
    text = help_overview()
    for name in SUBCOMMANDS:
        assert f"`/csb {name}" in text
    assert "`/csb help run` for the flags" in text


@pytest.mark.parametrize("note", [None, "", "Here *auto* is 8 slots (4 sessions × 2 accounts).", "x" * 5000])
def test_help_replies_fit_one_slack_section(note: str | None) -> None:
    assert len(help_overview()) < MAX_SECTION_TEXT
    text = run_help(note)
    assert len(text) <= MAX_SECTION_TEXT
    if note and len(note) < 100:
        assert text.endswith(note)


# --- fuzz: anything typed either parses or is a short UserInputError ----------------------------

_SPELLINGS = [s for flag in RUN_FLAGS for s in (flag.name, *flag.aliases)]
_DASHED = st.sampled_from(_SPELLINGS).flatmap(
    lambda s: st.sampled_from([s, "—" + s[2:], "–" + s[2:], s.upper(), s[:-1], s + "x", "-" + s[2:]])
)
_VALUES = st.one_of(
    st.sampled_from(
        ["csb_sdlc_fix", SONNET, "8", "0", "-1", "101", "staging", "official", "paired", "full-only"]
    ),
    st.integers(min_value=-5, max_value=10**12).map(str),
    st.text(max_size=20),
    st.text(max_size=20).map(lambda t: f'"{t}"'),
    st.text(max_size=20).map(lambda t: f"“{t}”"),
    st.sampled_from(['"', "'", "“", "\\", "=", "", "—", "`"]),
)
_TOKEN = st.one_of(
    _DASHED,
    _VALUES,
    st.tuples(_DASHED, _VALUES).map(lambda pair: f"{pair[0]}={pair[1]}"),
)
_SEPARATOR = st.sampled_from([" ", "  ", NBSP, "\t", "\n"])
_RUN_TEXT = st.one_of(
    st.text(),
    st.lists(st.tuples(_TOKEN, _SEPARATOR), max_size=12).map(lambda ts: "".join(t + s for t, s in ts)),
)


def _outcome(call: Any) -> Any:
    """The result, or the error's words; anything other than UserInputError fails the test."""
    try:
        return call()
    except UserInputError as exc:
        assert len(exc.message) + len(exc.hint or "") < MAX_SECTION_TEXT
        assert exc.message.strip()
        return ("error", exc.message, exc.hint)


@settings(max_examples=400, deadline=None)
@given(text=_RUN_TEXT, max_parallel=st.none() | st.integers(min_value=1, max_value=200))
def test_fuzz_run_args_only_raise_user_input_errors(text: str, max_parallel: int | None) -> None:
    result = _outcome(lambda: parse_run_args(text, max_parallel=max_parallel))
    if isinstance(result, RunParams) and result.parallel is not None and max_parallel is not None:
        assert 1 <= result.parallel <= max_parallel


@settings(max_examples=400, deadline=None)
@given(text=st.one_of(st.text(), _RUN_TEXT, _RUN_TEXT.map(lambda t: "run " + t)))
def test_fuzz_command_only_raises_user_input_errors(text: str) -> None:
    result = _outcome(lambda: parse_command(text))
    if isinstance(result, CommandLine):
        assert result.name in SUBCOMMANDS


@settings(max_examples=300, deadline=None)
@given(text=_RUN_TEXT)
def test_fuzz_run_args_via_parse_command_match_direct_parse(text: str) -> None:
    """The listener parses `parse_command(...).args`; normalising twice must not change the answer.

    Only the outer whitespace is gone from `args` (it matters solely after a trailing backslash).
    """
    command = parse_command("run " + text)
    assert command.name == "run"
    assert _outcome(lambda: parse_run_args(command.args)) == _outcome(lambda: parse_run_args(text.strip()))


def test_did_you_mean_picks_the_nearest_flag_counting_a_swap_as_one_slip() -> None:
    flags = ("--model", "--mode", "--suite", "--selection-file", "--parallel")
    assert nearest("--modle", flags) == "--model"  # a swap, not `--mode` (one letter dropped)
    assert nearest("--mode", flags) == "--mode"
    assert nearest("--paralel", flags) == "--parallel"
    assert nearest("--selection", flags) == "--selection-file"  # a unique beginning
    assert nearest("--zzz", flags) is None
    with pytest.raises(UserInputError, match="did you mean `--model`"):
        parse_run_args("--modle x")


def python_lines_run(parse: Any, text: str) -> int:
    """How many lines of Python a parse runs: its work, counted, whatever else the machine is doing."""
    count = 0

    def tracer(frame: Any, event: str, arg: Any) -> Any:
        nonlocal count
        if event == "line":
            count += 1
        return tracer

    sys.settrace(tracer)
    try:
        parse(text)
    except UserInputError:
        pass
    finally:
        sys.settrace(None)
    return count


SLACK_TEXT_CHARS = 40_000  # the most a slash command's text holds: Slack's message limit
WORST_INPUTS = {  # what froze everyone before: each once short, once as long as Slack allows
    "unknown flag": lambda n: "--" + "x" * n,
    "long model": lambda n: "--model " + "x" * n,
    "long quoted model": lambda n: f"--model '{'x ' * (n // 2)}'",
    "long bare key": lambda n: "k" * n,
    "many words": lambda n: "k " * (n // 2),
    "many dashes": lambda n: "\u2014" * n,
    "unknown subcommand": lambda n: "r" * n,
}


@pytest.mark.parametrize("kind", WORST_INPUTS)
def test_parsing_work_is_bounded_and_linear_up_to_what_slack_sends(kind: str) -> None:
    """10x the text is at most about 10x the work, and the longest text Slack sends is parsed in well
    under a million lines of Python (a 40,000-character unknown flag once cost 12 million)."""
    make = WORST_INPUTS[kind]
    short, long = make(SLACK_TEXT_CHARS // 10), make(SLACK_TEXT_CHARS - 20)
    for parse, prefix in ((parse_run_args, ""), (parse_command, "run ")):
        small, large = python_lines_run(parse, prefix + short), python_lines_run(parse, prefix + long)
        assert large <= 12 * max(small, 100), f"{parse.__name__}: {small} lines, then {large}"
        assert large < 1_000_000, f"{parse.__name__}: {large} lines"


def test_the_grammar_gives_each_subcommand_one_usage_line() -> None:
    assert tuple(sub.name for sub in GRAMMAR) == SUBCOMMANDS and len(set(SUBCOMMANDS)) == len(SUBCOMMANDS)
    for sub in GRAMMAR:
        assert sub.usage.startswith(f"/csb {sub.name}") and sub.short.startswith(f"/csb {sub.name}")
        assert usage_of(f"{sub.name.upper()} whatever") == sub.usage and is_usage(sub.usage)
    assert usage_of("") == usage_of("--help") == usage_of("runn x") == COMMAND_USAGE
    assert usage_of("run --model m") == USAGE and not is_usage("quote paths with spaces")
    assert subcommand("rerun").short == "/csb rerun <run> [--only …]"
