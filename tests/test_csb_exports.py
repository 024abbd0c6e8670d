"""Pins the public surface of `bot.csb`, so a rename is a deliberate change."""

from __future__ import annotations

import bot.csb


def test_exported_names() -> None:
    assert sorted(bot.csb.__all__) == [
        "AGENT_IMPORT_PATH",
        "AccountHealth",
        "AccountStatus",
        "CANONICAL_SUITE_FILE",
        "Catalog",
        "DEFAULT_SELECTION_FILE",
        "DEFAULT_TIMEOUT_MULTIPLIER",
        "EVAL_MATRIX_PATH",
        "Finding",
        "LaneVars",
        "MCP_TYPES",
        "PreflightCheck",
        "PreflightReport",
        "SUITES_DIR",
        "TaskFile",
        "accepted_full_configs",
        "account_health",
        "baseline_config_for",
        "batch_env",
        "counterpart_config",
        "find_trial_result",
        "full_config_name",
        "job_name",
        "jobs_dir",
        "lane_command",
        "lane_env",
        "lane_outcome",
        "lane_plans",
        "load_eval_matrix",
        "missing_counterparts",
        "model_short",
        "parse_task_file",
        "read_log_tail",
        "read_trial",
        "run_dir_name",
        "run_preflight",
        "shell_line",
        "task_folder",
        "trial_usage",
    ]
    assert all(hasattr(bot.csb, name) for name in bot.csb.__all__)
