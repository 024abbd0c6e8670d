"""Files uploaded the way `files_upload_v2` does it: get an upload URL, POST the bytes, complete."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class StoredFile:
    id: str
    filename: str
    length: int
    content: bytes | None = None
    title: str | None = None
    channel: str | None = None
    thread_ts: str | None = None
    shared: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


class FileStore:
    def __init__(
        self, base_url: Callable[[], str | None], on_shared: Callable[[StoredFile], None] | None = None
    ) -> None:
        self._base_url = base_url
        self._on_shared = on_shared  # tells the page a file appeared in a channel or thread
        self._counter = itertools.count(1)
        self.files: dict[str, StoredFile] = {}

    def reserve(self, filename: str, length: int) -> StoredFile:
        stored = StoredFile(id=f"F{next(self._counter):08d}PLAY", filename=filename, length=length)
        self.files[stored.id] = stored
        return stored

    def upload_url(self, file_id: str) -> str:
        return f"{self._base_url() or ''}/upload/{file_id}"

    def receive(self, file_id: str, content: bytes) -> bool:
        stored = self.files.get(file_id)
        if stored is None:
            return False
        stored.content = content
        return True

    def announce(self, stored: StoredFile) -> None:
        if self._on_shared is not None and stored.shared:
            self._on_shared(stored)

    def shared(self) -> list[StoredFile]:
        return [f for f in self.files.values() if f.shared]
