"""The gallery entry schema: one overlap or disfluency type, as a small TOML file.

An entry is data, not code: a plain-language explanation, how the type is written
in a transcript, a short call (a scenario, the three tendencies and a seed), the
caller's scripted actions where the rule engine does not produce the type by
itself, and what the example must show (``expect``), which the tests check.
Validation is pydantic's; :mod:`replay.gallery.loader` turns its errors into
messages naming the file and the field.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from sessions.scenarios.model import Scenario

ID_PATTERN = r"^[a-z0-9][a-z0-9-]*$"
Kind = Literal["overlap", "disfluency"]
MadeBy = Literal["rule", "script", "injection", "written"]
Group = Literal["overlap", "typical", "stuttering"]
InsertionKindName = Literal["filler", "repetition", "pause", "repair", "restart"]

MADE_BY_TEXT: dict[str, str] = {
    "rule": "produced by cutin's turn-taking rule",
    "script": "scripted caller action (cutin's rule does not produce this type)",
    "injection": "produced by cutin's disfluency injection",
    "written": "written example, not produced by cutin's injection",
}
"""How each origin is named to a reader (gallery badge, handout)."""


class GalleryError(ValueError):
    """An entry that cannot be used; the message names the file and the field."""


def _bad(field: str, message: str) -> ValueError:
    """An error for a cross-field rule, naming the field (pydantic gives no location here)."""
    return ValueError(f"field '{field}': {message}")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TendencySpec(_Strict):
    """The three dials for the example call (0 disables the behaviour)."""

    alpha: float = Field(default=0.0, ge=0.0, le=1.0)
    beta: float = Field(default=0.0, ge=0.0, le=1.0)
    gamma: float = Field(default=0.0, ge=0.0, le=1.0)


class ActionSpec(_Strict):
    """Something the caller does at a moment tied to the agent's speech."""

    do: Literal["interrupt", "backchannel"]
    """interrupt: start speaking over the agent; backchannel: a short sound (token)."""
    agent_turn: int = Field(ge=1)
    """Which agent turn (1 = the agent's first turn of the call)."""
    at_word: int | Literal["last"]
    """The moment the agent finishes this word of that turn (1 = first word), or "last"."""
    word_edge: Literal["start", "end"] = "end"
    """Tie the action to the moment that word starts, or (default) ends."""
    offset_s: float = Field(default=0.0, ge=-5.0, le=5.0)
    """Seconds added to that moment (negative = earlier)."""
    text: str = ""
    """interrupt: what the caller says."""
    token: str = ""
    """backchannel: the sound, as written in the transcript (default "mm-hmm")."""
    note: str = ""
    """A plain-language description of the action, shown to the reader."""

    @field_validator("at_word")
    @classmethod
    def _positive(cls, v: int | str) -> int | str:
        if isinstance(v, int) and v < 1:
            raise ValueError('must be 1 or more (1 = the first word), or "last"')
        return v

    @model_validator(mode="after")
    def _fits_do(self) -> ActionSpec:
        if self.do == "interrupt" and not self.text.strip():
            raise ValueError("an interrupt needs 'text': what the caller says")
        if self.do == "backchannel" and self.text:
            raise ValueError("a backchannel takes 'token', not 'text'")
        return self


class DisfluencySpec(_Strict):
    """A disfluency example: the caller's line before and after the disfluency."""

    original: str = Field(min_length=1)
    """The line as the caller meant it (what enters the agent's history)."""
    rendered: str = ""
    """written: the line as a transcript writes it. injection: computed by cutin."""
    spoken: str = ""
    """written: what the caller's voice says, if the notation is not speakable."""
    insertion_kind: InsertionKindName | None = None
    """injection: the kind of insertion the example shows."""


class Expect(_Strict):
    """What the example must show when it runs (checked by the tests and ``--check``)."""

    interruptions: int | None = Field(default=None, ge=0)
    backchannels: int | None = Field(default=None, ge=0)
    backchannel_token: str | None = None
    agent_yields_within_s: float | None = Field(default=None, ge=0.0)
    """After the first interruption the agent's turn ends within this many seconds."""
    agent_keeps_floor: bool | None = None
    """The interrupted agent turn is still spoken to its last word."""
    agent_stops_at_backchannel: bool | None = None
    """The agent's turn ends at the (first) backchannel."""
    talk_over_min_s: float | None = Field(default=None, ge=0.0)
    """Lower bound for ``agent_turn_end.talk_over_s`` of the interrupted turn."""
    talk_over_max_s: float | None = Field(default=None, ge=0.0)
    overlap_min_s: float | None = Field(default=None, ge=0.0)
    """Seconds in which agent and caller both make sound, at least."""
    overlap_max_s: float | None = Field(default=None, ge=0.0)
    caller_lead_s: tuple[float, float] | None = None
    """The caller starts this many seconds (min, max) before the agent's last word ends."""
    agent_words_before_cut: int | None = Field(default=None, ge=0)
    """Words the agent had finished when the caller came in."""
    insertion_kinds: list[InsertionKindName] | None = None
    """Exactly these kinds of insertions appear in the caller's rendered text."""
    rendered_contains: str | None = None
    """The caller's rendered text contains this (written examples)."""


