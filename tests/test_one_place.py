"""Each idea written once, checked by reading the source: the groups of run and request states only in
`domain/states.py`, outbox targets never built or taken apart by hand outside `domain/outbox_keys.py`,
the notifier changing no request, and Slack-facing errors answered only at the one boundary."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from bot.domain.outbox_keys import Topic

BOT = Path(__file__).resolve().parents[1] / "bot"
STATE_ENUMS = frozenset({"RunState", "RequestState"})


def sources() -> Iterator[tuple[str, ast.Module]]:
    for path in sorted(BOT.rglob("*.py")):
        yield str(path.relative_to(BOT.parent)), ast.parse(path.read_text(), str(path))


def _is_state(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in STATE_ENUMS
    )


def state_groups(tree: ast.Module) -> list[int]:
    """Lines with a literal tuple, list or set of two or more states: a group written by hand."""
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Tuple | ast.List | ast.Set)
        and len(node.elts) > 1
        and all(_is_state(element) for element in node.elts)
    ]


def test_groups_of_states_are_written_only_in_domain_states() -> None:
    found = {name: lines for name, tree in sources() if (lines := state_groups(tree))}
    assert set(found) == {"bot/domain/states.py"}, found


def _starts_with_topic(node: ast.expr) -> bool:
    first = node.values[0] if isinstance(node, ast.JoinedStr) and node.values else node
    text = first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else ""
    return any(text.startswith(f"{topic.value}:") for topic in Topic)


def hand_made_keys(tree: ast.Module) -> list[int]:
    """A `target=` given as a string starting `<topic>:`, or a target taken apart with str methods."""
    lines = []
    for node in ast.walk(tree):
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
    hand = ast.parse("enqueue(target=f'card:{n}')\nitem.target.split(':')\nx = (RunState.A, RunState.B)")
    assert hand_made_keys(hand) == [1, 2] and state_groups(hand) == [3]
    fine = ast.parse("enqueue(target=outbox_keys.card(n))\nActionsBlock(block_id=f'home:{n}')\n(RunState.A,)")
    assert hand_made_keys(fine) == [] and state_groups(fine) == []


def called(tree: ast.Module) -> set[str]:
    """`module.function` of every call made through a module name (`requests.decide(…)`)."""
    return {
        f"{node.func.value.id}.{node.func.attr}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
    }


def imports(tree: ast.Module) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


def test_the_notifier_delivers_and_changes_no_request() -> None:
    trees = dict(sources())
    for module in ("notifier", "senders", "posting", "followups", "pacing", "delivery"):
        tree = trees[f"bot/slack/{module}.py"]
        assert not {"bot.store.audit", "bot.store.approvals"} & imports(tree), module
        assert not {call for call in called(tree) if call.startswith("audit.") or call.endswith(".decide")}
    assert "bot.services.requests.withdraw_unpostable" in imports(trees["bot/slack/notifier.py"])


def test_slack_errors_become_replies_only_at_the_boundary() -> None:
    """`except Exception` in slack/: the boundary itself, and delivery rounds that must outlive a row."""
    allowed = {"bot/slack/errors.py", "bot/slack/notifier.py", "bot/slack/followups.py"}
    catching = {
        name
        for name, tree in sources()
        if name.startswith("bot/slack/")
        for node in ast.walk(tree)
        if isinstance(node, ast.ExceptHandler)
        and isinstance(node.type, ast.Name)
        and node.type.id == "Exception"
    }
    assert catching <= allowed, catching - allowed
