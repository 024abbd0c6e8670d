"""CSB config names: which Harbor configs a run's lanes use and the BASELINE_MCP_TYPE each runs with.

CSB's harness speaks composite names (`mcp-remote-direct`); `configs/eval_matrix.json` speaks logical ones
(`sourcegraph_full`). Everything is normalised to composite names here so jobs folders match CSB's.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from bot.csb.json_file import MIB, UnreadableJson, read_json
from bot.domain.errors import InfraError, UserInputError
from bot.domain.spec import LanePlan, LaneRole, Mode

EVAL_MATRIX_PATH = "configs/eval_matrix.json"
EVAL_MATRIX_SIZE_LIMIT = 4 * MIB

BASELINE_DIRECT = "baseline-local-direct"
BASELINE_ARTIFACT = "baseline-local-artifact"

# Composite name → BASELINE_MCP_TYPE, as CSB's `config_to_mcp_type`.
MCP_TYPES: Mapping[str, str] = {
    BASELINE_DIRECT: "none",
    BASELINE_ARTIFACT: "none",
    "mcp-remote-direct": "sourcegraph_full",
    "mcp-scip-remote-direct": "sourcegraph_full",
    "mcp-remote-artifact": "artifact_full",
}

_LEGACY: Mapping[str, str] = {
    "sourcegraph_full": "mcp-remote-direct",
    "artifact_full": "mcp-remote-artifact",
}

# eval_matrix logical name → composite name.
_MATRIX: Mapping[str, str] = {
    "baseline": BASELINE_DIRECT,
    "sourcegraph_full": "mcp-remote-direct",
    "sourcegraph_scip": "mcp-scip-remote-direct",
}

_HINT = "pass --full-config with one of the accepted values"


def load_eval_matrix(repo: Path) -> dict[str, Any] | None:
    """The checkout's config registry, or None when it has none (older checkouts)."""
    path = repo / EVAL_MATRIX_PATH
    try:
        data = read_json(path, EVAL_MATRIX_SIZE_LIMIT)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise InfraError(f"cannot read {EVAL_MATRIX_PATH}: {exc}") from exc
    except UnreadableJson as exc:
        raise InfraError(f"{EVAL_MATRIX_PATH} {exc}") from exc
    if not isinstance(data, dict):
        raise InfraError(f"{EVAL_MATRIX_PATH} is not a JSON object")
    return data


def accepted_full_configs(eval_matrix: Mapping[str, Any] | None) -> list[str]:
    """Every name `--full-config` takes, sorted: MCP composite, legacy and mapped eval_matrix names."""
    names = {name for name, mcp_type in MCP_TYPES.items() if mcp_type != "none"}
    names.update(_LEGACY)
    for name in _matrix_names(eval_matrix):
        composite = _composite(name, eval_matrix)
        if composite is not None and _is_mcp(composite):
            names.add(name)
    return sorted(names)


def full_config_name(name: str, eval_matrix: Mapping[str, Any] | None) -> str:
    """The composite name of the MCP lane's config; UserInputError listing the accepted values otherwise.

    Baseline configs are refused here: `--full-config` names the MCP side, and a "pair" of two baselines
    would measure nothing.
    """
    composite = _composite(name, eval_matrix)
    if composite is not None and _is_mcp(composite):
        return composite
    accepted = ", ".join(accepted_full_configs(eval_matrix))
    what = "is a baseline config, not an MCP one" if composite else "is not a known config"
    raise UserInputError(f"`{name}` {what}; accepted full configs: {accepted}", hint=_HINT)


def baseline_config_for(full_config: str) -> str:
    """The baseline that pairs with a composite full config: artifact pairs with artifact (CSB's rule)."""
    return BASELINE_ARTIFACT if full_config.endswith("-artifact") else BASELINE_DIRECT


def lane_plans(full_config: str, mode: Mode, eval_matrix: Mapping[str, Any] | None) -> tuple[LanePlan, ...]:
    """The lanes of every task, baseline first as CSB starts them; one lane in the single-config modes."""
    mcp_config = full_config_name(full_config, eval_matrix)
    baseline_config = baseline_config_for(mcp_config)
    baseline = LanePlan(role=LaneRole.BASELINE, config=baseline_config, mcp_type=MCP_TYPES[baseline_config])
    mcp = LanePlan(role=LaneRole.MCP, config=mcp_config, mcp_type=MCP_TYPES[mcp_config])
    if mode is Mode.BASELINE_ONLY:
        return (baseline,)
    if mode is Mode.FULL_ONLY:
        return (mcp,)
    return (baseline, mcp)


def _composite(name: str, eval_matrix: Mapping[str, Any] | None) -> str | None:
    if name in MCP_TYPES:
        return name
    if name in _LEGACY:
        return _LEGACY[name]
    if name in _matrix_names(eval_matrix):
        return _MATRIX.get(name) or _declared_composite(name, eval_matrix)
    return None


def _declared_composite(name: str, eval_matrix: Mapping[str, Any] | None) -> str | None:
    """A matrix entry may name its composite itself (`sourcegraph_scip.composite_name`)."""
    definitions = (eval_matrix or {}).get("config_definitions")
    entry = definitions.get(name) if isinstance(definitions, Mapping) else None
    declared = entry.get("composite_name") if isinstance(entry, Mapping) else None
    return declared if declared in MCP_TYPES else None


def _matrix_names(eval_matrix: Mapping[str, Any] | None) -> set[str]:
    if not eval_matrix:
        return set()
    definitions = eval_matrix.get("config_definitions")
    names = set(definitions) if isinstance(definitions, Mapping) else set()
    supported = eval_matrix.get("supported_configs")
    if isinstance(supported, list):
        names.update(name for name in supported if isinstance(name, str))
    return names


def _is_mcp(composite: str) -> bool:
    return MCP_TYPES[composite] != "none"
