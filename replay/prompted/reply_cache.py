"""A disk cache of LLM replies, keyed by everything that determines the request.

One small JSON file per request under ``folder/<key[:2]>/<key>.json``, written to a
temporary name and renamed, so an interrupted run leaves whole entries or none and a
rerun picks up where it stopped. The key is the SHA-256 of the canonical JSON of the
request (endpoint, model, messages, sampling parameters) — never of the API key.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from pathlib import Path
from typing import Any


def request_key(request: dict[str, Any]) -> str:
    """The cache key of a request (any JSON-able dict)."""
    canonical = json.dumps(request, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class ReplyCache:
    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def _path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored record, or None (also for an unreadable entry, which is redone)."""
        try:
            data = json.loads(self._path(key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def put(self, key: str, record: dict[str, Any]) -> None:
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
        tmp.write_text(json.dumps(record, ensure_ascii=False), encoding="utf-8")
        os.replace(tmp, path)
