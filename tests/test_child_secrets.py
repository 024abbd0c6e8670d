"""No secret the bot holds leaves it. Its child processes get an allow-listed environment (never the bot's
own CSB_* settings or SLACK_* secrets, whatever the policy file lists), and every secret it holds (the
database password, the Ray token, a password in the Ray head's URL, the Slack secrets, the Sourcegraph
token) is redacted from what its lanes, CSB's scripts and `check`'s probes say before it is stored, logged,
printed or posted; what those scripts write reaches a Slack thread escaped, with no live mention or link.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from pathlib import Path

import pytest
from engine_kit import engine_kit
from harness import HARBOR, copy_bench, make_settings
from idle import run_until_idle
from test_cli import bot_env, run

from bot.csb.catalog import Catalog
from bot.csb.child_env import ChildEnvConfig, child_environ
from bot.domain.errors import InfraError
from bot.domain.redact import REDACTED
from bot.domain.spec import RunParams
from bot.services.checks import CheckRunner
from bot.settings import Settings
from bot.slack.views.events import stored_text
from bot.store import outbox
from bot.store.models import OutboxKind
from bot.wiring import Bot, build_bot

pytestmark = pytest.mark.slow

DB_PASSWORD = "db-pass-never-leaves-4b1d"
DB_URL = f"postgresql+asyncpg://csb:{DB_PASSWORD}@db.example:5432/csb"
RAY_TOKEN = "ray-token-never-leaves-9c2e"
RAY_PASSWORD = "ray-pass-in-address-5e7a"
SLACK_TOKEN = "xoxb-never-leaves-0a1b"
SIGNING = "signing-never-leaves-77c3"
SG_TOKEN = "sgp_never_posted_6d0f"
BOT_SECRETS = {
    "CSB_DATABASE_URL": DB_URL,
    "CSB_RAY_TOKEN": RAY_TOKEN,
    "CSB_RAY_ADDRESS": f"http://ray:{RAY_PASSWORD}@127.0.0.1:9",
    "SLACK_BOT_TOKEN": SLACK_TOKEN,
    "SLACK_SIGNING_SECRET": SIGNING,
}
SECRETS = (DB_PASSWORD, RAY_TOKEN, RAY_PASSWORD, SLACK_TOKEN, SIGNING, SG_TOKEN)
# What a hostile or careless script prints: a mention, a spoofed link and the secrets it could find.
HOSTILE = f"<!channel> <https://evil.example|the report> {DB_URL} {SG_TOKEN} {SLACK_TOKEN}"


def _leaks(text: str) -> list[str]:
    return [secret for secret in SECRETS if secret in text]


def _bot(tmp_path: Path, repo: Path, environ: dict[str, str]) -> tuple[Settings, Bot]:
    """The bot as `serve` builds it, holding every kind of secret (nothing connects at construction)."""
    settings = make_settings(
        tmp_path,
        repo,
        "http://127.0.0.1:9/api/",
        slack_bot_token=SLACK_TOKEN,
        slack_signing_secret=SIGNING,
        csb_database_url=DB_URL,
        csb_ray_token=RAY_TOKEN,
        csb_ray_address=BOT_SECRETS["CSB_RAY_ADDRESS"],
    )
    return settings, build_bot(settings, environ=environ, eager_notifier=False)


def _environ(tmp_path: Path) -> dict[str, str]:
    return {
        **os.environ,
        **BOT_SECRETS,
        "HOME": str(tmp_path / "home"),
        "SOURCEGRAPH_ACCESS_TOKEN": SG_TOKEN,
        "UNLISTED_VARIABLE": "not on the allow-list",
    }


# Records the lane's whole environment, then runs the example bench's Harbor stand-in as the lane.
_DUMPING_HARBOR = """#!{python}
import json, os, pathlib, sys
out = pathlib.Path({dumps!r})
out.mkdir(exist_ok=True)
(out / f"{{os.getpid()}}.json").write_text(json.dumps(dict(os.environ)))
os.execv({harbor!r}, [{harbor!r}, *sys.argv[1:]])
"""


async def test_a_lane_never_sees_the_bots_settings_or_secrets(tmp_path: Path) -> None:
    dumps = tmp_path / "lane-envs"
    harbor = tmp_path / "dumping-harbor"
    harbor.write_text(_DUMPING_HARBOR.format(python=sys.executable, dumps=str(dumps), harbor=str(HARBOR)))
    harbor.chmod(0o755)
    async with engine_kit(tmp_path, harbor=harbor) as kit:
        kit.env.update({**BOT_SECRETS, "UNLISTED_VARIABLE": "x", "SOURCEGRAPH_ACCESS_TOKEN": SG_TOKEN})
        run_id = await kit.approve("csb_org_onboarding", parallel=2)
        await run_until_idle(kit.engine, kit.store)
        assert len(await kit.lanes(run_id)) == 2
    envs = [json.loads(path.read_text()) for path in sorted(dumps.glob("*.json"))]
    assert len(envs) == 2
    for env in envs:
        own = [key for key in env if key.startswith(("CSB_", "SLACK_")) and key != "CSB_BOT_LANE"]
        assert own == [], own
        assert [secret for secret in _leaks(json.dumps(env)) if secret != SG_TOKEN] == []
        assert "UNLISTED_VARIABLE" not in env
        assert {"PATH", "HOME", "BASELINE_MCP_TYPE", "CSB_BOT_LANE", "HARBOR_STANDIN_SCRIPT"} <= set(env)
        assert env["SOURCEGRAPH_ACCESS_TOKEN"] == SG_TOKEN  # a lane's own credential, as the harness gives it


# CSB's after-batch scripts as a careless checkout might have them: each records whether it saw the
# bot's settings, then prints (or writes into flagged_tasks.json) what the test names.
_METRICS = f"""import json, os, pathlib, sys
pathlib.Path({{seen!r}}).write_text(json.dumps(sorted(os.environ)))
print("metrics failed: " + {HOSTILE!r}, file=sys.stderr)
sys.exit(3)
"""
_VALIDATE = f"""import json, pathlib, sys
args = sys.argv[1:]
jobs = pathlib.Path(args[args.index("--jobs-dir") + 1])
flag = {{"task_name": "service-owner-onboarding-001", "flag": {HOSTILE!r}}}
report = {{"tasks_checked": 1, "counts": {{"critical": 1}}, "flags": [flag]}}
(jobs / "flagged_tasks.json").write_text(json.dumps(report))
sys.exit(1)
"""


async def test_after_batch_output_reaches_the_thread_escaped_and_redacted(tmp_path: Path) -> None:
    seen = tmp_path / "script-env.json"
    repo = copy_bench(tmp_path / "bot")
    _settings, bot = _bot(tmp_path, repo, _environ(tmp_path))
    async with engine_kit(tmp_path, redact=bot.redact) as kit:
        kit.env.update({**BOT_SECRETS, "SOURCEGRAPH_ACCESS_TOKEN": SG_TOKEN})
        for path, text in (
            ("scripts/evaluation/extract_task_metrics.py", _METRICS.format(seen=str(seen))),
            ("scripts/authoring/validate_task_run.py", _VALIDATE),
        ):
            (kit.repo / path).parent.mkdir(parents=True, exist_ok=True)
            (kit.repo / path).write_text(text)
        await kit.approve("csb_org_onboarding", parallel=2)
        await run_until_idle(kit.engine, kit.store)
        await kit.engine.after_batch.wait()
        async with kit.store.read() as session:
            items = await outbox.due(session, kit.clock.now())
        # The notifier words a notice's event through the views, in the run's thread (`senders._notice`).
        notices = [stored_text(i.text or "") for i in items if i.kind is OutboxKind.NOTICE]
        [text] = [notice for notice in notices if "After the batch" in notice]
    assert not [name for name in json.loads(seen.read_text()) if name.startswith(("CSB_", "SLACK_"))]
    assert _leaks(text) == [], text
    assert "<!channel>" not in text and "<https://" not in text, text
    assert "&lt;!channel&gt; &lt;https://evil.example|the report&gt;" in text
    assert text.count(REDACTED) >= 6  # the URL's password, the Sourcegraph and Slack tokens, twice each
    assert "extract_task_metrics failed" in text and "service-owner-onboarding-001" in text


# A preflight script that records its environment and prints every secret it can find.
_HEALTH = f"""import json, os, pathlib, sys
pathlib.Path({{seen!r}}).write_text(json.dumps(sorted(os.environ)))
print("auth failed: " + {HOSTILE!r}, file=sys.stderr)
sys.exit(2)
"""


async def test_a_preflight_scripts_output_is_redacted_and_it_gets_no_bot_setting(tmp_path: Path) -> None:
    seen = tmp_path / "script-env.json"
    repo = copy_bench(tmp_path / "bot")
    script = repo / "scripts" / "infra" / "account_health.py"
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text(_HEALTH.format(seen=str(seen)))
    environ = _environ(tmp_path)
    settings, bot = _bot(tmp_path, repo, environ)
    launch = settings.launch_config(bot.config, environ)
    checks = CheckRunner(repo, launch.base_env, daytona=False, redact=bot.redact, timeout_s=60)
    spec = Catalog(repo).resolve(RunParams(suite="csb_org_onboarding"), default_parallel=2)
    [health] = [line for line in (await checks.run(spec)).lines if line.name == "account_health"]
    assert "auth failed" in health.message and _leaks(health.message) == [], health.message
    assert not [name for name in json.loads(seen.read_text()) if name.startswith(("CSB_", "SLACK_"))]
    assert "UNLISTED_VARIABLE" not in json.loads(seen.read_text())


def test_the_bots_redactor_holds_every_secret_it_holds(tmp_path: Path) -> None:
    repo = copy_bench(tmp_path / "bot")
    _settings, bot = _bot(tmp_path, repo, _environ(tmp_path))
    quoted = DB_URL.replace(DB_PASSWORD, "db%2Dpass") + " " + " ".join(SECRETS)
    assert _leaks(bot.redact(quoted)) == []
    records: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(self.format(record))

    handler = Keep()
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        bot.redact_logs()
        logging.getLogger("bot.test").warning("lane said %s", HOSTILE)
        try:
            raise RuntimeError(f"cannot reach {DB_URL}")
        except RuntimeError:
            logging.getLogger("bot.test").exception("failed")
    finally:
        root.removeHandler(handler)
    assert len(records) == 2 and _leaks("\n".join(records)) == [], records
    assert "cannot reach postgresql+asyncpg://csb:" + REDACTED in records[1]


# A harbor for `check` that records its environment and quotes secrets it found in its output.
_CHECK_HARBOR = """#!{python}
import json, os, sys
with open({seen!r}, "a") as out:
    out.write(json.dumps(dict(os.environ)) + "\\n")
