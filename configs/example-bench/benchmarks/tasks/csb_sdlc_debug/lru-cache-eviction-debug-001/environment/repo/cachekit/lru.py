"""A bounded least-recently-used cache."""

from collections import OrderedDict
from collections.abc import Hashable
from typing import Any


class LRUCache:
    """Keeps at most ``capacity`` entries; when full, drops the least recently used one."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._data: OrderedDict[Hashable, Any] = OrderedDict()

    def __contains__(self, key: Hashable) -> bool:
        return key in self._data

    def __len__(self) -> int:
        return len(self._data)

    def get(self, key: Hashable, default: Any = None) -> Any:
        """Return the cached value (a read counts as a use) or ``default``."""
        return self._data.get(key, default)

    def put(self, key: Hashable, value: Any) -> None:
        """Store ``value`` (a write counts as a use), evicting the least recently used entry."""
        self._data[key] = value
        if len(self._data) > self.capacity:
            self._data.popitem(last=False)
