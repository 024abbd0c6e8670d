"""Config names: every accepted `--full-config`, its paired baseline, and each lane's BASELINE_MCP_TYPE."""

from __future__ import annotations

from pathlib import Path

import pytest
from csb_tree import fixture_json, put

from bot.csb import accepted_full_configs, baseline_config_for, lane_plans, load_eval_matrix
from bot.domain.errors import InfraError, UserInputError
from bot.domain.spec import LanePlan, LaneRole, Mode

MATRIX = fixture_json("eval_matrix.json")

BASE_DIRECT = LanePlan(role=LaneRole.BASELINE, config="baseline-local-direct", mcp_type="none")
BASE_ARTIFACT = LanePlan(role=LaneRole.BASELINE, config="baseline-local-artifact", mcp_type="none")
MCP_DIRECT = LanePlan(role=LaneRole.MCP, config="mcp-remote-direct", mcp_type="sourcegraph_full")
MCP_SCIP = LanePlan(role=LaneRole.MCP, config="mcp-scip-remote-direct", mcp_type="sourcegraph_full")
MCP_ARTIFACT = LanePlan(role=LaneRole.MCP, config="mcp-remote-artifact", mcp_type="artifact_full")


def _mcp(config: str, mcp_type: str) -> LanePlan:
    return LanePlan(role=LaneRole.MCP, config=config, mcp_type=mcp_type)


# CSB's validate_config_name, config_to_mcp_type and baseline_config_for, for every non-baseline name.
PAIRS = {
    "mcp-remote-direct": (BASE_DIRECT, MCP_DIRECT),
    "mcp-scip-remote-direct": (BASE_DIRECT, MCP_SCIP),
    "mcp-remote-artifact": (BASE_ARTIFACT, MCP_ARTIFACT),
    "mcp-scip-remote-artifact": (BASE_ARTIFACT, _mcp("mcp-scip-remote-artifact", "artifact_full")),
    "augment-remote-direct": (BASE_DIRECT, _mcp("augment-remote-direct", "augment_remote")),
    "augment-remote-artifact": (BASE_ARTIFACT, _mcp("augment-remote-artifact", "augment_remote")),
    "augment-local-direct": (BASE_DIRECT, _mcp("augment-local-direct", "augment_local")),
    "github-remote-direct": (BASE_DIRECT, _mcp("github-remote-direct", "github_remote")),
    # Legacy names keep their name as the lane's folder, as the harness does.
    "sourcegraph_full": (BASE_DIRECT, _mcp("sourcegraph_full", "sourcegraph_full")),
    "artifact_full": (BASE_ARTIFACT, _mcp("artifact_full", "artifact_full")),
}


def test_the_table_covers_every_accepted_name() -> None:
    assert accepted_full_configs(MATRIX) == sorted(PAIRS)
    assert accepted_full_configs(None) == sorted(PAIRS)


@pytest.mark.parametrize(("name", "pair"), sorted(PAIRS.items()))
def test_paired_lanes(name: str, pair: tuple[LanePlan, LanePlan]) -> None:
    assert lane_plans(name, Mode.PAIRED, MATRIX) == pair


@pytest.mark.parametrize(("name", "pair"), sorted(PAIRS.items()))
def test_single_config_modes_keep_one_side_of_the_pair(name: str, pair: tuple[LanePlan, LanePlan]) -> None:
    assert lane_plans(name, Mode.BASELINE_ONLY, MATRIX) == (pair[0],)
    assert lane_plans(name, Mode.FULL_ONLY, MATRIX) == (pair[1],)


@pytest.mark.parametrize(
    ("full", "baseline"),
    [
        ("mcp-remote-artifact", "baseline-local-artifact"),
        ("mcp-scip-remote-artifact", "baseline-local-artifact"),
        ("mcp-remote-direct", "baseline-local-direct"),
        ("mcp-scip-remote-direct", "baseline-local-direct"),
    ],
)
def test_baseline_follows_the_full_config(full: str, baseline: str) -> None:
    assert baseline_config_for(full) == baseline


@pytest.mark.parametrize(
    "name", ["nonsense", "sourcegraph_scip", "sourcegraph_isolated", "github_full", "sg_only_env", ""]
)
def test_names_csb_refuses_are_refused_with_the_accepted_list(name: str) -> None:
    with pytest.raises(UserInputError) as caught:
        lane_plans(name, Mode.PAIRED, MATRIX)
    assert (
        caught.value.message
        == f"`{name}` is not a config CSB accepts; accepted full configs: " + ", ".join(sorted(PAIRS))
    )
    assert caught.value.hint


@pytest.mark.parametrize("name", ["baseline", "none", "baseline-local-direct", "baseline-local-artifact"])
def test_a_baseline_config_is_not_a_full_config(name: str) -> None:
    with pytest.raises(UserInputError, match="is a baseline config, not an MCP one; accepted full configs: "):
        lane_plans(name, Mode.PAIRED, MATRIX)


def test_a_matrix_entry_is_no_config_name_of_its_own() -> None:
    """CSB's harness never reads eval_matrix.json: its names are refused even with a composite_name."""
    matrix = {"config_definitions": {"scip_v2": {"composite_name": "mcp-scip-remote-direct"}}}
    with pytest.raises(UserInputError, match="not a config CSB accepts"):
        lane_plans("scip_v2", Mode.FULL_ONLY, matrix)
    assert "scip_v2" not in accepted_full_configs(matrix)


def test_load_eval_matrix(tmp_path: Path) -> None:
    assert load_eval_matrix(tmp_path) is None
    put(tmp_path, "configs/eval_matrix.json", "eval_matrix.json")
    assert load_eval_matrix(tmp_path) == MATRIX


@pytest.mark.parametrize("text", ["{not json", "[1, 2]"])
def test_unreadable_eval_matrix_is_an_infra_error(tmp_path: Path, text: str) -> None:
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "eval_matrix.json").write_text(text)
    with pytest.raises(InfraError, match=r"eval_matrix\.json"):
        load_eval_matrix(tmp_path)
