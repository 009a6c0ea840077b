"""A WebRTC line's signalling: the offer POSTed over HTTP, the answer checked, ICE servers.

Stdlib only (the line itself, :mod:`sessions.lines.webrtc`, needs aiortc). The request
is Pipecat's SmallWebRTC one (``pipecat.transports.smallwebrtc.request_handler``'s
``SmallWebRTCRequest``, served by its development runner as ``POST /api/offer``)::

    POST http://HOST:PORT/api/offer        Content-Type: application/json
    {"sdp": "v=0...", "type": "offer", "pc_id": null, "restart_pc": false,
     "request_data": {}}

and the answer is ``{"sdp": "v=0...", "type": "answer", "pc_id": "..."}``, whole (the
offer carries every candidate: no trickle, no ``PATCH``). Another server that takes the
offer as JSON ``{"sdp", "type"}`` and answers the same way is dialled the same way.

Everything the server answers is hostile: the body is read up to :data:`MAX_ANSWER_BYTES`,
an answer that is not JSON, not an object or has no SDP (``v=0`` first) is refused with
one line, and the line only ever shows its redacted target.
"""

from __future__ import annotations

import json
import os
import socket
import ssl
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from sessions.lines.base import LineError

ICE_SERVERS_ENV = "CUTIN_WEBRTC_ICE_SERVERS"
"""Comma-separated ``stun:``/``turn:`` URLs, or a JSON array of ``{"urls", "username",
"credential"}`` objects (Pipecat's ``PIPECAT_ICE_SERVERS`` shape). Empty: host
candidates only, no STUN or TURN (a local agent needs none)."""
MAX_ANSWER_BYTES = 256 << 10
"""An SDP answer is a few KiB; a body over this is refused unread past it."""
MAX_ICE_SERVERS = 16
_LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})


@dataclass(frozen=True)
class IceServer:
    urls: tuple[str, ...]
    username: str | None = None
    credential: str | None = None
    """A secret: never shown (the line's redactor blanks it)."""


def ice_servers(value: str | None = None) -> list[IceServer]:
    """The ICE servers :data:`ICE_SERVERS_ENV` names (``value`` instead, if given);
    :class:`LineError` naming the variable if it is malformed."""
    text = (os.environ.get(ICE_SERVERS_ENV, "") if value is None else value).strip()
    if not text:
        return []
    bad = f"{ICE_SERVERS_ENV} must be stun:/turn: URLs, comma-separated, or a JSON array"
    entries: list[Any]
    if text.startswith("["):
        try:
            entries = json.loads(text)
        except (ValueError, RecursionError):
            raise LineError(f"{bad} (it is not valid JSON)") from None
        if not isinstance(entries, list):
            raise LineError(bad)
    else:
        entries = [u.strip() for u in text.split(",") if u.strip()]
    if len(entries) > MAX_ICE_SERVERS:
        raise LineError(f"{ICE_SERVERS_ENV} names over {MAX_ICE_SERVERS} servers")
    out = []
    for entry in entries:
        if isinstance(entry, str):
            entry = {"urls": entry}
        if not isinstance(entry, dict) or not set(entry) <= {"urls", "username", "credential"}:
            raise LineError(f"{bad} (an entry has keys other than urls, username, credential)")
        urls = entry.get("urls")
        listed = [urls] if isinstance(urls, str) else urls
        if (
            not isinstance(listed, list)
            or not listed
            or not all(
                isinstance(u, str)
                and u.split(":", 1)[0].lower() in ("stun", "stuns", "turn", "turns")
                for u in listed
            )
        ):
            raise LineError(f"{bad} (each URL starts with stun:, stuns:, turn: or turns:)")
        user, credential = entry.get("username"), entry.get("credential")
        if not all(v is None or isinstance(v, str) for v in (user, credential)):
            raise LineError(f"{bad} (username and credential are strings)")
        out.append(IceServer(tuple(listed), user, credential))
    return out


