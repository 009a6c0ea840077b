"""``--agent sip:USER@HOST[:PORT]``: the SIP address a SIP line dials, and its settings.

Only what cutin must know before it starts PJSIP: that the value is a ``sip:`` URI
with a host (``sips:``, SIP over TLS, is refused with the reason), its port is a
number, it has no header part (``?...``) and nothing a terminal or a SIP message
would choke on; the user part and URI parameters (``;transport=tcp``) are kept for
PJSIP, which parses the URI itself. A password written into the URI
(``sip:user:secret@host``) is taken out of it and used as the digest password; the
target shown everywhere never contains one.

:func:`sip_account` reads the optional account from the environment
(``CUTIN_SIP_USER``, ``CUTIN_SIP_PASSWORD``, ``CUTIN_SIP_REGISTRAR``). Stdlib only.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from sessions.lines.base import LineError
from sessions.lines.registry import LineSpec

FORM = "sip:USER@HOST[:PORT]"
USER_ENV = "CUTIN_SIP_USER"
PASSWORD_ENV = "CUTIN_SIP_PASSWORD"
REGISTRAR_ENV = "CUTIN_SIP_REGISTRAR"

_HOST = re.compile(r"^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.\-]{0,252}))$")
_USER = re.compile(r"^[A-Za-z0-9\-_.!~*'()&=+$,;?/%]{1,128}$")
_PARAMS = re.compile(r"^(;[A-Za-z0-9\-_.!~*'()%]+(=[A-Za-z0-9\-_.!~*'()%\[\]:]+)?)*$")


@dataclass(frozen=True)
class SipAddress:
    uri: str
    """What PJSIP dials (no password in it)."""
    shown: str
    """The same, for logs and screens."""
    host: str
    password: str = field(default="", repr=False)
    """From ``sip:user:PASSWORD@host``; never shown."""


def parse_agent(agent: str) -> LineSpec:
    """The registry's parser for ``sip:`` (and the refusal of ``sips:``)."""
    address = parse_sip(agent)
    return LineSpec("sip", agent if address.password else address.uri)


def parse_sip(agent: str) -> SipAddress:
    """``sip:USER@HOST[:PORT][;params]`` → :class:`SipAddress`; :class:`LineError`
    (one line, saying what is wrong and the accepted form) otherwise."""
    shown = _printable(agent)
    if agent.lower().startswith("sips:"):
        raise LineError(
            f"--agent {shown!r}: sips: (SIP over TLS) is not supported yet; dial the agent "
            f"as {FORM} (SIP over UDP, or add ;transport=tcp)"
        )
    if not agent.lower().startswith("sip:"):
        raise LineError(f"--agent {shown!r}: a SIP agent is {FORM}")
    rest = agent[4:]
    if not rest or any(ch.isspace() or not ch.isprintable() or ch in '<>"?' for ch in rest):
        raise LineError(f"--agent {shown!r}: not a SIP address; a SIP agent is {FORM}")
    hostport, _, params = rest.partition(";")
    params = ";" + params if params else ""
    user, at, hostport = hostport.rpartition("@")
    password = ""
    if at:
        user, colon, password = user.partition(":")
        if not user or not _USER.match(user):
            raise LineError(f"--agent {shown!r}: the user part is not valid; use {FORM}")
        if colon and not password:
            raise LineError(f"--agent {shown!r}: an empty password after the user; use {FORM}")
    host, port = _split_port(hostport, shown)
    if not _HOST.match(host):
        raise LineError(f"--agent {shown!r}: no valid host; a SIP agent is {FORM}")
    if params and not _PARAMS.match(params):
        raise LineError(f"--agent {shown!r}: the URI parameters are not valid")
    where = f"{host}:{port}" if port is not None else host
    uri = f"sip:{user}@{where}{params}" if at else f"sip:{where}{params}"
    return SipAddress(uri=uri, shown=uri, host=host.strip("[]"), password=password)


def _split_port(hostport: str, shown: str) -> tuple[str, int | None]:
    if hostport.startswith("["):
        host, _, tail = hostport.partition("]")
        host += "]"
        if tail and not tail.startswith(":"):
            raise LineError(f"--agent {shown!r}: no valid host; a SIP agent is {FORM}")
        port_text = tail[1:] if tail else None
    else:
        host, colon, port_text_raw = hostport.partition(":")
        port_text = port_text_raw if colon else None
    if port_text is None:
        return host, None
    if not port_text.isdigit() or not 0 < int(port_text) <= 65535:
        raise LineError(f"--agent {shown!r}: the port is not a number from 1 to 65535")
    return host, int(port_text)


def _printable(text: str) -> str:
    """``text`` as a refusal may quote it: no control characters, no password, bounded."""
    cleaned = "".join(ch if ch.isprintable() else "?" for ch in text)[:200]
    return re.sub(r"^(sips?:[^:@;]+):[^@]*@", r"\1:***@", cleaned, flags=re.IGNORECASE)


@dataclass(frozen=True)
class SipAccount:
    """Who cutin is on the SIP side (``CUTIN_SIP_*``; all optional)."""

    user: str = ""
    password: str = field(default="", repr=False)
    registrar: str = ""
    """``sip:HOST[:PORT]`` to REGISTER with before the call (none: no registration)."""


def sip_account(environ: dict[str, str] | None = None) -> SipAccount:
    """The account from the environment; :class:`LineError` for a registrar that is not
    a ``sip:`` URI."""
    env = os.environ if environ is None else environ
    registrar = env.get(REGISTRAR_ENV, "").strip()
    if registrar:
        if "://" in registrar or not registrar.lower().startswith("sip:"):
            raise LineError(f"{REGISTRAR_ENV} must be a SIP URI like sip:HOST[:PORT]")
        parse_sip(registrar)  # the same checks as the agent's address
    return SipAccount(
        user=env.get(USER_ENV, "").strip(),
        password=env.get(PASSWORD_ENV, ""),
        registrar=registrar,
    )
