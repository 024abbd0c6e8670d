"""CSB's verdicts on one trial, each the rule of the CSB tool its module is named after."""

from bot.csb.verdicts.config_names import is_mcp_config
from bot.csb.verdicts.fingerprints import AUTO_RETRY, CATALOG, IDS, fingerprint_error
from bot.csb.verdicts.lane_verdict import is_trial_record, judge_trial

__all__ = [
    "AUTO_RETRY",
    "CATALOG",
    "IDS",
    "fingerprint_error",
    "is_mcp_config",
    "is_trial_record",
    "judge_trial",
]
