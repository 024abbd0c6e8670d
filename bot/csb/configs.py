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

# The 14 names CSB's `validate_config_name` accepts, each with its `config_to_mcp_type` value. A lane's
# jobs folder is named by the name given (a legacy `sourcegraph_full` run writes `…/sourcegraph_full/`),
# as the harness names it.
MCP_TYPES: Mapping[str, str] = {
    BASELINE_DIRECT: "none",
    BASELINE_ARTIFACT: "none",
    "baseline": "none",
    "none": "none",
    "mcp-remote-direct": "sourcegraph_full",
    "mcp-scip-remote-direct": "sourcegraph_full",
    "sourcegraph_full": "sourcegraph_full",
    "mcp-remote-artifact": "artifact_full",
    "mcp-scip-remote-artifact": "artifact_full",
    "artifact_full": "artifact_full",
    "augment-remote-direct": "augment_remote",
    "augment-remote-artifact": "augment_remote",
    "augment-local-direct": "augment_local",
    "github-remote-direct": "github_remote",
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
    """Every name `--full-config` takes, sorted: CSB's accepted names that are not baselines.

    The eval_matrix's logical names (`sourcegraph_scip`, `sg_only_env`, …) are not among them: CSB's
    harness refuses them, so a run the bot starts under such a name is one CSB could not have started.
    """
    return sorted(name for name, mcp_type in MCP_TYPES.items() if mcp_type != "none")


def full_config_name(name: str, eval_matrix: Mapping[str, Any] | None) -> str:
    """The MCP lane's config, as given; UserInputError listing the accepted values otherwise.

    Baseline configs, which CSB's harness would take, are refused here: `--full-config` names the MCP
    side, and a "pair" of two baselines would measure nothing.
    """
    if name in MCP_TYPES and MCP_TYPES[name] != "none":
        return name
    accepted = ", ".join(accepted_full_configs(eval_matrix))
    what = "is a baseline config, not an MCP one" if name in MCP_TYPES else "is not a config CSB accepts"
    raise UserInputError(f"`{name}` {what}; accepted full configs: {accepted}", hint=_HINT)


def baseline_config_for(full_config: str) -> str:
    """CSB's `baseline_config_for`: an artifact full config pairs with the artifact baseline."""
    artifact = full_config.endswith("-artifact") or full_config == "artifact_full"
    return BASELINE_ARTIFACT if artifact else BASELINE_DIRECT


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
