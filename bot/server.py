"""The bot's HTTP face: Slack requests at POST /slack/events, a health check at GET /healthz."""

from __future__ import annotations

import asyncio
import logging

from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response

from bot.engine.outbox_pruner import PRUNE_TICK_SECONDS
from bot.engine.scheduler import start_timers
from bot.slack.inbound.intake import MAX_BODY_BYTES, Intake
from bot.slack.outbound.webclient import close_client
from bot.wiring import Bot

log = logging.getLogger(__name__)

BOT_KEY = web.AppKey("bot", Bot)
INTAKE_KEY = web.AppKey("intake", Intake)
GATE_TICK_SECONDS = 30.0  # expiry and reminders are measured in minutes and hours


def build_web_app(bot: Bot, *, timers: bool = True) -> web.Application:
    """`timers=False` leaves ticking to the caller (tests call the tick functions themselves).

    One mode: with SLACK_APP_TOKEN Slack's requests come over Socket Mode only, so `POST /slack/events`
    acts on nothing (a signed request there is someone replaying what they captured, or a misconfigured
    app) and answers 404 saying so; `/healthz` is served in both modes."""
    web_app = web.Application(client_max_size=MAX_BODY_BYTES)
    web_app[BOT_KEY] = bot
    web_app[INTAKE_KEY] = Intake(bot.settings.slack_signing_secret.get_secret_value())
    socket_mode = bot.settings.slack_app_token is not None
    web_app.router.add_post("/slack/events", _socket_mode_only if socket_mode else _slack_events)
    web_app.router.add_get("/healthz", _healthz)
    web_app.cleanup_ctx.append(_lifecycle(bot, timers))
    return web_app


def _lifecycle(bot: Bot, timers: bool):  # type: ignore[no-untyped-def]
    async def lifecycle(_app: web.Application):  # type: ignore[no-untyped-def]
        await bot.start()
        # In the background: HTTP answers at once, and requests never wait on Slack's Web API.
        learning = asyncio.create_task(bot.identity.learn(), name="slack-auth-test")
        scheduler = None
        if timers:
            scheduler = start_timers(
                {
                    "engine": (bot.engine.tick, bot.config.engine.tick_seconds),
                    "notifier": (bot.deliver_tick, bot.config.notifier.tick_seconds),
                    "approval-gate": (bot.gate_tick, GATE_TICK_SECONDS),
                    "outbox-prune": (bot.prune_tick, PRUNE_TICK_SECONDS),
                }
            )
        yield
        learning.cancel()
        if scheduler is not None:
            await scheduler.stop()  # ticks under way finish first
        await bot.engine.shutdown()  # lanes run on; a successor takes the timers at once and adopts them
        await bot.inflight.wait_idle()
        await close_client(bot.app.client)
        await bot.store.close()

    return lifecycle


async def _slack_events(request: web.Request) -> web.Response:
    """Unsigned or malformed requests are answered by the intake; the rest go to Bolt's listeners."""
    bot = request.app[BOT_KEY]
    with bot.inflight.answering():  # the work of requests acked before waits for this one's ack
        screened = await request.app[INTAKE_KEY].screen(request)
        if isinstance(screened, web.Response):
            return screened
        response = await bot.app.async_dispatch(screened)
        return await to_aiohttp_response(response)


async def _socket_mode_only(_request: web.Request) -> web.Response:
    return web.json_response({"error": "this bot takes Slack's requests over Socket Mode"}, status=404)


async def _healthz(request: web.Request) -> web.Response:
    """200 while the bot can reach its database; 503 while it cannot, so a load balancer sends Slack's
    requests to a replica that can (this one still answers them, with "try again in a minute")."""
    if await request.app[BOT_KEY].store.reachable():
        return web.json_response({"ok": True})
    return web.json_response({"ok": False, "database": "unavailable"}, status=503)
