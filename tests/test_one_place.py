"""Each idea written once, checked by reading the source: the groups of run, request and lane states only
in `domain/states.py`, outbox targets never built or taken apart by hand outside `domain/outbox_keys.py`,
the notifier changing no request, Slack-facing errors answered only at the one boundary, Harbor's
trial-folder rule only in `csb/trials.py`, one `backoff`, one function building a lane's argv, the
ETA chosen and worded in one place each, a child process's environment made only in `csb/child_env.py`,
Slack's words written by the views, not by the engine, the services or the store, and the `/csb` grammar
(subcommands, arguments, usage lines) written only in `domain/command_line.py`."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path

from bot.csb.verdicts import CATALOG
from bot.domain.outbox_keys import Topic

BOT = Path(__file__).resolve().parents[1] / "bot"
STATE_ENUMS = frozenset({"RunState", "RequestState", "LaneStatus"})


@cache
def _parsed() -> tuple[tuple[str, ast.Module], ...]:
    """Every module of the bot, parsed once for all the checks below."""
    paths = sorted(BOT.rglob("*.py"))
    return tuple(
        (str(path.relative_to(BOT.parent)), ast.parse(path.read_text(), str(path))) for path in paths
    )


def sources() -> Iterator[tuple[str, ast.Module]]:
    yield from _parsed()


@cache
def _nodes(tree: ast.Module) -> tuple[ast.AST, ...]:
    """Every node of a module, in `ast.walk`'s order, listed once: two dozen checks walk each module."""
    return tuple(ast.walk(tree))


def _is_state(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in STATE_ENUMS
    )


def _grouped(node: ast.AST) -> list[ast.expr]:
    """The elements of a literal collection, or the arguments of a call that is not a move (a move names
    two states, where from and where to, not a group)."""
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return node.elts
    return node.args if isinstance(node, ast.Call) and "mov" not in _name_of(node.func) else []


def state_groups(tree: ast.Module) -> list[int]:
    """Lines with a literal tuple, list or set of two or more states, or a call given two or more states
    (`lanes_in(A, B)`): a group written by hand."""
    return sorted(
        node.lineno
        for node in _nodes(tree)
        if len(elements := _grouped(node)) > 1 and all(_is_state(element) for element in elements)
    )


# None left: the report loader, which read CSB's files at report time, now reads the database only.
STATE_GROUPS_LEFT: set[str] = set()


def test_groups_of_states_are_written_only_in_domain_states() -> None:
    found = {name: lines for name, tree in sources() if (lines := state_groups(tree))}
    assert set(found) - STATE_GROUPS_LEFT == {"bot/domain/states.py"}, found


def _starts_with_topic(node: ast.expr) -> bool:
    first = node.values[0] if isinstance(node, ast.JoinedStr) and node.values else node
    text = first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else ""
    return any(text.startswith(f"{topic.value}:") for topic in Topic)


def hand_made_keys(tree: ast.Module) -> list[int]:
    """A `target=` given as a string starting `<topic>:`, or a target taken apart with str methods."""
    lines = []
    for node in _nodes(tree):
        if isinstance(node, ast.keyword) and node.arg == "target" and _starts_with_topic(node.value):
            lines.append(node.value.lineno)
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in {"split", "partition", "startswith", "endswith", "removeprefix"}
            and isinstance(node.func.value, ast.Attribute)
            and node.func.value.attr in {"target", "key"}
        ):
            lines.append(node.lineno)
    return sorted(lines)


def test_outbox_targets_are_built_and_read_only_by_outbox_keys() -> None:
    found = {name: lines for name, tree in sources() if (lines := hand_made_keys(tree))}
    assert found == {}, found