if sys.argv[1:] == ["--version"]:
    print("9.9.9 (config: {db_url} token {sg})")
else:
    print("Usage: harbor run [OPTIONS]")
"""


def test_check_probes_get_no_bot_setting_and_its_output_holds_no_secret(tmp_path: Path) -> None:
    seen = tmp_path / "probe-envs.jsonl"
    harbor = tmp_path / "harbor"
    harbor.write_text(_CHECK_HARBOR.format(python=sys.executable, seen=str(seen), db_url=DB_URL, sg=SG_TOKEN))
    harbor.chmod(0o755)
    config = tmp_path / "csb-bot.toml"
    config.write_text('[child_env]\nallow = ["CORP_*"]\n')
    env = bot_env(
        tmp_path,
        **{**BOT_SECRETS, "SLACK_BOT_TOKEN": "xoxb-cli-test-secret-value"},
        CSB_HARBOR=str(harbor),
        CSB_EXECUTOR="ray",
        CSB_CONFIG=str(config),
        SOURCEGRAPH_ACCESS_TOKEN=SG_TOKEN,
        CORP_CA_BUNDLE="/etc/corp.pem",
        UNLISTED_VARIABLE="x",
    )
    result = run(["check"], env, cwd=tmp_path)
    output = result.stdout + result.stderr
    for secret in (*SECRETS, "xoxb-cli-test-secret-value"):
        assert secret not in output, output
    assert "✓ harbor 9.9.9 (config: postgresql+asyncpg://csb:" + REDACTED in output, output
    assert f"Ray head http://ray:{REDACTED}@127.0.0.1:9" in output, output  # the head does not answer
    probes = [json.loads(line) for line in seen.read_text().splitlines()]
    assert len(probes) == 3  # --version, run --help, and --help (whether it has `lint`)
    for probe in probes:
        assert not [name for name in probe if name.startswith(("CSB_", "SLACK_"))], sorted(probe)
        assert "UNLISTED_VARIABLE" not in probe and probe["CORP_CA_BUNDLE"] == "/etc/corp.pem"


@pytest.mark.parametrize(
    "entry", ["SLACK_BOT_TOKEN", "CSB_DATABASE_URL", "csb_ray_token", "SLACK_*", "C*", "*"]
)
def test_the_policy_file_cannot_let_the_bots_own_settings_through(tmp_path: Path, entry: str) -> None:
    """Each entry read as `serve` and `check` read the file (`Settings.load_config`); the next test shows
    `check` saying so."""
    text = f'[child_env]\nallow = ["PATH", {json.dumps(entry)}]\n'
    settings = make_settings(tmp_path, HARBOR.parent.parent, "http://127.0.0.1:9/api/", config_text=text)
    with pytest.raises(InfraError) as refused:
        settings.load_config()
    assert f"child_env.allow: Value error, '{entry}'" in str(refused.value)


def test_check_refuses_a_policy_file_that_lets_the_bots_own_settings_through(tmp_path: Path) -> None:
    config = tmp_path / "csb-bot.toml"
    config.write_text('[child_env]\nallow = ["PATH", "SLACK_*"]\n')
    result = run(["check"], bot_env(tmp_path, CSB_CONFIG=str(config)), cwd=tmp_path)
    assert result.returncode == 1
    assert "is invalid: child_env.allow: Value error, 'SLACK_*'" in result.stdout, result.stdout


def test_the_allow_list_keeps_what_a_lane_needs_and_what_the_policy_adds() -> None:
    environ = {
        **BOT_SECRETS,
        "PATH": "/usr/bin",
        "LC_ALL": "C.UTF-8",
        "https_proxy": "http://proxy:3128",
        "DOCKER_HOST": "unix:///run/docker.sock",
        "DAYTONA_API_KEY": "dk",
        "ANTHROPIC_API_KEY": "sk",
        "HARBOR_ENV": "daytona",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",  # without it an offline Harbor waits on LiteLLM's retries
        "CORP_TOKEN": "corp",
        "MY_TOOL": "1",
        "csb_database_url": DB_URL,  # the settings read any case
    }
    kept = dict(child_environ(environ, ChildEnvConfig(allow=("CORP_*", "MY_TOOL"))))
    assert kept == {
        key: environ[key]
        for key in (
            "PATH",
            "LC_ALL",
            "https_proxy",
            "DOCKER_HOST",
            "DAYTONA_API_KEY",
            "ANTHROPIC_API_KEY",
            "HARBOR_ENV",
            "LITELLM_LOCAL_MODEL_COST_MAP",
            "CORP_TOKEN",
            "MY_TOOL",
        )
    }
    assert "MY_TOOL" not in child_environ(environ)
