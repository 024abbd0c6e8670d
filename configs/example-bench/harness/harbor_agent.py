"""The bench's scripted agent as a Harbor agent: today's deterministic outcomes, with Harbor verifying.

Real Harbor imports it through `agents.claude_baseline_agent:BaselineClaudeCodeAgent` (CSB's import path).
It calls no model. In the trial's environment (for the bench, `harness.host_root`, a throwaway root that is
not a security boundary: this agent is the only thing it is meant to run) it follows the rule of the bench's
README, the same rule `bin/harbor` plays:

- the lane is `baseline` when BASELINE_MCP_TYPE is `none` or unset, else `mcp`;
- the MCP lane applies the task's reference solution `solution/solve.sh`; the baseline lane applies it only
  to `easy` tasks. The MCP lane's image (`Dockerfile.sg_only`) holds empty source files: the agent first
  restores the code from `/opt/verifier-src`, standing in for reading it through Sourcegraph;
- `CSB_STANDIN_SCRIPT` (a JSON object of `<task_id>/<lane>` or `<task_id>` → behaviour) and
  `CSB_STANDIN_DELAY` (seconds of "work") override the rule, as under `bin/harbor`.

Harbor then runs the task's real `tests/test.sh` and writes `result.json`; its timeouts, cancellation and
errors are Harbor's own.
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import sys
import tomllib
import zlib
from collections.abc import Mapping
from pathlib import Path

from harbor.agents.base import BaseAgent
from harbor.agents.installed.base import NonZeroAgentExitCodeError
from harbor.environments.base import BaseEnvironment
from harbor.models.agent.context import AgentContext
from harbor.trial.errors import AgentTimeoutError

from harness.lane_check import LaneCheck

BEHAVIOURS = ("pass", "fail", "error", "ratelimit", "hang", "crash", "timeout")
NAME = "csb-example-standin"
VERSION = "standin"
SOLUTION_DIR = "/solution"
HIDDEN_SOURCE = "/opt/verifier-src"  # where the MCP lane's image keeps the code it hides
EXIT_CRASH = 3


class ScriptError(ValueError):
    """CSB_STANDIN_SCRIPT or CSB_STANDIN_DELAY does not say something the stand-in can play."""


def current_lane(environ: Mapping[str, str]) -> str:
    return "baseline" if environ.get("BASELINE_MCP_TYPE", "none") == "none" else "mcp"


def behaviour(task_dir: Path, lane: str, environ: Mapping[str, str]) -> str:
    """The scripted behaviour of this task and lane, else the rule: MCP passes, baseline passes easy tasks."""
    source_id = Path(environ.get("TASK_SOURCE_DIR") or task_dir).name
    script_path = environ.get("CSB_STANDIN_SCRIPT")
    if script_path:
        script = json.loads(Path(script_path).read_text())
        if not isinstance(script, dict):
            raise ScriptError(f"CSB_STANDIN_SCRIPT={script_path}: expected a JSON object")
        scripted = script.get(f"{source_id}/{lane}", script.get(source_id))
        if scripted is not None:
            if scripted not in BEHAVIOURS:
                raise ScriptError(
                    f"CSB_STANDIN_SCRIPT: {scripted!r} for {source_id} is not one of {BEHAVIOURS}"
                )
            return str(scripted)
    difficulty = tomllib.loads((task_dir / "task.toml").read_text()).get("task", {}).get("difficulty")
    return "pass" if lane == "mcp" or difficulty == "easy" else "fail"


def delay(environ: Mapping[str, str]) -> float:
    text = environ.get("CSB_STANDIN_DELAY", "0") or "0"
    try:
        seconds = float(text)
    except ValueError as exc:
        raise ScriptError(f"CSB_STANDIN_DELAY={text!r} is not a number") from exc
    if seconds < 0:
        raise ScriptError(f"CSB_STANDIN_DELAY={text!r} is negative")
    return seconds


def usage(source_id: str, lane: str, model: str) -> dict[str, int | float]:
    """Token counts and cost derived from task, lane and model: small, plausible, deterministic."""
    seed = zlib.crc32(f"{source_id}/{lane}/{model}".encode())
    n_input = 20_000 + seed % 30_000
    n_cache = n_input * 9 // 10
    n_output = 500 + seed % 2_000
    cost_usd = round(((n_input - n_cache) * 1.0 + n_cache * 0.1 + n_output * 5.0) / 1_000_000, 6)
    return {
        "n_input_tokens": n_input,
        "n_cache_tokens": n_cache,
        "n_output_tokens": n_output,
        "cost_usd": cost_usd,
    }


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
        lane = current_lane(environ)
        plan = behaviour(task_dir, lane, environ)
        source_id = Path(environ.get("TASK_SOURCE_DIR") or task_dir).name
        for key, value in usage(source_id, lane, self.model_name or "").items():
            setattr(context, key, value)
        self.logger.info(f"stand-in agent: lane {lane}, behaviour {plan}")
        if plan == "crash":
            print("harbor agent stand-in: crashed (scripted: crash); no result.json written", file=sys.stderr)
            os._exit(EXIT_CRASH)
        if plan == "hang":
            await asyncio.Event().wait()  # until Harbor's time limit or a signal cancels the trial
        await asyncio.sleep(delay(environ))
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
