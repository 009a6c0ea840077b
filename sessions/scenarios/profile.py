"""Agent profiles: how a real agent's turns are timed, as distributions to draw from.

A profile is a TOML file of quantile tables (values at evenly spaced probabilities
0, 1/(n-1), ..., 1; a draw picks ``u`` uniform in [0, 1) and interpolates linearly):

* ``words_per_minute``: the agent's speaking rate, drawn once per agent turn;
* ``sentence_pause_s`` / ``comma_pause_s``: the silence after a sentence end / a
  comma, drawn at each one (a draw of 0.2 s or more is a short pause, 0.5 s or more
  a turn end, which the method does not count as an opportunity);
* ``turn_words``: how many words an agent turn has; a scripted turn with ``extra``
  sentences adds them, in order, while the turn stays within the drawn length.

The shipped ``tau2-voice`` profile and where its numbers come from are described in
``docs/scenarios.md``. Profiles apply to the text clock (``cutin simulate --speech
text``); synthesized voices make their own pauses.
"""

from __future__ import annotations

import itertools
from dataclasses import replace
from importlib import resources
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from sessions.hostile.safe_files import FileError, exists, parse_toml, read_text, shown_name
from sessions.scenarios.model import MAX_FILE_BYTES, MAX_NAME, LongText, ScenarioError
from sessions.speech.speech_clock import SpeakingStyle

_PROFILES = "profiles"
MAX_TABLE = 1_000
"""Values in one quantile table (real tables have 5 to 20)."""


def _quantile_table(v: list[float], low: float, high: float) -> list[float]:
    if len(v) < 2:
        raise ValueError("needs at least two values (the 0 % and 100 % quantiles)")
    if any(b < a for a, b in itertools.pairwise(v)):
        raise ValueError("quantiles must not decrease")
    if v[0] < low or v[-1] > high:
        raise ValueError(f"values must lie in [{low:g}, {high:g}]")
    return v


class AgentProfile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$", max_length=MAX_NAME)
    description: LongText = ""
    source: LongText = ""
    """Where the numbers come from."""
    words_per_minute: list[float] = Field(max_length=MAX_TABLE)
    sentence_pause_s: list[float] = Field(max_length=MAX_TABLE)
    comma_pause_s: list[float] = Field(max_length=MAX_TABLE)
    turn_words: list[float] = Field(default_factory=list, max_length=MAX_TABLE)

    @field_validator("words_per_minute")
    @classmethod
    def _rate(cls, v: list[float]) -> list[float]:
        return _quantile_table(v, 60.0, 400.0)

    @field_validator("sentence_pause_s", "comma_pause_s")
    @classmethod
    def _pause(cls, v: list[float]) -> list[float]:
        return _quantile_table(v, 0.0, 3.0)

    @field_validator("turn_words")
    @classmethod
    def _words(cls, v: list[float]) -> list[float]:
        return _quantile_table(v, 1.0, 1000.0) if v else v


def shipped_profile_names() -> list[str]:
    folder = resources.files("sessions.scenarios") / _PROFILES
    return sorted(
        p.name.removesuffix(".toml") for p in folder.iterdir() if p.name.endswith(".toml")
    )


def parse_profile(text: str, where: str) -> AgentProfile:
    try:
        return AgentProfile.model_validate(parse_toml(text, where))
    except FileError as exc:
        raise ScenarioError(str(exc)) from None
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err["loc"]) or "(top level)"
        raise ScenarioError(f"{where}: field '{loc}': {err['msg']}") from None


def load_profile(name_or_path: str | Path) -> AgentProfile:
    """A shipped agent profile by name, or a TOML file by path."""
    text_name = str(name_or_path)
    path = Path(text_name)
    if path.suffix == ".toml" or exists(path):
        if not exists(path):
            raise ScenarioError(f"{shown_name(path)}: no such agent profile file")
        try:
            text = read_text(path, max_bytes=MAX_FILE_BYTES)
        except FileError as exc:
            raise ScenarioError(str(exc)) from None
        return parse_profile(text, shown_name(path))
    if text_name in shipped_profile_names():
        res = resources.files("sessions.scenarios") / _PROFILES / f"{text_name}.toml"
        return parse_profile(res.read_text(encoding="utf-8"), f"{text_name} (shipped profile)")
    known = ", ".join(shipped_profile_names())
    raise ScenarioError(f"unknown agent profile {text_name!r}; shipped profiles: {known}")


def agent_style(profile: AgentProfile, base: SpeakingStyle) -> SpeakingStyle:
    """``base`` with the profile's rate and pauses (the caller keeps ``base``)."""
    return replace(
        base,
        rate_q=tuple(profile.words_per_minute),
        sentence_pause_q=tuple(profile.sentence_pause_s),
        comma_pause_q=tuple(profile.comma_pause_s),
    )
