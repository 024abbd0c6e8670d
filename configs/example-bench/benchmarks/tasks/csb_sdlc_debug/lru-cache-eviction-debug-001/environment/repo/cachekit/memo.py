"""Memoize expensive lookups in a bounded LRU cache."""

import functools
from collections.abc import Callable
from typing import Any

from cachekit.lru import LRUCache

_MISSING = object()


def memoize(capacity: int) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Cache a one-argument function's results, keeping the ``capacity`` most recently used."""

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        cache = LRUCache(capacity)

        @functools.wraps(fn)
        def wrapper(arg: Any) -> Any:
            value = cache.get(arg, _MISSING)
            if value is _MISSING:
                value = fn(arg)
                cache.put(arg, value)
            return value

        wrapper.cache = cache  # type: ignore[attr-defined]
        return wrapper

    return decorate
