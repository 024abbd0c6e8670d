"""Tokens and cost as CSB's `cost_report.py` takes them.

`task_metrics.json` first: its `input_tokens` is the uncached count, with cache writes and reads apart, and
its `cost_usd` is the cost. When its `input_tokens` is missing or 0, result.json's `agent_result` is read
instead (`n_input_tokens` there includes the cache; the bot shows `n_cache_tokens` apart as cache reads,
while the fallback cost, as CSB computes it, prices the whole count as input). Without `cost_usd` the
cost is CSB's formula at fixed per-million prices; a trial with no input tokens at all is skipped by
cost_report.py (a zero-token trial has no cost), and its cost is "not reported".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bot.csb.verdicts.bounded_read import Notes, count, number
from bot.domain.verdict import CostSource, Tokens

# cost_report.py's prices, dollars per million tokens (Opus 4.5's, whatever the model).
PRICE_INPUT, PRICE_OUTPUT, PRICE_CACHE_WRITE, PRICE_CACHE_READ = 15.0, 75.0, 18.75, 1.875


@dataclass(frozen=True)
class Cost:
    tokens: Tokens
    cost_usd: float | None
    source: CostSource | None


def cost_report(metrics: Mapping[str, Any] | None, result: Mapping[str, Any] | None, notes: Notes) -> Cost:
    where = "task_metrics.json"
    tokens = Tokens(
        input=count(metrics, "input_tokens", notes, where),
        output=count(metrics, "output_tokens", notes, where),
        cache_write=count(metrics, "cache_creation_tokens", notes, where),
        cache_read=count(metrics, "cache_read_tokens", notes, where),
    )
    priced_input = tokens.input
    if not tokens.input:
        agent = result.get("agent_result") if result is not None else None
        agent = agent if isinstance(agent, Mapping) else None
        where = "result.json agent_result"
        n_in = count(agent, "n_input_tokens", notes, where)
        cached = count(agent, "n_cache_tokens", notes, where)
        uncached = n_in - cached if n_in is not None and cached is not None and cached <= n_in else n_in
        tokens = Tokens(
            input=uncached,
            output=count(agent, "n_output_tokens", notes, where),
            cache_read=cached if uncached != n_in else None,
        )
        priced_input = n_in
        metrics = None  # cost_report.py then takes every figure from result.json, none from task_metrics
    if not priced_input:
        return Cost(tokens, None, None)
    reported = number(metrics, "cost_usd", notes, "task_metrics.json")
    if reported is not None:
        return Cost(tokens, reported, CostSource.TASK_METRICS)
    dollars = (
        priced_input * PRICE_INPUT
        + (tokens.output or 0) * PRICE_OUTPUT
        + (0 if metrics is None else (tokens.cache_write or 0) * PRICE_CACHE_WRITE)
        + (0 if metrics is None else (tokens.cache_read or 0) * PRICE_CACHE_READ)
    ) / 1_000_000
    return Cost(tokens, round(dollars, 4), CostSource.FORMULA)
