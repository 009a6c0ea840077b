"""How a SIP call that failed or ended is said: one line for the user.

The worker reports a call's end as its final SIP status (``486 Busy Here``), whether
it was answered, who ended it and whether cutin gave up ringing; these functions turn
that into the one line ``cutin call`` prints (and exits 2 with) or the line's final
notice. The agent's reason phrase is its own text: it is kept short, and the notice
board makes it inert before it is shown. Stdlib only.
"""

from __future__ import annotations

from typing import Any

_BUSY = {486, 600}
_NOT_FOUND = {404, 604}
_CODECS = {488, 606}
_AUTH = {401, 407}


def _status(event: dict[str, Any]) -> str:
    code = int(event.get("code") or 0)
    reason = " ".join(str(event.get("reason", "")).split())[:80]
    return f"{code} {reason}".strip() if code else reason


def failure_words(
    target: str,
    event: dict[str, Any],
    *,
    timeout_s: float,
    rang: bool,
    replied: bool,
    registrar: str = "",
) -> str:
    """Why a call to ``target`` was never answered, in one line."""
    code = int(event.get("code") or 0)
    status = _status(event)
    if event.get("worker_died"):
        return str(event.get("reason", "sip: the SIP worker stopped"))
    if event.get("register_failed"):
        if code in _AUTH or code == 403:
            return (
                f"sip: the registrar {registrar} refused cutin ({status}); check "
                "CUTIN_SIP_USER and CUTIN_SIP_PASSWORD"
            )
        if code == 408:
            return f"sip: no answer from the registrar {registrar} within {timeout_s:g} s"
        return f"sip: registration with {registrar} failed ({status})"
    if event.get("no_answer") or code == 408:
        if rang:
            return f"sip: {target} rang but nobody answered within {timeout_s:g} s"
        if replied:
            return f"sip: {target} did not answer within {timeout_s:g} s"
        return (
            f"sip: no reply from {target} within {timeout_s:g} s (is a SIP agent there? "
            "check the host, the port and ;transport=)"
        )
    if code in _BUSY:
        return f"sip: {target} is busy ({status})"
    if code in _NOT_FOUND:
        return f"sip: {target} does not exist there ({status}); check the user part"
    if code in _CODECS:
        return (
            f"sip: {target} accepts neither PCMU nor PCMA ({status}); cutin offers only "
            "G.711 μ-law and A-law"
        )
    if code in _AUTH:
        return (
            f"sip: {target} asks cutin to authenticate ({status}); set CUTIN_SIP_USER and "
            "CUTIN_SIP_PASSWORD (and CUTIN_SIP_REGISTRAR if it needs a registration)"
        )
    if code == 403:
        return f"sip: {target} refused the call ({status})"
    if code == 480:
        return f"sip: {target} is unavailable ({status})"
    if "resolve" in status.lower():
        return f"sip: cannot reach {target} (its host name was not found)"
    if code in (502, 503) or code == 0:
        return f"sip: cannot reach {target} ({status or 'no route'})"
    return f"sip: {target} refused the call ({status})"


def ended_words(target: str, event: dict[str, Any]) -> tuple[str, bool]:
    """How an answered call ended: (the line, whether it was a clean hang-up)."""
    if event.get("by") == "agent":
        return f"the agent hung up (BYE from {target})", True
    return f"sip: the call to {target} dropped ({_status(event) or 'no reason given'})", False