def scenario_defaults(data: dict[str, Any], entry_id: Any, title: Any) -> dict[str, Any]:
    """An inline scenario may leave out name and title: they default to the entry's."""
    data = dict(data)
    # A bad id is reported on 'id', not a second time on the scenario's name.
    usable = isinstance(entry_id, str) and re.fullmatch(ID_PATTERN, entry_id)
    data.setdefault("name", entry_id if usable else "gallery-example")
    data.setdefault("title", title if isinstance(title, str) else "Gallery example")
    return data


class GalleryEntry(_Strict):
    """One type in the gallery."""

    id: str = Field(pattern=ID_PATTERN)
    kind: Kind
    title: str = Field(min_length=1)
    also_called: str = ""
    explanation: str = Field(min_length=40)
    """One plain-language paragraph for someone who has never seen cutin."""
    how_written: str = Field(min_length=1)
    """How the type is written in a transcript (cutin's notation)."""
    stuttering_like: bool = False
    """A stuttering-like disfluency, not a typical one; the gallery labels it so."""
    made_by: MadeBy
    order: int = 100
    """Position within its group (smaller first)."""
    seed: int = 0
    tendencies: TendencySpec = Field(default_factory=TendencySpec)
    scenario: str | Scenario
    """A shipped scenario name, or an inline scenario (the sessions scenario schema)."""
    actions: list[ActionSpec] = Field(default_factory=list)
    disfluency: DisfluencySpec | None = None
    expect: Expect = Field(default_factory=Expect)
    max_seconds: float = Field(default=60.0, gt=0.0, le=600.0)
    source: str = Field(default="", exclude=True)
    """Where it was loaded from (not part of the file)."""

    @property
    def group(self) -> Group:
        """Where the gallery and the handout show it: overlaps, typical disfluencies, or
        stuttering-like ones."""
        if self.kind == "overlap":
            return "overlap"
        return "stuttering" if self.stuttering_like else "typical"

    @model_validator(mode="before")
    @classmethod
    def _scenario_defaults(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("scenario"), dict):
            data = dict(data)
            data["scenario"] = scenario_defaults(
                data["scenario"], data.get("id"), data.get("title")
            )
        return data

    @model_validator(mode="after")
    def _consistent(self) -> GalleryEntry:
        if self.stuttering_like and self.kind != "disfluency":
            raise _bad("stuttering_like", "applies only to kind = 'disfluency'")
        if self.stuttering_like and self.made_by != "written":
            raise _bad("made_by", "a stuttering-like example is a written one ('written')")
        if self.made_by == "script" and not self.actions:
            raise _bad("actions", "made_by = 'script' needs at least one [[actions]] entry")
        if self.made_by == "rule" and self.tendencies.beta == 0 and self.tendencies.gamma == 0:
            raise _bad("tendencies", "made_by = 'rule' needs beta or gamma above 0")
        if self.kind == "disfluency":
            self._check_disfluency()
        elif self.disfluency is not None:
            raise _bad("disfluency", "belongs to kind = 'disfluency' entries only")
        return self

    def _check_disfluency(self) -> None:
        d = self.disfluency
        if d is None:
            raise _bad("disfluency", "kind = 'disfluency' needs a [disfluency] table")
        if self.made_by not in ("injection", "written"):
            raise _bad("made_by", "a disfluency example is 'injection' or 'written'")
        lines = self.caller_lines()
        if self.made_by == "injection":
            if d.insertion_kind is None:
                raise _bad("disfluency.insertion_kind", "needed for made_by = 'injection'")
            if d.rendered or d.spoken:
                raise _bad("disfluency.rendered", "leave it out: cutin computes it for 'injection'")
            if self.tendencies.alpha == 0:
                raise _bad("tendencies.alpha", "made_by = 'injection' needs alpha above 0")
            if lines is not None and d.original not in lines:
                raise _bad("disfluency.original", "must be one of the caller's scenario.user.turns")
        else:
            if not d.rendered:
                raise _bad("disfluency.rendered", "needed for made_by = 'written'")
            if self.tendencies.alpha != 0:
                raise _bad("tendencies.alpha", "a written example runs with alpha = 0")
            said = d.spoken or d.rendered
            if lines is not None and said not in lines:
                raise _bad(
                    "disfluency.spoken",
                    "(or .rendered when no .spoken) must be one of scenario.user.turns",
                )

    def caller_lines(self) -> list[str] | None:
        """The scripted caller's lines of an inline scenario (None for a shipped name)."""
        return self.scenario.user.spoken_turns if isinstance(self.scenario, Scenario) else None

    @property
    def made_by_text(self) -> str:
        return MADE_BY_TEXT[self.made_by]