def test_the_checks_find_what_they_look_for() -> None:
    hand = ast.parse(
        "enqueue(target=f'card:{n}')\nitem.target.split(':')\nx = (RunState.A, RunState.B)\n"
        "s in {LaneStatus.ERRORED, LaneStatus.TIMEOUT}\nlanes_in(LaneStatus.QUEUED, LaneStatus.RUNNING)"
    )
    assert hand_made_keys(hand) == [1, 2] and state_groups(hand) == [3, 4, 5]
    fine = ast.parse(
        "enqueue(target=outbox_keys.card(n))\nActionsBlock(block_id=f'home:{n}')\n(RunState.A,)\n"
        "lanes_in(LaneStatus.RUNNING)\ns in UNSCORED_LANE_STATES\nf(LaneStatus.A, n)\n"
        "check_lane_move(LaneStatus.QUEUED, LaneStatus.RUNNING)"
    )
    assert hand_made_keys(fine) == [] and state_groups(fine) == []


def called(tree: ast.Module) -> set[str]:
    """`module.function` of every call made through a module name (`requests.decide(…)`)."""
    return {
        f"{node.func.value.id}.{node.func.attr}"
        for node in _nodes(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
    }


def imports(tree: ast.Module) -> set[str]:
    names = set()
    for node in _nodes(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


def test_the_notifier_delivers_and_changes_no_request() -> None:
    trees = dict(sources())
    for module in ("notifier", "senders", "posting", "followups", "pacing", "delivery"):
        tree = trees[f"bot/slack/outbound/{module}.py"]
        assert not {"bot.store.audit", "bot.store.approvals"} & imports(tree), module
        assert not {call for call in called(tree) if call.startswith("audit.") or call.endswith(".decide")}
    assert "bot.services.requests.withdraw_unpostable" in imports(trees["bot/slack/outbound/notifier.py"])


def catches_everything(tree: ast.Module) -> list[int]:
    return [
        node.lineno
        for node in _nodes(tree)
        if isinstance(node, ast.ExceptHandler)
        and isinstance(node.type, ast.Name)
        and node.type.id in {"Exception", "BaseException"}
    ]


def test_services_and_the_store_catch_only_database_errors() -> None:
    """Below the boundary an error is either the database being away (`DATABASE_ERRORS`, then
    `unavailable`) or a bug that travels up to the one place that answers it."""
    found = {
        name: lines
        for name, tree in sources()
        if name.startswith(("bot/services/", "bot/store/")) and (lines := catches_everything(tree))
    }
    assert found == {}, found


def test_slack_errors_become_replies_only_at_the_boundary() -> None:
    """`except Exception` in slack/: the boundary itself, and delivery rounds that must outlive a row."""
    allowed = {"bot/slack/errors.py", "bot/slack/outbound/notifier.py", "bot/slack/outbound/followups.py"}
    catching = {
        name
        for name, tree in sources()
        if name.startswith("bot/slack/")
        for node in _nodes(tree)
        if isinstance(node, ast.ExceptHandler)
        and isinstance(node.type, ast.Name)
        and node.type.id == "Exception"
    }
    assert catching <= allowed, catching - allowed


def trial_rule_copies(tree: ast.Module) -> list[int]:
    """Harbor's trial-folder rule written by hand: a `__<id>` pattern, a name taken apart at `__` or
    tested for it, or a cut to Harbor's 32 characters."""
    lines = []
    for node in _nodes(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and "__[" in node.value:
            lines.append(node.lineno)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args:
            first = node.args[0]
            if isinstance(first, ast.Constant) and first.value == "__":
                lines.append(node.lineno)
        if isinstance(node, ast.Compare) and isinstance(node.left, ast.Constant) and node.left.value == "__":
            lines.append(node.lineno)
        if isinstance(node, ast.Slice) and isinstance(node.upper, ast.Constant) and node.upper.value == 32:
            lines.append(node.lineno)
    return sorted(lines)


def test_harbors_trial_folder_rule_is_written_only_in_csb_trials() -> None:
    found = {name: lines for name, tree in sources() if (lines := trial_rule_copies(tree))}
    assert set(found) <= {"bot/csb/trials.py"}, found


def defined(tree: ast.Module, name: str) -> list[int]:
    return [
        node.lineno
        for node in _nodes(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name
    ]


def test_one_backoff_rule() -> None:
    found = {name: lines for name, tree in sources() if (lines := defined(tree, "backoff"))}
    assert list(found) == ["bot/domain/backoff.py"], found


def calls_of(tree: ast.Module, name: str) -> list[int]:
    """Calls of `name`, directly or through a module (`command.name(…)`)."""
    return [
        node.lineno
        for node in _nodes(tree)
        if isinstance(node, ast.Call)
        and (
            (isinstance(node.func, ast.Name) and node.func.id == name)
            or (isinstance(node.func, ast.Attribute) and node.func.attr == name)
        )
    ]


def test_the_lane_argv_is_built_by_one_function() -> None:
    """The engine, the dry run and `check`'s Harbor probe all call `lane_argv`; only it assembles Harbor's
    command."""
    found = {name for name, tree in sources() if calls_of(tree, "lane_command")}
    assert found == {"bot/csb/harbor_run.py"}, found
    users = {name for name, tree in sources() if calls_of(tree, "lane_argv")}
    assert users == {"bot/engine/lane_launch.py", "bot/slack/views/replies.py", "bot/csb/harbor_probe.py"}, (
        users
    )


def reads(tree: ast.Module, names: set[str]) -> list[int]:
    return [
        node.lineno
        for node in _nodes(tree)
        if (isinstance(node, ast.Attribute) and node.attr in names)
        or (isinstance(node, ast.Name) and node.id in names)
    ]


def test_the_eta_rule_is_written_once() -> None:
    """Which figure is the ETA (`QueueFigures.eta_sec`), and which states have one and how it reads
    (`eta_text`): nowhere else picks between the two figures or tests the states."""
    figures = {name for name, tree in sources() if reads(tree, {"start_eta_sec", "finish_eta_sec"})}
    assert figures == {"bot/store/queue.py"}, figures
    states = {name for name, tree in sources() if reads(tree, {"RUN_STATES_WITH_ETA"})}
    assert states == {"bot/domain/states.py", "bot/slack/views/run_card.py"}, states


def fingerprint_ids(tree: ast.Module) -> list[int]:
    """Lines naming one of CSB's error fingerprints by its id in a string (`timeout` is also a lane status
    and a stop kind, so it is not looked for)."""
    ids = {entry.id for entry in CATALOG} - {"timeout"}
    return [node.lineno for node in _nodes(tree) if isinstance(node, ast.Constant) and node.value in ids]


def test_csbs_fingerprints_are_written_only_in_csb_verdicts_fingerprints() -> None:
    """The twelve patterns, their order, labels, advice and the catalog's retry flags are one table;
    everything else (retries, rests, causes, reruns) goes by its entries."""
    found = {name: lines for name, tree in sources() if (lines := fingerprint_ids(tree))}
    assert set(found) == {"bot/csb/verdicts/fingerprints.py"}, found
    assert fingerprint_ids(ast.parse("if f.id == 'api_rate_limit': rest()")) == [1]


def test_the_new_checks_find_what_they_look_for() -> None:
    hand = ast.parse(
        "T = re.compile(r'.+__[A-Za-z0-9]{7}$')\nname.rsplit('__', 1)\n'__' in name\ncut = task[:32]\n"
        "def backoff(n): return 2 ** n\nlane_command('harbor', 'p', 'm', 'j')\nf.start_eta_sec"
    )
    assert trial_rule_copies(hand) == [1, 2, 3, 4]
    assert defined(hand, "backoff") == [5]
    assert calls_of(hand, "lane_command") == [6] and reads(hand, {"start_eta_sec"}) == [7]
    fine = ast.parse("is_trial_folder(name)\njob = f'csb_r{run}'\nx = name[:8]\nbackoff(n, base=1, cap=2)")
    assert trial_rule_copies(fine) == [] and defined(fine, "backoff") == []


CHILD_ENV_HOME = "bot/csb/child_env.py"
# Calls that start a process (or a Ray job) and take its environment.
SPAWNERS = frozenset(
    {
        "run",
        "Popen",
        "call",
        "check_call",
        "check_output",
        "create_subprocess_exec",
        "create_subprocess_shell",
    }
    | {"JobSubmission", "execve", "execvpe", "spawnve", "spawnvpe", "posix_spawn", "posix_spawnp"}
)


def _os_environ(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and node.attr == "environ"
        and isinstance(node.value, ast.Name)
        and node.value.id == "os"
    )


def _name_of(func: ast.expr) -> str:
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def _through_spawn_env(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Call) and _name_of(n.func) == "spawn_env" for n in ast.walk(node))


# The bot's own process starts children with these; one without `env=` would inherit all of its secrets.
PROCESS_STARTERS = frozenset(
    {("subprocess", name) for name in ("run", "Popen", "call", "check_call", "check_output")}
    | {("asyncio", "create_subprocess_exec"), ("asyncio", "create_subprocess_shell")}
)
# Runs inside a lane's Ray job, whose environment is already the lane's: its child inherits that.
INSIDE_THE_JOB = "bot/rayjobs/lane_wrapper.py"


def inheriting_spawns(tree: ast.Module) -> list[int]:
    """A process started without `env=`: it would get the bot's whole environment."""
    return [
        node.lineno
        for node in _nodes(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and (node.func.value.id, node.func.attr) in PROCESS_STARTERS
        and not any(kw.arg == "env" for kw in node.keywords)
    ]


def child_env_builders(tree: ast.Module) -> list[int]:
    """A child's environment made by hand: the bot's own copied (`dict(os.environ)`, `os.environ.copy()`,
    `{**os.environ}`), a process or Ray job given an environment not made by `spawn_env`, or a
    `ChildEnv` made directly."""
    lines = set()
    for node in _nodes(tree):
        if isinstance(node, ast.Dict) and any(
            k is None and _os_environ(v) for k, v in zip(node.keys, node.values, strict=True)
        ):
            lines.add(node.lineno)
        if not isinstance(node, ast.Call):
            continue
        name = _name_of(node.func)
        if name == "dict" and any(_os_environ(arg) for arg in node.args):
            lines.add(node.lineno)
        if name == "copy" and isinstance(node.func, ast.Attribute) and _os_environ(node.func.value):
            lines.add(node.lineno)
        if name == "ChildEnv":
            lines.add(node.lineno)
        if name in SPAWNERS:
            given = [kw.value for kw in node.keywords if kw.arg in ("env", "env_vars")]
            given += node.args[2:] if name.startswith(("exec", "spawn", "posix_spawn")) else []
            lines.update(value.lineno for value in given if not _through_spawn_env(value))
    return sorted(lines)


def test_a_childs_environment_is_made_only_in_csb_child_env() -> None:
    """The allow-list is the one rule for every process the bot starts: nothing else copies the bot's
    environment, and every spawn takes a `ChildEnv` through `spawn_env`."""
    found = {
        name: lines
        for name, tree in sources()
        if name != CHILD_ENV_HOME and (lines := child_env_builders(tree))
    }
    assert found == {}, found
    inheriting = {name: lines for name, tree in sources() if (lines := inheriting_spawns(tree))}
    assert set(inheriting) <= {INSIDE_THE_JOB}, inheriting


def test_the_child_env_check_finds_what_it_looks_for() -> None:
    planted = ast.parse(
        "subprocess.run(a, env=dict(os.environ))\nenv = os.environ.copy()\nx = {**os.environ, 'A': '1'}\n"
        "subprocess.Popen(a, env=launch.env)\nJobSubmission(submission_id=i, env_vars=env)\n"
        "ChildEnv(environ, allowed, {}, frozenset())\nos.execve(path, argv, environ)\n"
        "await asyncio.create_subprocess_exec(*argv, env={k: v for k, v in env.items() if k != 'X'})"
    )
    assert child_env_builders(planted) == [1, 2, 3, 4, 5, 6, 7, 8]
    fine = ast.parse(
        "subprocess.run(a, env=spawn_env(child))\nJobSubmission(env_vars=ray_env(spawn_env(e), 3))\n"
        "os.environ.get('HOME')\nchecks.run(spec)\ndefault_parallel(3, daytona=False, env=environ)"
    )
    assert child_env_builders(fine) == []
    spawns = ast.parse(
        "subprocess.run(argv, cwd=repo)\nasyncio.create_subprocess_exec(*argv)\nasyncio.run(main())"
    )
    assert inheriting_spawns(spawns) == [1, 2]
    assert inheriting_spawns(ast.parse("subprocess.run(argv, env=spawn_env(child))")) == []


_READS = frozenset({"read_text", "read_bytes", "open"})


def test_csb_reads_checkout_files_only_through_regular_file() -> None:
    """A file of the checkout may be a FIFO (its open waits forever) or a link to a device (its read never
    ends): `bot/csb` reads only through `regular_file` (or `json_file`, which uses it)."""
    found = [
        f"{name}:{node.lineno}"
        for name, tree in sources()
        if name.startswith("bot/csb/") and name != "bot/csb/regular_file.py"
        for node in _nodes(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in _READS
        and not (isinstance(node.func.value, ast.Name) and node.func.value.id == "os")
    ]
    assert found == [], found


SLACK_LIMITS_HOME = "bot/domain/slack_limits.py"
# Numbers that in this code mean only one of Slack's limits (a section's or a URL's 3000 characters, a
# field's or a label's 2000, a message's 40,000).
SLACK_ONLY_NUMBERS = frozenset({2000, 3000, 40_000})
_SLACK_PLACES = ("BLOCKS", "SECTION", "HEADER")


def slack_limit_copies(tree: ast.Module) -> list[int]:
    """One of Slack's limits written again: a number only Slack's limits use (a port aside), or a constant
    named for blocks, sections or headers given a number of its own."""
    ports = {
        id(node.value)
        for node in _nodes(tree)
        if isinstance(node, ast.Assign)
        and all(isinstance(t, ast.Name) and t.id.endswith("PORT") for t in node.targets)
    }
    lines = [
        node.lineno
        for node in _nodes(tree)
        if isinstance(node, ast.Constant)
        and type(node.value) is int
        and node.value in SLACK_ONLY_NUMBERS
        and id(node) not in ports
    ]
    lines += [
        node.lineno
        for node in _nodes(tree)
        if isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Constant)
        and type(node.value.value) is int
        and any(isinstance(t, ast.Name) and any(p in t.id for p in _SLACK_PLACES) for t in node.targets)
    ]
    return sorted(lines)


def test_slacks_limits_are_written_only_in_domain_slack_limits() -> None:
    """The views cut to them and the playground's stand-in enforces them: one number for both."""
    found = {
        name: lines
        for name, tree in sources()
        if name != SLACK_LIMITS_HOME and (lines := slack_limit_copies(tree))
    }
    assert found == {}, found


def hand_cuts(tree: ast.Module) -> list[int]:
    """Text cut and marked by hand (`text[:n - 1] + "…"`, `f"{text[:n]}…"`) rather than by `clip`."""

    def ellipsis(node: ast.expr) -> bool:
        text = node.value if isinstance(node, ast.Constant) else None
        return (isinstance(text, str) and text.startswith("…")) or (
            isinstance(node, ast.Name) and node.id == "ELLIPSIS"
        )

    def sliced(node: ast.expr) -> bool:
        inner = node.value if isinstance(node, ast.FormattedValue) else node
        return isinstance(inner, ast.Subscript) and isinstance(inner.slice, ast.Slice)

    lines = []
    for node in _nodes(tree):
        if (
            isinstance(node, ast.BinOp)
            and isinstance(node.op, ast.Add)
            and sliced(node.left)
            and ellipsis(node.right)
        ):
            lines.append(node.lineno)
        if isinstance(node, ast.JoinedStr) and any(
            sliced(a) and ellipsis(b) for a, b in zip(node.values, node.values[1:], strict=False)
        ):
            lines.append(node.lineno)
    return sorted(lines)


CLIP_HOME = "bot/domain/mrkdwn.py"


def test_text_is_cut_only_through_clip() -> None:
    """One cut: never mid-entity or mid-`<…>` token, always marked with the same ellipsis."""
    found = {name: lines for name, tree in sources() if name != CLIP_HOME and (lines := hand_cuts(tree))}
    assert set(found) <= CUTS_LEFT, found


# Worded by the engine's settling; the branch that moves those words into the views takes this cut along.
CUTS_LEFT = {"bot/engine/settle.py"}


def test_the_limit_and_cut_checks_find_what_they_look_for() -> None:
    planted = ast.parse(
        "text = clip(t, 3000)\nMAX_BLOCKS = 50\ndescribe(exc)[:2000]\nCOMMAND_CHARS = 40_000\n"
        "SECTION_CHARS = 2999\nx = t if len(t) <= n else t[: n - 1] + '…'\ny = f'{t[:n]}…'\n"
        "z = t[: n - 1] + ELLIPSIS"
    )
    assert slack_limit_copies(planted) == [1, 2, 3, 4, 5]
    assert hand_cuts(planted) == [6, 7, 8]
    fine = ast.parse(
        "DEFAULT_PORT = 3000\nclip(t, MAX_SECTION_TEXT)\nLANE_ROWS = 50\nx = clip(t, n)\nname[:8] + '-'\n"
        "f'{a}…'"
    )
    assert slack_limit_copies(fine) == [] and hand_cuts(fine) == []


def test_the_launch_and_the_dry_run_make_lane_variables_through_one_function() -> None:
    """What the dry run shows is what the engine sets: both call `lane_vars`, and only it makes a
    `LaneVars`."""
    makers = {name for name, tree in sources() if calls_of(tree, "LaneVars")}
    assert makers == {"bot/csb/lane_env.py"}, makers
    users = {name for name, tree in sources() if calls_of(tree, "lane_vars")}
    assert users == {"bot/engine/lane_launch.py", "bot/slack/views/replies.py"}, users
    assert calls_of(ast.parse("v = LaneVars(home=h, config=c)\nlanes.lane_vars(repo)"), "LaneVars") == [1]


ACCOUNT_HEALTH_HOME = "bot/csb/preflight.py"


def names_account_health_script(tree: ast.Module) -> list[int]:
    """A string naming CSB's account script's path, or its state file: a second way of asking it."""
    return [
        node.lineno
        for node in _nodes(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and ("/account_health.py" in node.value or "/account_health.json" in node.value)
    ]


def test_csbs_account_health_is_asked_by_one_reader() -> None:
    """The card, `/csb accounts` and the engine's ready homes all go through `preflight.account_health`."""
    found = {name for name, tree in sources() if names_account_health_script(tree)}
    assert found == {ACCOUNT_HEALTH_HOME}, found
    readers = {name for name, tree in sources() if calls_of(tree, "account_health")}
    assert readers == {ACCOUNT_HEALTH_HOME, "bot/services/checks.py", "bot/engine/dispatch.py"}, readers
    planted = ast.parse(
        "argv = [python, 'scripts/infra/account_health.py', 'preflight']\nx = 'account_health'"
    )
    assert names_account_health_script(planted) == [1]


# Slack's words: an emoji shortcode, a mention or link token, a code span. Only `bot/slack/views/` writes
# them; the engine, the services and the store queue typed events (`bot/domain/events.py`) instead.
_SHORTCODE = re.compile(r"(?<![\w:/]):[a-z0-9_+-]+:(?![\w/])")
# `<@` ends an f-string's text before the `{user}` it mentions, hence the `$`
_TOKEN = re.compile(r"<[@#]([A-Z]|$)|<!(channel|here|everyone|subteam|date)|<https?://")
NOT_SHORTCODES = frozenset({":memory:"})  # SQLite's in-memory database
WORDLESS_LAYERS = ("bot/engine/", "bot/services/", "bot/store/")
# (module, function): Slack words still written outside the views, each with why. A new one fails the test.
SLACK_WORDS_ALLOWED = {
    # The drift's words go to the audit trail (kept as text) as well as into the voided notice's event.
    ("bot/engine/pinning.py", "describe_drift"),
    # A check's blocking reason is kept in the request's checks and shown on the card as it is.
    ("bot/services/checks.py", "blocking_reasons"),
    # A refused click's answer, worded by the approvals service: it is kept in the audit trail too.
    ("bot/services/approvals.py", "_already_decided"),
    # An error's message, built a line before its `raise` (which spares the ones written in it).
    ("bot/services/control_args.py", "parse_resume_args"),
    # The schema's state for an operator at the command line, not for Slack.
    ("bot/store/db.py", "describe_revision"),
}


def _docstrings(tree: ast.Module) -> set[int]:
    bodies = [node for node in _nodes(tree) if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef)]
    bodies += [node for node in _nodes(tree) if isinstance(node, ast.AsyncFunctionDef)]
    return {
        id(node.body[0].value)
        for node in bodies
        if node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)
    }


def _not_for_slack(tree: ast.Module) -> set[int]:
    """Strings in a `raise` (an error's message: slack/errors.py is the one place that answers it) or a
    log call: neither is a message the bot composes for Slack, so a code span there is no Slack word."""
    spared: set[int] = set()
    for node in _nodes(tree):
        logs = (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id in {"log", "logger", "logging"}
        )
        if isinstance(node, ast.Raise) or logs:
            spared.update(id(inner) for inner in ast.walk(node))
    return spared


def slack_words(tree: ast.Module) -> list[tuple[str, int]]:
    """(function, line) of each string literal written in Slack's words, docstrings aside."""
    docs, spared = _docstrings(tree), _not_for_slack(tree)
    found = []
    functions = [node for node in _nodes(tree) if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)]
    for function in [tree, *functions]:
        name = getattr(function, "name", "")
        own = (node for child in ast.iter_child_nodes(function) for node in _outside_functions(child))
        for node in own:
            if not isinstance(node, ast.Constant) or not isinstance(node.value, str) or id(node) in docs:
                continue
            text = node.value
            codes = [code for code in _SHORTCODE.findall(text) if code not in NOT_SHORTCODES]
            code_span = "`" in text and text != "`" and id(node) not in spared  # a lone "`" is a character
            if codes or _TOKEN.search(text) or code_span:
                found.append((name, node.lineno))
    return found


def _outside_functions(node: ast.AST) -> Iterator[ast.AST]:
    """`node` and what it holds, short of a nested function (which is looked at on its own)."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return
    yield node
    for child in ast.iter_child_nodes(node):
        yield from _outside_functions(child)


def test_the_engine_services_and_store_write_no_slack_words() -> None:
    found = {
        f"{name}:{line}"
        for name, tree in sources()
        if name.startswith(WORDLESS_LAYERS)
        for function, line in slack_words(tree)
        if (name, function) not in SLACK_WORDS_ALLOWED
    }
    assert found == set(), found
    listed = {(name, function) for name, tree in sources() for function, _ in slack_words(tree)}
    assert listed >= SLACK_WORDS_ALLOWED, SLACK_WORDS_ALLOWED - listed  # an exception no longer needed


def test_the_slack_words_check_finds_what_it_looks_for() -> None:
    planted = ast.parse(
        "def f(run):\n"
        "    a = f':pause_button: Run #{run} is paused'\n"
        "    b = f'<@{user}> resumed'\n"
        "    c = 'then `/csb resume`'\n"
        "    d = '<https://x|here>'\n"
        "x = ':warning: top level'\n"
    )
    assert slack_words(planted) == [("", 6), ("f", 2), ("f", 3), ("f", 4), ("f", 5)]
    fine = ast.parse(
        'def g(n):\n    """Docstrings may say `this` and :this:."""\n'
        "    raise UserInputError(f'unexpected `{n}`')\n"
        "    log.warning('moved `%s` aside', n)\n"
        "    url = 'sqlite+aiosqlite:///:memory:'\n"
        "    t = f'{a}:{b}: 12:30:00 retry 3/5 after: rate limit'\n"
    )
    assert slack_words(fine) == []


GRAMMAR_HOME = "bot/domain/command_line.py"


COMMAND_LINE_START = re.compile(r"/csb(\s|$)")


def _logged(tree: ast.Module) -> set[int]:
    """Strings in a log call: the log names the command it reports on; it states no grammar."""
    return {
        id(inner)
        for node in _nodes(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id in {"log", "logger", "logging"}
        for inner in ast.walk(node)
    }


def grammar_copies(tree: ast.Module) -> list[int]:
    """A piece of the `/csb` grammar written outside its module: a string that starts as a command line
    does (a usage, an example, the command's own name; docstrings and logs aside), or a usage line
    given a name."""
    skipped = _docstrings(tree) | _logged(tree)
    lines = [
        node.lineno
        for node in _nodes(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and COMMAND_LINE_START.match(node.value)
        and id(node) not in skipped
    ]
    lines += [
        node.lineno
        for node in _nodes(tree)
        if isinstance(node, ast.Assign | ast.AnnAssign)
        for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
        if isinstance(target, ast.Name) and target.id.endswith(("USAGE", "USAGES"))
    ]
    return sorted(lines)


def test_the_csb_grammar_is_written_only_in_domain_command_line() -> None:
    """The subcommands, their arguments and their usage lines: the router, help, the argument parsers and
    every error read them from one module, so a usage cannot say one thing and the parser another."""
    found = {
        name: lines for name, tree in sources() if name != GRAMMAR_HOME and (lines := grammar_copies(tree))
    }
    assert found == {}, found


def test_the_grammar_check_finds_what_it_looks_for() -> None:
    planted = ast.parse(
        '"""`/csb run` in a docstring is prose."""\nRESUME_USAGE = "/csb resume <run>"\n'
        'USAGES: dict[str, str] = {}\n@app.command("/csb")\ndef f(name):\n    return f"/csb {name}"\n'
        'hint = "`/csb help run` lists the flags"\nlog.info("/csb by %s", user)\nPATH = f"{DIR}/csb-v2.json"'
    )
    assert grammar_copies(planted) == [2, 2, 3, 4, 6]


def test_matplotlib_and_the_drawing_process_each_have_one_home() -> None:
    """Charts are drawn in `views/charts.py` alone, and only `slack/drawing.py` starts the process that
    draws them (a second pool would be a second process nobody ends)."""
    plotting = {name for name, tree in sources() if any(i.startswith("matplotlib") for i in imports(tree))}
    pools = {name for name, tree in sources() if any("ProcessPoolExecutor" in i for i in imports(tree))}
    assert plotting == {"bot/slack/views/charts.py"}, plotting
    assert pools <= {"bot/slack/drawing.py"}, pools


def test_the_manifest_task_key_is_written_once() -> None:
    """CSB's MANIFEST key (`mcp_`/`bl_` copies, `CCX-`, `instance_ORG__REPO`) pairs both sides of every
    comparison: one function, `bot/domain/manifest_names.py`."""
    found = {
        name
        for name, tree in sources()
        for node in _nodes(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in {"ccx-", "CCX-"}
    }
    assert found == {"bot/domain/manifest_names.py"}, found
