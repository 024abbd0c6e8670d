"""A lane's reason is stored as fields (`bot.domain.reason`) and never parsed back: no module of the bot
splits, cuts or searches a reason string, and only the views join its parts into words (`; log: `).
Checked by reading the source, and shown to catch planted violations."""

from __future__ import annotations

import ast
from pathlib import Path

BOT = Path(__file__).resolve().parents[1] / "bot"
MIGRATIONS = "bot/store/migrations/"  # 0006 carries old joined reasons over into fields, once
VIEWS = "bot/slack/views/"
SEPARATOR = "; log: "
_TAKING_APART = frozenset(
    {"split", "rsplit", "partition", "rpartition", "startswith", "endswith", "removeprefix", "removesuffix"}
    | {"find", "rfind", "index", "rindex", "count", "search", "match", "fullmatch", "findall", "finditer"}
)


def _is_reason(node: ast.expr) -> bool:
    """`reason`, `x.reason`, `x.reason or ""` and the like: an expression that is a reason string."""
    if isinstance(node, ast.BoolOp):
        return any(_is_reason(value) for value in node.values)
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    return name in {"reason", "log_line"} or name.endswith("_reason")


def reasons_taken_apart(tree: ast.Module) -> list[int]:
    """Lines where a reason is cut or searched: a str method on it, a pattern run over it, `in` it."""
    lines = []
    for node in ast.walk(tree):
        cut = (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in _TAKING_APART
            and (_is_reason(node.func.value) or any(_is_reason(arg) for arg in node.args))
        )
        searched = isinstance(node, ast.Compare) and any(
            isinstance(op, ast.In | ast.NotIn) and _is_reason(right)
            for op, right in zip(node.ops, node.comparators, strict=True)
        )
        if cut or searched:
            lines.append(node.lineno)
    return sorted(lines)


def separators(tree: ast.Module) -> list[int]:
    """Lines with the old joined-reason separator in a string."""
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and SEPARATOR in node.value
    ]


def _modules() -> list[tuple[str, ast.Module]]:
    paths = sorted(BOT.rglob("*.py"))
    found = [(str(path.relative_to(BOT.parent)), path) for path in paths]
    return [
        (name, ast.parse(path.read_text(), name)) for name, path in found if not name.startswith(MIGRATIONS)
    ]


# Not a lane's reason: what a user typed after `/csb cancel`, its whitespace tidied before it is recorded.
TYPED = {"bot/services/run_control.py": 'reason = " ".join(reason.split())'}


def test_no_module_takes_a_reason_string_apart() -> None:
    found = {}
    for name, tree in _modules():
        source = (BOT.parent / name).read_text().splitlines()
        lines = [line for line in reasons_taken_apart(tree) if source[line - 1].strip() != TYPED.get(name)]
        if lines:
            found[name] = lines
    assert found == {}, found


def test_only_the_views_join_a_reason_with_its_log() -> None:
    found = {name: lines for name, tree in _modules() if (lines := separators(tree))}
    assert set(found) <= {f"{VIEWS}lane_reason.py"}, found


def test_the_checks_catch_planted_violations() -> None:
    planted = {
        'head, _, line = lane.reason.partition("; log: ")': (1, 1),
        'if (outcome.reason or "").startswith("no trial"): pass': (1, 0),
        'found = PATTERN.search(outcome.reason or "")': (1, 0),
        'if "429" in stop_reason: pass': (1, 0),
        'reason = f"{message}; log: {line}"': (0, 1),
    }
    for source, (apart, joined) in planted.items():
        tree = ast.parse(source)
        assert (len(reasons_taken_apart(tree)), len(separators(tree))) == (apart, joined), source
    fine = 'reason = LaneReason(message=text, log_line=line)\nwords = reason_words(result)\nx = reason or "y"'
    assert reasons_taken_apart(ast.parse(fine)) == [] and separators(ast.parse(fine)) == []
