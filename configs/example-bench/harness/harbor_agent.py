"""The bench's scripted agent as a Harbor agent: today's deterministic outcomes, with Harbor verifying.

Real Harbor imports it through `agents.claude_baseline_agent:BaselineClaudeCodeAgent` (CSB's import path).
It calls no model. In the trial's environment (for the bench, `harness.host_root`, a throwaway root that is
not a security boundary: this agent is the only thing it is meant to run) it follows the rule of the bench's
README, written once in `harness/scripted.py` and played by `bin/harbor` too. Applying the reference
solution `solution/solve.sh`: the MCP lane's image (`Dockerfile.sg_only`) holds empty source files, so the
agent first restores the code from `/opt/verifier-src`, standing in for reading it through Sourcegraph.

Harbor then runs the task's real `tests/test.sh` and writes `result.json`; its timeouts, cancellation and
errors are Harbor's own.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import sys
import tomllib
from collections.abc import Mapping
from pathlib import Path

from harbor.agents.base import BaseAgent
from harbor.agents.installed.base import NonZeroAgentExitCodeError
from harbor.environments.base import BaseEnvironment
from harbor.models.agent.context import AgentContext
from harbor.trial.errors import AgentTimeoutError

from harness import scripted
from harness.lane_check import LaneCheck

NAME = "csb-example-standin"
VERSION = "standin"
SOLUTION_DIR = "/solution"
HIDDEN_SOURCE = "/opt/verifier-src"  # where the MCP lane's image keeps the code it hides
EXIT_CRASH = 3


def _task_facts(task_dir: Path, environ: Mapping[str, str]) -> tuple[str, str]:
    """The original task's id (what scripts key on) and its difficulty."""
    source_id = Path(environ.get("TASK_SOURCE_DIR") or task_dir).name
    difficulty = tomllib.loads((task_dir / "task.toml").read_text()).get("task", {}).get("difficulty")
    return source_id, str(difficulty or "")


class ScriptedAgent(BaseAgent):
    """CSB's agent stand-in inside real Harbor (see the module docstring). Calls no model."""

    @staticmethod
    def name() -> str:
        return NAME

    def version(self) -> str:
        return VERSION

    async def setup(self, environment: BaseEnvironment) -> None:
        check = LaneCheck(environment.environment_dir.parent, self.logs_dir)
        check.setup()  # AgentSetupError when the lane is not one CSB's agent could run in
        check.record()

    async def run(self, instruction: str, environment: BaseEnvironment, context: AgentContext) -> None:
        environ = os.environ
        task_dir = environment.environment_dir.parent
        lane = scripted.lane_of(environ)
        source_id, difficulty = _task_facts(task_dir, environ)
        plan = scripted.behaviour(source_id, difficulty, lane, environ)
        for key, value in scripted.usage(source_id, lane, self.model_name or "").items():
            setattr(context, key, value)
        self.logger.info(f"stand-in agent: lane {lane}, behaviour {plan}")
        if plan == "crash":
            print("harbor agent stand-in: crashed (scripted: crash); no result.json written", file=sys.stderr)
            os._exit(EXIT_CRASH)
        if plan == "hang":
            await asyncio.Event().wait()  # until Harbor's time limit or a signal cancels the trial
        await asyncio.sleep(scripted.delay(environ))
        if plan == "error":
            raise NonZeroAgentExitCodeError(
                "Agent command exited with non-zero exit code 1 (scripted: error)"
            )
        if plan == "ratelimit":
            raise RuntimeError(
                "Claude Code failed: API Error: 429 rate limit exceeded "
                '{"type":"error","error":{"type":"rate_limit_error"}} (scripted: ratelimit)'
            )
        if plan in ("pass", "timeout"):
            await self._apply_solution(environment, task_dir)
        if plan == "timeout":
            raise AgentTimeoutError("Agent execution timed out (scripted: timeout)")

    async def _apply_solution(self, environment: BaseEnvironment, task_dir: Path) -> None:
        """Restore code an MCP-lane image hides, then run the reference solution in the working directory."""
        await environment.upload_dir(task_dir / "solution", SOLUTION_DIR)
        restore = f"if [ -d {HIDDEN_SOURCE} ]; then cp -r {HIDDEN_SOURCE}/. .; fi"
        result = await environment.exec(f"{restore} && bash {shlex.quote(SOLUTION_DIR)}/solve.sh")
        (self.logs_dir / "solve-stdout.txt").write_text((result.stdout or "") + (result.stderr or ""))
        if result.return_code != 0:
            raise NonZeroAgentExitCodeError(
                f"Agent command exited with non-zero exit code {result.return_code} (solution/solve.sh)"
            )
