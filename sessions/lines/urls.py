"""What of a line's URL may be shown or logged: never user info, never query values."""

from __future__ import annotations

from urllib.parse import parse_qsl, quote, urlsplit, urlunsplit


def redact_url(url: str) -> str:
    """``url`` without user info, and with every query value replaced by ``***``."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    try:
        port = f":{parts.port}" if parts.port is not None else ""
    except ValueError:
        port = ":" + parts.netloc.rpartition(":")[2]
    keys = [quote(k, safe="") for k, _ in parse_qsl(parts.query, keep_blank_values=True)]
    query = "&".join(f"{k}=***" for k in keys)
    return urlunsplit((parts.scheme, host + port, parts.path, query, ""))


def public_url(url: str) -> str:
    """:func:`redact_url` without the query at all (the session header's ``base_url``)."""
    return redact_url(url).partition("?")[0]
