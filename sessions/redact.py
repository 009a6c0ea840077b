"""What of a URL, a key or an error message may be recorded or shown: the one redaction
for every URL cutin logs, reports, prints or puts on a screen.

* :func:`redact_url` keeps the scheme, host, port and path, drops the user info and the
  fragment, and replaces *every* query value with ``***``. Every value, not only the
  ones named like secrets (``key``, ``token``, ``sig``…): a gateway may call its key
  anything, and the names alone are enough to tell two endpoints apart. Query names are
  kept when they look like names, a bare item (``?s3cret``) is masked whole.
* :func:`public_url` is the same without the query (the session header's ``base_url``).
* :class:`Redactor` scrubs arbitrary text (an exception from the ``openai`` client or
  ``websockets`` may echo a URL or a header): every URL in it is redacted, and every
  known secret (an API key, the user info and query values of the endpoint in use, in
  raw and percent-encoded spellings) is replaced by ``***``.

Nothing here raises: a malformed URL (``http://[::1``) is redacted by plain string
splitting. Stdlib only; no Textual.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from urllib.parse import quote, quote_plus, unquote, unquote_plus, urlsplit, urlunsplit

MASK = "***"
MIN_SECRET = 4
"""Secrets shorter than this are not searched for in text (they would blank ordinary
words); they can still never appear in a redacted URL."""

_NAME = re.compile(r"[A-Za-z0-9_.\-\[\]]{1,40}")
"""A query name that is shown as is; anything else is masked like a value."""
_URL_IN_TEXT = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]{0,15}://[^\s'\"<>`]+")
_UNSAFE = re.compile(r"[\x00-\x20\x7f-\x9f]")


def redact_url(url: str) -> str:
    """``url`` without user info or fragment, every query value replaced by ``***``."""
    url = _drop_user_info(str(url))
    if "://" not in url:  # "host:8000/v1" would parse as scheme "host"
        return _UNSAFE.sub(lambda m: f"%{ord(m.group()):02X}", _redact_by_hand(url))
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        if ":" in host:
            host = f"[{host}]"
        try:
            port = f":{parts.port}" if parts.port is not None else ""
        except ValueError:  # a non-numeric or out-of-range port: show it, masked if odd
            raw = parts.netloc.rpartition("@")[2].rpartition(":")[2]
            port = ":" + (raw if raw.isdigit() else MASK)
        out = urlunsplit((parts.scheme, host + port, parts.path, _mask_query(parts.query), ""))
    except ValueError:  # e.g. an unclosed IPv6 bracket
        out = _redact_by_hand(url)
    return _UNSAFE.sub(lambda m: f"%{ord(m.group()):02X}", out)


def public_url(url: str) -> str:
    """:func:`redact_url` without the query at all (the session header's ``base_url``)."""
    return redact_url(url).partition("?")[0]


def url_secrets(url: str | None) -> list[str]:
    """The parts of ``url`` that are secret: user name, password and query values."""
    if not url:
        return []
    rest = str(url).partition("://")[2] or str(url)
    netloc = re.split(r"[/?#]", rest, maxsplit=1)[0]
    found: list[str] = []
    if "@" in netloc:
        for part in netloc.rpartition("@")[0].split(":", 1):
            found += [part, unquote(part)]
    query = rest.partition("?")[2].partition("#")[0]
    for item in query.split("&"):
        name, eq, value = item.partition("=")
        found += [value, unquote_plus(value)] if eq else [name, unquote_plus(name)]
    fragment = rest.partition("#")[2]
    if fragment:
        found.append(fragment)
    return [s for s in dict.fromkeys(found) if s]


def env_secrets() -> list[str]:
    """Secrets cutin reads from the environment (the OPENAI_API_KEY value)."""
    key = os.environ.get("OPENAI_API_KEY", "").strip()
    return [key] if key else []


class Redactor:
    """Scrubs text of URLs' secrets and of known secret strings; see the module doc."""

    def __init__(
        self,
        *,
        secrets: Iterable[str | None] = (),
        urls: Iterable[str | None] = (),
        shown: Iterable[str] = (),
    ):
        """``shown``: URLs already made safe by cutin (a line's target, whose query is
        its own), left as they are when they appear in text."""
        self._shown = frozenset(shown)
        known: set[str] = set()
        for secret in [*secrets, *env_secrets(), *(s for u in urls for s in url_secrets(u))]:
            if secret and len(secret) >= MIN_SECRET:
                known |= {secret, quote(secret, safe=""), quote_plus(secret)}
        # Longest first, so a secret that contains another is blanked whole.
        self._secrets = sorted(known, key=len, reverse=True)

    def __call__(self, text: str) -> str:
        text = _URL_IN_TEXT.sub(self._redact_match, str(text))
        for secret in self._secrets:
            text = text.replace(secret, MASK)
        return text

    def _redact_match(self, match: re.Match[str]) -> str:
        # Punctuation after a URL in prose ("at http://h/v1: HTTP 404") is not part of it.
        url = match.group()
        stripped = url.rstrip(".,;:!?)]}")
        safe = stripped if stripped in self._shown else redact_url(stripped)
        return safe + url[len(stripped) :]

    def value(self, value: object) -> object:
        """``value`` with every string in it (nested dicts and lists too) scrubbed."""
        if isinstance(value, str):
            return self(value)
        if isinstance(value, dict):
            return {k: self.value(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.value(v) for v in value]
        return value


def scrub(text: str, *secrets: str | None, urls: Iterable[str | None] = ()) -> str:
    """``text`` with every URL redacted and ``secrets`` (and OPENAI_API_KEY) blanked."""
    return Redactor(secrets=secrets, urls=urls)(text)


# ---- internals ---------------------------------------------------------------------


def _drop_user_info(url: str) -> str:
    """``url`` without everything up to the last ``@`` before its query: the user info,
    even when a raw ``/`` or ``#`` in a password fools the parser (a path with an ``@``
    loses its start, which is the safe side)."""
    cut = min((i for i in (url.find("?"), url.find("#")) if i >= 0), default=len(url))
    head, tail = url[:cut], url[cut:]
    if "@" not in head:
        return url
    scheme, sep, rest = head.partition("://")
    if not sep:
        scheme, rest = "", head
    prefix = f"{scheme}://" if sep else ("//" if rest.startswith("//") else "")
    return prefix + rest.rpartition("@")[2] + tail


def _mask_query(query: str) -> str:
    if not query:
        return ""
    items = []
    for item in query.split("&"):
        if not item:
            continue
        name, eq, _ = item.partition("=")
        if eq and _NAME.fullmatch(unquote_plus(name)):
            items.append(f"{name}={MASK}")
        else:
            items.append(MASK)
    return "&".join(items)


def _redact_by_hand(url: str) -> str:
    """The same redaction by string splitting, for what ``urlsplit`` refuses."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        scheme, rest = "", url.removeprefix("//")
    rest = rest.partition("#")[0]
    rest, _, query = rest.partition("?")
    netloc, slash, path = rest.partition("/")
    netloc = netloc.rpartition("@")[2]
    out = f"{scheme}://{netloc}" if sep else netloc
    out += slash + path
    masked = _mask_query(query)
    return f"{out}?{masked}" if masked else out