def offer_body(sdp: str) -> bytes:
    """The POST body of an offer (see the module doc)."""
    request: dict[str, Any] = {
        "sdp": sdp,
        "type": "offer",
        "pc_id": None,
        "restart_pc": False,
        "request_data": {},
    }
    return json.dumps(request).encode("utf-8")


def post_offer(url: str, sdp: str, timeout_s: float, name: str, shown: str) -> str:
    """POST the offer to ``url``; the answer's SDP. :class:`LineError` (one line naming
    ``shown``, the redacted URL) when nothing listens, the server refuses (HTTP 4xx/5xx),
    does not answer within ``timeout_s`` or answers with anything but an SDP answer."""
    request = urllib.request.Request(
        url,
        data=offer_body(sdp),
        headers={"Content-Type": "application/json", "Accept": "application/json"},
        method="POST",
    )
    where = f"{name}: cannot send the offer to {shown}"
    host = (urlsplit(url).hostname or "").lower()
    # A local agent is dialled directly, whatever proxy the environment names.
    handlers = [urllib.request.ProxyHandler({})] if host in _LOOPBACK else []
    opener = urllib.request.build_opener(*handlers)
    try:
        with opener.open(request, timeout=timeout_s) as response:
            body = response.read(MAX_ANSWER_BYTES + 1)
    except urllib.error.HTTPError as exc:
        hint = " (is it the agent's offer endpoint, e.g. Pipecat's /api/offer?)"
        reason = f" {exc.reason}" if isinstance(exc.reason, str) and exc.reason else ""
        refused = f"{name}: {shown} refused the offer with HTTP {exc.code}{reason[:60]}"
        raise LineError(refused + (hint if exc.code in (404, 405) else "")) from None
    except urllib.error.URLError as exc:
        raise LineError(f"{where} ({_reason(exc.reason, timeout_s, url)})") from None
    except TimeoutError:
        late = f"{name}: no answer to the offer from {shown} within {timeout_s:g} s"
        raise LineError(late) from None
    except (OSError, ValueError) as exc:  # a reset mid-answer, a malformed status line
        raise LineError(f"{where} ({_reason(exc, timeout_s, url)})") from None
    if len(body) > MAX_ANSWER_BYTES:
        big = f"{name}: {shown} answered the offer with over {MAX_ANSWER_BYTES >> 10} KiB"
        raise LineError(big)
    return answer_sdp(body, name, shown)


def answer_sdp(body: bytes, name: str, shown: str) -> str:
    """The SDP of an answer body (see :func:`post_offer`)."""
    not_sdp = f"{name}: the answer from {shown} is not an SDP answer"
    try:
        answer = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise LineError(f"{not_sdp} (not JSON: {body[:40]!r})") from None
    if not isinstance(answer, dict):
        raise LineError(f"{not_sdp} (a JSON {type(answer).__name__}, not an object)")
    sdp, kind = answer.get("sdp"), answer.get("type")
    if not isinstance(sdp, str) or not sdp.lstrip().startswith("v=0"):
        raise LineError(f'{not_sdp} (its "sdp" is no session description)')
    if kind != "answer":
        raise LineError(f"{not_sdp} (its \"type\" is {str(kind)[:20]!r}, not 'answer')")
    return sdp


def _reason(reason: object, timeout_s: float, url: str) -> str:
    if isinstance(reason, TimeoutError):
        return f"no answer within {timeout_s:g} s"
    if isinstance(reason, ConnectionRefusedError):
        return "connection refused: nothing listens there"
    if isinstance(reason, socket.gaierror):
        return f"host {urlsplit(url).hostname!r} not found"
    if isinstance(reason, ssl.SSLError):
        return f"TLS failed: {type(reason).__name__}"
    if isinstance(reason, OSError):
        return reason.strerror or type(reason).__name__
    return str(reason)[:80] or type(reason).__name__
