"""Agent stand-in for csb-bot's example bench. This is NOT CSB's agent and calls no model.

CSB's harness runs Harbor with `--agent-import-path agents.claude_baseline_agent:BaselineClaudeCodeAgent`,
which Harbor can import only when the checkout is on PYTHONPATH. This module sits at the same import path,
so a lane started without PYTHONPATH=<checkout> fails before any trial, as it would on a real checkout.

Which class answers depends on the Harbor that imports it:
- under the bench's own `bin/harbor` (no Harbor installed), the lane check of `harness.lane_check`;
  `bin/harbor` plays the scripted agent and the verifier itself;
- under real Harbor, the Harbor agent of `harness.harbor_agent`, which runs the same lane check and
  the same scripted rule inside the trial's environment, and leaves the verifier and the result
  files to Harbor.
"""

from __future__ import annotations

import importlib.util

from harness.lane_check import RECORD_FILE, AgentSetupError, LaneCheck

__all__ = ["RECORD_FILE", "AgentSetupError", "BaselineClaudeCodeAgent", "LaneCheck"]

if importlib.util.find_spec("harbor") is None:
    BaselineClaudeCodeAgent: type = LaneCheck
else:
    from harness.harbor_agent import ScriptedAgent

    BaselineClaudeCodeAgent = ScriptedAgent
