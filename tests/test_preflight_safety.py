"""CSB's preflight scripts as an attacker or a broken machine would run them: their output never carries
a secret onto the card, the database or a reply, and a script that does not answer holds up only the
request waiting for it (stopped after its time limit, and said so).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest
from csb_tree import build_tree
from harness import CHANNEL, TOKEN, running_bot
from store_reads import all_requests
from test_e2e_run import card_text
from test_preflight import ENV, HEALTH, REDACT, TIMEOUT_S, _health, _script, _spec
from waiting import until

from bot.csb import PreflightCheck, run_preflight
from bot.domain.redact import REDACTED, Redactor
from bot.playground import OUTSIDER, REQUESTER
from bot.services.checks import CheckRunner

SG_TOKEN = "sgp_test_not_a_real_token"  # what the test bot's environment holds

# Waits for a file beside it before printing a healthy report: a script that answers only when told.
_WAITING_SCRIPT = f"""\
import json, pathlib, time
me = pathlib.Path(__file__)
while not me.with_suffix(".release").exists():
    time.sleep(0.05)
print({json.dumps(json.dumps(_health()))})
"""


def test_the_redactor_hides_secret_values_by_their_variable_names() -> None:
    env = {
        "SOURCEGRAPH_ACCESS_TOKEN": "sgp_abc123",
        "DAYTONA_API_KEY": "dtn_key_value",
        "DB_PASSWORD": 'pa"ss\\word',
        "MY_SECRET": "s3cr3t-value",
        "FEATURE_KEY": "1",  # a flag, too short to be a secret
        "HOME": "/home/csb",
    }
    redact = Redactor.from_env(env, extra=["xoxb-from-settings"])
    text = (
        'token sgp_abc123, key dtn_key_value, {"pw": "pa\\"ss\\\\word"}, s3cr3t-value, '
        "xoxb-from-settings, home /home/csb, retry 1"
    )
    assert redact(text) == (
        f'token {REDACTED}, key {REDACTED}, {{"pw": "{REDACTED}"}}, {REDACTED}, '
        f"{REDACTED}, home /home/csb, retry 1"
    )


async def test_a_failing_scripts_stderr_never_shows_the_token(tmp_path: Path) -> None:
    repo = build_tree(tmp_path)
    leak = (
        f"requests.exceptions.HTTPError: 401 for https://sg.example/?token={ENV['SOURCEGRAPH_ACCESS_TOKEN']}"
    )
    _script(repo, HEALTH, stdout="", stderr=f"Traceback (most recent call last):\n{leak}\n", exit=3)
    report = await run_preflight(
        repo, _spec(repo), ENV, daytona=False, timeout_s=TIMEOUT_S, redact=REDACT, python=sys.executable
    )
    health = next(f for f in report.findings if f.check == PreflightCheck.ACCOUNT_HEALTH)
    assert health.blocking
    assert ENV["SOURCEGRAPH_ACCESS_TOKEN"] not in health.message
    assert health.message.endswith(f"?token={REDACTED}")


async def test_a_scripts_json_report_never_shows_a_secret(tmp_path: Path) -> None:
    repo = build_tree(tmp_path)
    report = _health(ok=False)
    report["summary"] = f"account1 rejected token {ENV['SOURCEGRAPH_ACCESS_TOKEN']}"
    report["accounts"][0]["reasons"] = [f"bad key xoxb-settings-secret in {ENV['SOURCEGRAPH_ACCESS_TOKEN']}"]
    _script(repo, HEALTH, stdout=report, exit=1)
    redact = Redactor.from_env(ENV, extra=["xoxb-settings-secret"])
    result = await run_preflight(
        repo, _spec(repo), ENV, daytona=False, timeout_s=TIMEOUT_S, redact=redact, python=sys.executable
    )
    text = json.dumps(result.model_dump())
    assert "sgp_secret" not in text and "xoxb-settings-secret" not in text
    assert REDACTED in text


async def test_the_channel_card_and_the_database_never_hold_the_token(tmp_path: Path) -> None:
    async with running_bot(tmp_path) as h:
        stderr = f"auth failed: SOURCEGRAPH_ACCESS_TOKEN={SG_TOKEN} SLACK_BOT_TOKEN={TOKEN}\n"
        _script(h.repo, HEALTH, stdout="", stderr=stderr, exit=3)
        await h.driver.slash_command(REQUESTER, "run csb_sdlc_fix")
        await h.deliver()
        text = card_text(h.last_card())
        assert f"SOURCEGRAPH_ACCESS_TOKEN={REDACTED} SLACK_BOT_TOKEN={REDACTED}" in text
        assert SG_TOKEN not in json.dumps(h.standin.messages(CHANNEL))
        assert TOKEN not in json.dumps(h.standin.messages(CHANNEL))
        await h.driver.slash_command(REQUESTER, "accounts")
        await h.deliver()
        assert SG_TOKEN not in h.ephemeral_texts(REQUESTER)[-1]
        stored = json.dumps([request.model_dump(mode="json") for request in await all_requests(h.bot.store)])
        assert SG_TOKEN not in stored and TOKEN not in stored and REDACTED in stored


async def test_slow_scripts_hold_up_only_their_own_requests(tmp_path: Path) -> None:
    """More scripts waiting than the event loop's worker threads: another request still answers."""
    slow_repo = build_tree(tmp_path / "slow")
    script = slow_repo / HEALTH
    script.parent.mkdir(parents=True)
    script.write_text(_WAITING_SCRIPT)
    fast_repo = build_tree(tmp_path / "fast")
    _script(fast_repo, HEALTH, stdout=_health())
    waiting = min(32, (os.cpu_count() or 1) + 4) + 2  # the default worker pool's size, and then some
    slow = CheckRunner(slow_repo, ENV, daytona=False, redact=REDACT, timeout_s=TIMEOUT_S)
    fast = CheckRunner(fast_repo, ENV, daytona=False, redact=REDACT, timeout_s=TIMEOUT_S)
    slow_spec, fast_spec = _spec(slow_repo), _spec(fast_repo)
    pending = [asyncio.create_task(slow.run(slow_spec)) for _ in range(waiting)]
    try:
        checks = await asyncio.wait_for(fast.run(fast_spec), timeout=30)
        assert not any(task.done() for task in pending)
    finally:
        script.with_suffix(".release").touch()
    assert [line.ok for line in checks.lines if line.name == PreflightCheck.ACCOUNT_HEALTH] == [True]
    for result in await asyncio.wait_for(asyncio.gather(*pending), timeout=60):
        assert not result.blocking_reasons


