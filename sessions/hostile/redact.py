"""What of a URL, a key or an error message may be recorded or shown: the one redaction
for every URL cutin logs, reports, prints or puts on a screen. Only secrets are blanked;
what a URL says about the audio it carries stays readable.

* :func:`redact_url` keeps the scheme, host, port and path, drops the user info and the
  fragment, and replaces the query values with ``***``, except a line's own format
  parameters (:data:`FORMAT_PARAMS`: ``codec=PCMA``, ``rate=16000``,
  ``sample-rate=8000``) whose value looks like a format (a short word or number). Every
  other value is masked, not only the ones named like secrets (``key``, ``token``,
  ``sig``…): a gateway may call its key anything, and the names alone are enough to
  tell two endpoints apart. Query names are kept when they look like names, a bare item
  (``?s3cret``) is masked whole. Path parameters (``/v1;key=SECRET``) are secrets too:
  their values are masked the same way.
* :func:`public_url` is the same with only the format parameters left in the query
  (the session header's ``base_url``).
* :class:`Redactor` scrubs arbitrary text (an exception from the ``openai`` client or
  ``websockets`` may echo a URL or a header): every URL in it is redacted, every known
  secret (an API key, the user info, query values and path parameters of the endpoint
  in use, in raw and percent-encoded spellings, and the user info as HTTP Basic auth
  sends it, base64) is replaced by ``***``, and so is the credential of any
  ``Basic``/``Bearer`` authorization echoed in the text.

Nothing here raises: a malformed URL (``http://[::1``) is redacted by plain string
splitting. Stdlib only; no Textual.
"""

from __future__ import annotations

import base64
import binascii
import os
import re
from collections.abc import Iterable
from urllib.parse import quote, quote_plus, unquote, unquote_plus, urlsplit, urlunsplit

MASK = "***"
MIN_SECRET = 4
"""Secrets shorter than this are not searched for in text (they would blank ordinary
words); they can still never appear in a redacted URL."""

FORMAT_PARAMS = frozenset({"codec", "rate", "sample-rate"})
"""Query names that choose a line's audio format (each registered transport's
``rate_param`` and the parameters of its ``query``, see :mod:`sessions.lines.registry`
and :mod:`sessions.lines.stream_query`): their values are no secret, and are shown."""

_FORMAT_VALUE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]{0,15}")
"""A format parameter's value that is shown: a codec name or a rate. Anything else
(longer, or with other characters) is masked like any value."""
_NAME = re.compile(r"[A-Za-z0-9_.\-\[\]]{1,40}")
"""A query name that is shown as is; anything else is masked like a value."""
_URL_IN_TEXT = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]{0,15}://[^\s'\"<>`]+")
_UNSAFE = re.compile(r"[\x00-\x20\x7f-\x9f]")
_AUTH = re.compile(r"\b(basic|bearer)(\s+)([A-Za-z0-9+/_.~\-]+=*)", re.IGNORECASE)
"""An HTTP authorization credential in text: ``Basic <base64>``, ``Bearer <token>``."""


def redact_url(url: str) -> str:
    """``url`` without user info or fragment, its secret values replaced by ``***``."""
    return _redacted(url, public=False)


def public_url(url: str) -> str:
    """:func:`redact_url` with only the format parameters left in the query (the session
    header's ``base_url``)."""
    return _redacted(url, public=True)


def is_format_item(name: str, value: str) -> bool:
    """Whether ``name=value`` (raw, as in a query) is a format choice, shown as is."""
    return unquote_plus(name) in FORMAT_PARAMS and bool(_FORMAT_VALUE.fullmatch(value))


def url_secrets(url: str | None) -> list[str]:
    """The parts of ``url`` that are secret: user name and password (and the two as
    HTTP Basic auth sends them), query values other than format choices, path
    parameters and the fragment."""
    if not url:
        return []
    rest = str(url).partition("://")[2] or str(url)
    netloc = re.split(r"[/?#]", rest, maxsplit=1)[0]
    found: list[str] = []
    if "@" in netloc:
        info = netloc.rpartition("@")[0]
        for part in info.split(":", 1):
            found += [part, unquote(part)]
        found += _basic_forms(info)
    path = rest[len(netloc) :].partition("?")[0].partition("#")[0]
    for segment in path.split("/"):
        for param in segment.split(";")[1:]:
            name, eq, value = param.partition("=")
            found += [value, unquote(value)] if eq else [name, unquote(name)]
    query = rest.partition("?")[2].partition("#")[0]
    for item in query.split("&"):
        name, eq, value = item.partition("=")
        if eq and is_format_item(name, value):
            continue
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
        return _AUTH.sub(_mask_credential, text)

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


