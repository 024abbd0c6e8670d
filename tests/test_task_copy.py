"""Which Dockerfile each lane runs, and the task copy that swaps it in, as CSB's harness does it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bot.csb.paths import LaunchPaths
from bot.csb.task_copy import copy_path, lane_task_path, lane_variant, remove_copy, variant_problems
from bot.csb.task_file import harbor_budget


@pytest.mark.parametrize(
    ("role", "config", "required", "swapped", "prefix"),
    [
        ("baseline", "baseline-local-direct", "Dockerfile", None, ""),
        (
            "baseline",
            "baseline-local-artifact",
            "Dockerfile.artifact_baseline",
            "Dockerfile.artifact_baseline",
            "bl_",
        ),
        ("mcp", "mcp-remote-direct", "Dockerfile.sg_only", "Dockerfile.sg_only", "mcp_"),
        ("mcp", "sourcegraph_full", "Dockerfile.sg_only", "Dockerfile.sg_only", "mcp_"),
        ("mcp", "mcp-scip-remote-artifact", "Dockerfile.artifact_only", "Dockerfile.artifact_only", "mcp_"),
        ("mcp", "artifact_full", "Dockerfile.artifact_only", "Dockerfile.artifact_only", "mcp_"),
        ("mcp", "augment-local-direct", "Dockerfile", "Dockerfile.sg_only", "mcp_"),  # sg_only when present
    ],
)
def test_lane_variant_is_the_harness_rule(
    role: str, config: str, required: str, swapped: str | None, prefix: str
) -> None:
    variant = lane_variant(role, config)
    assert (variant.required, variant.swapped, variant.prefix) == (required, swapped, prefix)


def _task(root: Path, *dockerfiles: str) -> str:
    folder = root / "benchmarks" / "tasks" / "s" / "Task-001"
    (folder / "environment").mkdir(parents=True)
    (folder / "instruction.md").write_text("Fix it.\n")
    for name in dockerfiles:
        (folder / "environment" / name).write_text(f"FROM x # {name}\n")
    return "benchmarks/tasks/s/Task-001"


def test_the_copy_is_named_as_mktemp_names_it_lower_cased_and_swaps_the_variant(tmp_path: Path) -> None:
    task = _task(tmp_path, "Dockerfile", "Dockerfile.sg_only")
    copy = copy_path("mcp", "mcp-remote-direct", "Task-001", "7.abc", root=tmp_path / "tmp")
    assert re.fullmatch(r"mcp_task-001_[0-9a-f]{6}", copy.name)
    assert copy == copy_path("mcp", "mcp-remote-direct", "Task-001", "7.abc", root=tmp_path / "tmp")  # again
    (tmp_path / "tmp").mkdir()
    assert lane_task_path(LaunchPaths(tmp_path), task, "mcp", "mcp-remote-direct", copy) == str(copy)
    assert (copy / "environment" / "Dockerfile").read_text() == "FROM x # Dockerfile.sg_only\n"
    assert (copy / "instruction.md").is_file()
    original = lane_task_path(LaunchPaths(tmp_path), task, "baseline", "baseline-local-direct", copy)
    assert original == task  # the original
    remove_copy(copy)
    assert not copy.exists()
    remove_copy(tmp_path)  # never anything not named as a copy
    assert tmp_path.exists()


def test_variant_problems_name_what_is_missing(tmp_path: Path) -> None:
    task = _task(tmp_path, "Dockerfile")
    direct = [("baseline", "baseline-local-direct"), ("mcp", "mcp-remote-direct")]
    assert variant_problems(tmp_path, task, direct) == ["no environment/Dockerfile.sg_only"]
    assert variant_problems(tmp_path, task, direct[:1]) == []
    assert variant_problems(tmp_path, "benchmarks/tasks/s/gone", direct) == ["task folder missing"]
    (tmp_path / task / "instruction.md").write_text("No local repositories are pre-checked out.\n")
    artifact = [("baseline", "baseline-local-artifact"), ("mcp", "mcp-remote-artifact")]
    assert variant_problems(tmp_path, task, artifact) == [
        "no environment/Dockerfile.artifact_baseline",
        "instruction.md says 'No local repositories are pre-checked out.' (unfit for artifact mode)",
        "no environment/Dockerfile.artifact_only",
    ]


def test_harbor_budget_counts_build_and_verifier_twice_and_its_defaults() -> None:
    assert harbor_budget({}) == 2 * 600 + 360 + 600 + 2 * 600
    toml = {
        "environment": {"build_timeout_sec": 900.0},
        "agent": {"timeout_sec": 1800},
        "verifier": {"timeout_sec": 300},
    }
    assert harbor_budget(toml) == 2 * 900 + 360 + 1800 + 2 * 300
