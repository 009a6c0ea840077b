"""Writes a running call to its session log.

The log file is created when the call is built (so a log that cannot be created stops
the call before it starts), and its header line is written when the call's clock
starts (:meth:`Recorder.clock_started`), carrying that instant of t = 0: ``started_at``,
``t0_unix``, ``t0_monotonic`` and ``clock`` (docs/log-format.md, "Aligning with your
agent's logs"). A call that never starts still gets its header, when it is closed.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from sessions.call.config import CallConfig
from sessions.clock import ClockZero
from sessions.log.models import AgentInfo, Event, Header, SpeechInfo, TendencyValues
from sessions.log.writer import SessionWriter, new_session_id
from sessions.version import version_string


def session_path(sessions_dir: Path, scenario: str, session_id: str) -> Path:
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    return Path(sessions_dir) / f"{stamp}-{scenario}-{session_id}.jsonl"


def make_header(
    config: CallConfig,
    *,
    session_id: str,
    agent: AgentInfo,
    speech: SpeechInfo | None = None,
    policy: str = "rules",
    shadow: str | None = None,
    batch: dict[str, object] | None = None,
) -> Header:
    t = config.tendencies
    return Header(
        session_id=session_id,
        started_at=dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds"),
        cutin_version=version_string(),
        agent=agent,
        scenario=config.scenario.name,
        speech=speech or SpeechInfo(words_per_minute=config.style.words_per_minute),
        tendencies=TendencyValues(alpha=t.alpha, beta=t.beta, gamma=t.gamma),
        policy=policy,
        shadow=shadow,
        autos={"interrupt": config.auto_interrupt, "backchannel": config.auto_backchannel},
        profile=config.profile.name,
        disfluency_style="human" if config.profile.style == "human" else "paper",
        seeds={"seed": config.seed},
        batch=batch,
    )


def iso_utc(unix: float) -> str:
    """``started_at``'s form: ISO-8601 UTC, rounded to the millisecond."""
    return dt.datetime.fromtimestamp(round(unix, 3), dt.UTC).isoformat(timespec="milliseconds")


def stamped(header: Header, zero: ClockZero) -> Header:
    """``header`` with the instant of t = 0."""
    return header.model_copy(
        update={
            "started_at": iso_utc(zero.unix),
            "t0_unix": round(zero.unix, 6),
            "t0_monotonic": round(zero.monotonic, 6),
            "clock": "virtual" if zero.virtual else "real",
        }
    )


class Recorder:
    """A call-loop listener that appends every event to the log (its header when the
    call's clock starts: :meth:`clock_started`)."""

    def __init__(self, path: Path, header: Header) -> None:
        self.writer = SessionWriter(path, header, header_later=True)
        self.path = self.writer.path

    def clock_started(self, zero: ClockZero) -> None:
        """The engine's clock has started (t = 0 is ``zero``): write the header now."""
        self.writer.write_header(stamped(self.writer.header, zero))

    @classmethod
    def create(
        cls, sessions_dir: Path, config: CallConfig, agent: AgentInfo, **header_fields: object
    ) -> Recorder:
        session_id = new_session_id()
        header = make_header(config, session_id=session_id, agent=agent, **header_fields)  # type: ignore[arg-type]
        return cls(session_path(sessions_dir, config.scenario.name, session_id), header)

    def __call__(self, event: Event) -> None:
        if not self.writer.closed:
            self.writer.write(event)

    def close(self) -> None:
        self.writer.close()
