"""The LLM judge: one chat call per trial through any OpenAI-compatible endpoint.

The prompt (``prompts/judge.py``) shows the turns with cut markers, unheard words and
in-turn events, and asks for one JSON object: a call verdict plus one verdict per
agent turn, each with a short rationale. The answer is validated with pydantic. An
answer that is not that JSON, or a request that fails, becomes one ``error``
verdict saying what went wrong (or :class:`LlmJudgeError` with ``strict=True``);
it never crashes the caller.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from prompts.judge import JudgeTurn, judge_messages
from replay.model import ERROR, INTERRUPTIONS, JudgeVerdict, ToolResultEvent, Trial, Turn
from sessions.log.models import Opportunity, ShortPause, SpeechStart, TurnEnd

if TYPE_CHECKING:
    from sessions.llm_client import LLMClient

JUDGE = "llm"
_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL | re.IGNORECASE)


class LlmJudgeError(RuntimeError):
    """The judge produced no usable verdicts (bad answer or failed request)."""


def _lower(value: Any) -> Any:
    return value.strip().lower() if isinstance(value, str) else value


class TurnJudgement(BaseModel):
    model_config = ConfigDict(extra="ignore")
    turn: int
    label: Literal["pass", "warn", "fail"]
    rationale: str = Field(default="", max_length=2000)

    _norm = field_validator("label", mode="before")(_lower)


class CallJudgement(BaseModel):
    model_config = ConfigDict(extra="ignore")
    label: Literal["pass", "fail"]
    rationale: str = Field(default="", max_length=2000)

    _norm = field_validator("label", mode="before")(_lower)


class JudgeAnswer(BaseModel):
    """The JSON object the judge must answer with."""

    model_config = ConfigDict(extra="ignore")
    call: CallJudgement
    turns: list[TurnJudgement] = Field(default_factory=list)


def parse_answer(text: str) -> JudgeAnswer:
    """Validate the model's answer (a fenced ```json block is accepted).
    Raises :class:`LlmJudgeError` with a readable reason."""
    body = text.strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group(1)
    if not body:
        raise LlmJudgeError("the judge returned an empty answer")
    try:
        data = json.loads(body)
    except json.JSONDecodeError as exc:
        raise LlmJudgeError(
            f"the judge's answer is not JSON ({exc.msg} at line {exc.lineno} column {exc.colno}): "
            f"{_clip(body)}"
        ) from None
    try:
        return JudgeAnswer.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "answer"
        raise LlmJudgeError(
            f"the judge's JSON does not have the expected shape ({where}: {first.get('msg')}): "
            f"{_clip(body)}"
        ) from None


def _clip(text: str, limit: int = 160) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= limit else flat[: limit - 1] + "…")


def _notes(turn: Turn) -> tuple[str, ...]:
    notes = []
    for e in turn.events:
        if isinstance(e.source, ShortPause | TurnEnd | Opportunity | SpeechStart):
            continue  # the engine's internals; the judge judges the agent
        label = f' "{e.label}"' if e.label else ""
        if isinstance(e.source, INTERRUPTIONS):
            notes.append(f"the tester cut in at {e.t:.1f} s")
        elif isinstance(e.source, ToolResultEvent):
            notes.append(f"tool result at {e.t:.1f} s:{label}")
        else:
            notes.append(f"{e.kind.replace('_', ' ')}{label} at {e.t:.1f} s")
    return tuple(notes)


def judge_turns(trial: Trial) -> list[JudgeTurn]:
    """The trial's turns in the judge prompt's terms."""
    out = []
    for t in trial.turns:
        if t.speaker == "agent":
            out.append(
                JudgeTurn(
                    t.index,
                    "agent",
                    t.start,
                    t.spoken,
                    t.unspoken,
                    cut=t.interrupted and bool(t.unspoken or t.cut_t is not None),
                    notes=_notes(t),
                )
            )
        else:
            meant = t.original if t.original is not None else t.text
            out.append(
                JudgeTurn(t.index, "user", t.start, meant, heard_as=t.rendered, notes=_notes(t))
            )
    return out


@dataclass
class LlmJudge:
    """Judges trials with one chat completion each."""

    client: LLMClient
    json_mode: bool = True
    """Ask for ``response_format={"type": "json_object"}`` (dropped once if refused)."""

    def messages(self, trial: Trial, success_phrases: Sequence[str] = ()) -> list[dict[str, str]]:
        scenario = trial.task_id if trial.kind == "cutin" else trial.meta.get("task_purpose")
        return judge_messages(judge_turns(trial), scenario=scenario, criteria=success_phrases)

    def judge(
        self, trial: Trial, success_phrases: Sequence[str] = (), *, strict: bool = False
    ) -> list[JudgeVerdict]:
        """Verdicts for ``trial``: one call verdict and one per agent turn answered.
        On failure: one ``error`` verdict, or :class:`LlmJudgeError` when ``strict``."""
        try:
            text, model = self._ask(self.messages(trial, success_phrases))
            answer = parse_answer(text)
        except LlmJudgeError as exc:
            if strict:
                raise
            return [JudgeVerdict(JUDGE, ERROR, "llm", rationale=str(exc), t=trial.duration)]
        return self._verdicts(answer, trial, model)

    def _ask(self, messages: list[dict[str, str]]) -> tuple[str, str]:
        from sessions.llm_client import LLMError

        params: dict[str, Any] = {}
        if self.json_mode:
            params["response_format"] = {"type": "json_object"}
        try:
            try:
                reply = self.client.complete(messages, **params)
            except LLMError as exc:
                if not params or exc.kind != "client" or exc.status not in (400, 422):
                    raise
                reply = self.client.complete(messages)  # a server without JSON mode
        except LLMError as exc:
            raise LlmJudgeError(f"the judge request failed: {exc}") from None
        return reply.text, self.client.config.model

    def _verdicts(self, answer: JudgeAnswer, trial: Trial, model: str) -> list[JudgeVerdict]:
        agent_turns = {t.index for t in trial.agent_turns()}
        out: list[JudgeVerdict] = []
        ignored: list[int] = []
        seen: set[int] = set()
        for item in answer.turns:
            if item.turn not in agent_turns or item.turn in seen:
                ignored.append(item.turn)
                continue
            seen.add(item.turn)
            out.append(
                JudgeVerdict(
                    JUDGE,
                    item.label,
                    "llm",
                    scope="turn",
                    turn=item.turn,
                    rationale=item.rationale.strip(),
                    t=trial.turns[item.turn].start,
                    extra={"model": model},
                )
            )
        extra: dict[str, Any] = {"model": model}
        if ignored:
            extra["ignored_turns"] = ignored
        missing = sorted(agent_turns - seen)
        if missing:
            extra["unjudged_turns"] = missing
        out.append(
            JudgeVerdict(
                JUDGE,
                answer.call.label,
                "llm",
                rationale=answer.call.rationale.strip(),
                t=trial.duration,
                extra=extra,
            )
        )
        return out


__all__ = [
    "JUDGE",
    "CallJudgement",
    "JudgeAnswer",
    "LlmJudge",
    "LlmJudgeError",
    "TurnJudgement",
    "judge_turns",
    "parse_answer",
]