async def test_one_persons_waiting_requests_never_hold_up_another_persons_reply(tmp_path: Path) -> None:
    """Four `/csb run` from one person wait on a script that does not answer yet; another person's
    `/csb help` is answered meanwhile, and the four cards come once the script answers."""
    async with running_bot(tmp_path) as h:
        script = h.repo / HEALTH
        script.parent.mkdir(parents=True, exist_ok=True)
        script.write_text(_WAITING_SCRIPT)
        try:
            for _ in range(4):
                assert (await h.driver.slash_command(REQUESTER, "run csb_sdlc_fix")).status == 200
            assert (await h.driver.slash_command(OUTSIDER, "help")).status == 200

            async def answered() -> bool:
                await h.bot.notifier.deliver()
                return bool(h.ephemeral_texts(OUTSIDER))

            await until(answered, "the other person's help", deadline=30)
            assert "/csb run" in h.ephemeral_texts(OUTSIDER)[0]
            assert h.cards() == []  # the first person's requests still wait for their script
        finally:
            script.with_suffix(".release").touch()
        await h.deliver()
        assert len(h.cards()) == 4


@pytest.mark.slow
async def test_a_script_that_does_not_answer_is_named_on_the_card_and_stopped(tmp_path: Path) -> None:
    config = "[engine]\npreflight_timeout_sec = 1\n"
    async with running_bot(tmp_path, config_text=config) as h:
        script = h.repo / HEALTH
        script.parent.mkdir(parents=True)
        script.write_text("import time\ntime.sleep(120)\n")
        await h.driver.slash_command(REQUESTER, "run csb_sdlc_fix")
        await h.deliver()
        assert f"{HEALTH} did not answer in 1 s; it was stopped" in card_text(h.last_card())
        # Looked for by its command line: on a loaded machine it may be stopped before it could say its pid.
        assert scripts_running(h.repo, HEALTH) == []


def scripts_running(repo: Path, script: str) -> list[int]:
    """Pids of the processes in `repo` whose command line names `script` (as the bot runs it, relative)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                argv = (entry / "cmdline").read_bytes().split(b"\0")
                cwd = os.readlink(entry / "cwd")
            except OSError:
                continue  # ended meanwhile, or not ours to look at
            if cwd == str(repo.resolve()) and os.fsencode(script) in argv:
                found.append(int(entry.name))
    return found