def _redacted(url: str, *, public: bool) -> str:
    url = _drop_user_info(str(url))
    if "://" not in url:  # "host:8000/v1" would parse as scheme "host"
        return _UNSAFE.sub(lambda m: f"%{ord(m.group()):02X}", _redact_by_hand(url, public))
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
        out = urlunsplit(
            (
                parts.scheme,
                host + port,
                _mask_path(parts.path),
                _mask_query(parts.query, public),
                "",
            )
        )
    except ValueError:  # e.g. an unclosed IPv6 bracket
        out = _redact_by_hand(url, public)
    return _UNSAFE.sub(lambda m: f"%{ord(m.group()):02X}", out)


def _basic_forms(info: str) -> list[str]:
    """The user info ``user:password`` (raw and decoded) as HTTP Basic auth sends it:
    base64, standard and URL-safe, with and without padding (``websockets`` and
    ``httpx`` both send a URL's user info this way)."""
    user, _, password = info.partition(":")
    forms = []
    for pair in dict.fromkeys([f"{user}:{password}", f"{unquote(user)}:{unquote(password)}"]):
        raw = pair.encode("utf-8", "surrogatepass")
        for encoded in (base64.b64encode(raw), base64.urlsafe_b64encode(raw)):
            text = encoded.decode("ascii")
            forms += [text, text.rstrip("=")]
    return forms


def _mask_credential(match: re.Match[str]) -> str:
    """``Basic ***`` for what decodes as a printable ``user:password``, ``Bearer ***`` for
    what looks like a token (8 characters or more, with a digit, or 24 or more); an
    ordinary word after "basic" or "bearer" ("basic information") is left alone."""
    scheme, space, token = match.groups()
    if scheme.lower() == "basic":
        padded = token.rstrip("=") + "=" * (-len(token.rstrip("=")) % 4)
        try:
            raw = base64.b64decode(padded.replace("-", "+").replace("_", "/"), validate=True)
            decoded = raw.decode("utf-8")
        except (binascii.Error, ValueError):  # UnicodeDecodeError is a ValueError
            return match.group()
        secret = ":" in decoded and decoded.isprintable() and len(decoded) >= MIN_SECRET
    else:
        secret = len(token) >= 24 or (len(token) >= 8 and any(c.isdigit() for c in token))
    return f"{scheme}{space}{MASK}" if secret else match.group()


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


def _mask_path(path: str) -> str:
    """``path`` with every path parameter's value masked (``/v1;key=***``)."""
    if ";" not in path:
        return path
    segments = []
    for segment in path.split("/"):
        head, *params = segment.split(";")
        segments.append(";".join([head, *(_mask_item(p, keep_format=False) for p in params)]))
    return "/".join(segments)


def _mask_query(query: str, public: bool = False) -> str:
    """The query with its values masked (format choices kept); ``public``: only the
    format choices."""
    if not query:
        return ""
    items = []
    for item in query.split("&"):
        if not item:
            continue
        name, _, value = item.partition("=")
        if public and not is_format_item(name, value):
            continue
        items.append(_mask_item(item, keep_format=True))
    return "&".join(items)


def _mask_item(item: str, *, keep_format: bool) -> str:
    name, eq, value = item.partition("=")
    if keep_format and eq and is_format_item(name, value):
        return item
    if eq and _NAME.fullmatch(unquote_plus(name)):
        return f"{name}={MASK}"
    return MASK


def _redact_by_hand(url: str, public: bool = False) -> str:
    """The same redaction by string splitting, for what ``urlsplit`` refuses."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        scheme, rest = "", url.removeprefix("//")
    rest = rest.partition("#")[0]
    rest, _, query = rest.partition("?")
    netloc, slash, path = rest.partition("/")
    netloc = netloc.rpartition("@")[2]
    out = f"{scheme}://{netloc}" if sep else netloc
    out += slash + _mask_path(path)
    masked = _mask_query(query, public)
    return f"{out}?{masked}" if masked else out
