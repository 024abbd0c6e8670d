"""`/csb accounts` and the replies to `/csb drain-account` and `/csb undrain-account`, in words."""

from __future__ import annotations

from bot.csb.usage_cache import AccountUsage, UsageCache, Window
from bot.domain.words import plural
from bot.services.accounts import AccountRow, AccountsOverview, DrainDone
from bot.slack.views.events import held_text
from bot.slack.views.format import code, escape, shown, user, when
from bot.slack.views.replies import accounts_text

EVENTS_SHOWN = 5


def accounts_overview_text(overview: AccountsOverview) -> str:
    """Per account: token time left, lanes running, 5-hour and 7-day utilisation and whether a new lane
    may start there; then the usage cache's age, the latest drains, and CSB's own verdict as before."""
    lines = ["*Accounts the bot runs lanes under*"]
    if overview.fallback:
        lines.append("No account home was found: lanes run with the bot's own HOME.")
    lines += [_row(row, stale=overview.cache.stale) for row in overview.rows]
    lines.append(_cache_line(overview.cache, overview.max_utilization))
    if overview.events:
        lines.append("*Latest drains*")
        lines += [
            f"• {when(event.at)} `{escape(event.home.rsplit('/', 1)[-1])}` *{escape(event.action)}* by "
            f"{user(event.actor)}" + (f" — {shown(event.detail)}" if event.detail else "")
            for event in overview.events[:EVENTS_SHOWN]
        ]
    lines += ["", accounts_text(overview.health)]
    return "\n".join(lines)


def _row(row: AccountRow, *, stale: bool) -> str:
    token = "no readable token" if row.token_minutes is None else f"token {_minutes(row.token_minutes)} left"
    running = plural(row.lanes_running, "lane") + " running"
    state = held_text(row.held) if row.held is not None else f"{code(row.name)}: takes new lanes"
    return f"• {state} · {token} · {running} · {_usage(row.usage, stale=stale)}"


def _usage(usage: AccountUsage, *, stale: bool) -> str:
    if usage.unknown is not None:
        return f"utilisation unknown ({escape(usage.unknown)})"
    label = " (*stale*, not used)" if stale else ""
    return f"5-hour {_window(usage.five_hour)}, 7-day {_window(usage.seven_day)}{label}"


def _window(window: Window | None) -> str:
    if window is None:
        return "unknown"
    resets = f" (resets {when(window.resets_at)})" if window.resets_at is not None else ""
    return f"{window.utilization:.1f}%{resets}"


def _cache_line(cache: UsageCache, limit: float) -> str:
    avoid = (
        f"new lanes avoid an account at or above {limit:g}% (`max_utilization`)"
        if limit < 100
        else "utilisation never holds an account back (`max_utilization = 100`)"
    )
    if cache.absent:
        return f"Usage cache: none (CSB's `fetch_usage.py` writes `{escape(str(cache.path))}`); {avoid}."
    age = cache.age
    fetched = f"fetched {_minutes(int(age.total_seconds() // 60))} ago" if age is not None else "age unknown"
    if cache.stale:
        return f"Usage cache: :warning: *stale*, {fetched}, so not used; {avoid}."
    if cache.problem is not None:
        return f"Usage cache: :warning: unknown: {escape(cache.problem)}; {avoid}."
    return f"Usage cache: {fetched}; {avoid}."


def drain_text(done: DrainDone) -> str:
    name = code(done.name)
    if not done.drained:
        if not done.changed:
            return f"Account {name} was not drained; nothing changed."
        return f":arrow_forward: Account {name} takes new lanes again."
    head = (
        f":double_vertical_bar: Account {name} is drained: no new lane starts on it."
        if done.changed
        else f"Account {name} was already drained."
    )
    if not done.stopped:
        return head + " Lanes running on it finish (`--stop` stops and retries them elsewhere)."
    moved = ", ".join(
        f"`{escape(lane.task_id)}/{escape(lane.role)}` (run #{lane.run_id})" for lane in done.stopped
    )
    return (
        f"{head} {plural(len(done.stopped), 'running lane')} will be stopped and retried elsewhere as "
        f"infrastructure failures: {moved}."
    )


def _minutes(minutes: int) -> str:
    if minutes >= 48 * 60:
        return f"{minutes // (24 * 60)} d"
    return f"{minutes // 60} h {minutes % 60} min" if minutes >= 60 else f"{minutes} min"
