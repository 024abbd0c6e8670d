"""Everything that knows CSB's files: task files, config names, the lane command, and trial results."""

from typing import TYPE_CHECKING

from bot.csb.lane_env import LaneVars, batch_env, lane_env  # `lane_env` also names its module
from bot.domain.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from bot.csb.catalog import CANONICAL_SUITE_FILE, DEFAULT_SELECTION_FILE, SUITES_DIR, Catalog
    from bot.csb.configs import (
        EVAL_MATRIX_PATH,
        MCP_TYPES,
        accepted_full_configs,
        baseline_config_for,
        full_config_name,
        lane_plans,
        load_eval_matrix,
    )
    from bot.csb.counterparts import counterpart_config, missing_counterparts
    from bot.csb.harbor_run import (
        AGENT_IMPORT_PATH,
        DEFAULT_TIMEOUT_MULTIPLIER,
        job_name,
        jobs_dir,
        lane_command,
        model_short,
        run_dir_name,
        shell_line,
    )
    from bot.csb.preflight import (
        AccountHealth,
        AccountStatus,
        Finding,
        PreflightCheck,
        PreflightReport,
        account_health,
        run_preflight,
    )
    from bot.csb.results import find_trial_result, lane_outcome, read_log_tail, read_trial, trial_usage
    from bot.csb.task_file import TaskFile, parse_task_file, task_folder

__all__ = [
    "AGENT_IMPORT_PATH",
    "CANONICAL_SUITE_FILE",
    "DEFAULT_SELECTION_FILE",
    "DEFAULT_TIMEOUT_MULTIPLIER",
    "EVAL_MATRIX_PATH",
    "MCP_TYPES",
    "SUITES_DIR",
    "AccountHealth",
    "AccountStatus",
    "Catalog",
    "Finding",
    "LaneVars",
    "PreflightCheck",
    "PreflightReport",
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
# Loaded on first use: the settings read `bot.csb.child_env` and `harbor_run` without the catalog,
# the preflight and the results (`csb-bot db` needs none of them).
__getattr__ = lazy_exports(
    __name__,
    {
        "bot.csb.catalog": ("CANONICAL_SUITE_FILE", "DEFAULT_SELECTION_FILE", "SUITES_DIR", "Catalog"),
        "bot.csb.configs": (
            "EVAL_MATRIX_PATH",
            "MCP_TYPES",
            "accepted_full_configs",
            "baseline_config_for",
            "full_config_name",
            "lane_plans",
            "load_eval_matrix",
        ),
        "bot.csb.counterparts": ("counterpart_config", "missing_counterparts"),
        "bot.csb.harbor_run": (
            "AGENT_IMPORT_PATH",
            "DEFAULT_TIMEOUT_MULTIPLIER",
            "job_name",
            "jobs_dir",
            "lane_command",
            "model_short",
            "run_dir_name",
            "shell_line",
        ),
        "bot.csb.preflight": (
            "AccountHealth",
            "AccountStatus",
            "Finding",
            "PreflightCheck",
            "PreflightReport",
            "account_health",
            "run_preflight",
        ),
        "bot.csb.results": (
            "find_trial_result",
            "lane_outcome",
            "read_log_tail",
            "read_trial",
            "trial_usage",
        ),
        "bot.csb.task_file": ("TaskFile", "parse_task_file", "task_folder"),
    },
)
