"""The prompted-disfluency audit: regenerate each position's reply under every prompt
condition, then count disfluencies over the same paired positions.

Conditions are :data:`prompts.disfluency.CONDITIONS` (the uninstructed baseline, the
method paper's prompt at three strengths, tau-Voice's directives as published and
ablated): each appends its directive to the position's system prompt and asks the
model for the reply, with the position's history as the simulator saw it
(:func:`sessions.callers.simulator.simulator_view`). Injection rows need no model: they
apply :func:`controls.inject_disfluency` at each α to the *recorded* replies.

Pairing: a position that fails under any condition (an error after retries, or an
empty reply, e.g. a content filter) is dropped from every row, the recorded and
injection rows included, and the report says how many and which.

Replies are cached on disk (:mod:`replay.prompted.reply_cache`), so a run can be stopped and
resumed; failures are not cached and are retried by the next run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Any

from prompts.disfluency import CONDITIONS, directive
from replay.prompted.positions import Position, by_conversation
from replay.prompted.reply_cache import ReplyCache, request_key
from sessions.agents.base import Message
from sessions.callers.simulator import simulator_view
from sessions.llm_client import ChatMessage, LLMClient, LLMError


@dataclass(frozen=True, slots=True)
class Generation:
    position: str
    condition: str
    text: str | None
    """None when the request failed."""
    error: str | None = None
    cached: bool = False
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def ok(self) -> bool:
        return bool(self.text and self.text.strip())


def condition_messages(position: Position, condition: str) -> list[ChatMessage]:
    """What the model is sent for ``position`` under ``condition``."""
    extra = directive(condition)
    system = f"{position.system}\n\n{extra}" if extra else position.system
    history = [Message(h.role, h.content, h.truncated) for h in position.history]
    return simulator_view(system, history)


def _request(llm: LLMClient, position: str, messages: list[ChatMessage]) -> dict[str, Any]:
    cfg = llm.config
    # The position is part of the key: two positions with the same context still get
    # independent samples, as they would without a cache.
    return {
        "position": position,
        "base_url": cfg.base_url,
        "model": cfg.model,
        "temperature": cfg.temperature,
        "max_tokens": cfg.max_tokens,
        "seed": cfg.seed,
        "messages": messages,
    }


def generate_one(
    position: Position, condition: str, llm: LLMClient, cache: ReplyCache
) -> Generation:
    """One position's reply under one condition, from the cache or the model."""
    messages = condition_messages(position, condition)
    key = request_key(_request(llm, position.id, messages))
    hit = cache.get(key)
    if hit is not None and isinstance(hit.get("text"), str):
        return Generation(
            position.id,
            condition,
            hit["text"],
            cached=True,
            prompt_tokens=int(hit.get("prompt_tokens", 0)),
            completion_tokens=int(hit.get("completion_tokens", 0)),
        )
    try:
        completion = llm.complete(messages)
    except LLMError as exc:
        return Generation(position.id, condition, None, error=str(exc))
    record = {
        "text": completion.text,
        "position": position.id,
        "condition": condition,
        "model": llm.config.model,
        "prompt_tokens": completion.stats.prompt_tokens,
        "completion_tokens": completion.stats.completion_tokens,
    }
    cache.put(key, record)
    return Generation(
        position.id,
        condition,
        completion.text,
        prompt_tokens=completion.stats.prompt_tokens,
        completion_tokens=completion.stats.completion_tokens,
    )


def generate_all(
    positions: Sequence[Position],
    conditions: Sequence[str],
    llm: LLMClient,
    cache: ReplyCache,
    *,
    jobs: int = 4,
    on_done: Callable[[Generation], None] | None = None,
) -> dict[tuple[str, str], Generation]:
    """Every (position, condition) reply, at most ``jobs`` requests in flight."""
    for c in conditions:
        if c not in CONDITIONS:
            raise ValueError(f"unknown condition {c!r}; one of {', '.join(CONDITIONS)}")
    out: dict[tuple[str, str], Generation] = {}
    pool = ThreadPoolExecutor(max_workers=max(1, jobs), thread_name_prefix="prompt-audit")
    try:
        futures = [
            pool.submit(generate_one, p, c, llm, cache) for p in positions for c in conditions
        ]
        for future in as_completed(futures):
            g = future.result()
            out[(g.position, g.condition)] = g
            if on_done is not None:
                on_done(g)
    finally:
        # On Ctrl-C: drop what has not started; finished replies are already cached.
        pool.shutdown(wait=True, cancel_futures=True)
    return out


@dataclass
class PromptAuditReport:
    model: str
    conditions: list[str]
    alphas: list[float]
    positions: int
    """Positions in the input."""
    paired: int
    """Positions kept (none of their conditions failed)."""
    conversations: int
    dropped: list[str] = field(default_factory=list)
    """Ids of positions dropped from every row."""
    failures: dict[str, int] = field(default_factory=dict)
    """Failed generations per condition."""
    errors: list[str] = field(default_factory=list)
    """A few example error messages (key-free)."""
    rows: list[dict[str, Any]] = field(default_factory=list)
    generated: int = 0
    cached: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def as_json(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "conditions": self.conditions,
            "alphas": self.alphas,
            "positions": self.positions,
            "paired": self.paired,
            "conversations": self.conversations,
            "dropped": self.dropped,
            "failures": self.failures,
            "generated": self.generated,
            "cached": self.cached,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "disfluency": self.rows,
        }


def _conversations(
    kept: Sequence[Position], text_of: Callable[[Position], str], label: str
) -> list[Any]:
    from replay.audit.counter import count
    from replay.audit.sessions import Conversation

    out = []
    for conv_id, group in by_conversation(kept).items():
        conv = Conversation(
            id=conv_id,
            source=group[0].source,
            kind="texts",
            header={"scenario": group[0].scenario, "condition": label},
        )
        conv.turns = [count(text_of(p)) for p in group]
        out.append(conv)
    return out


def build_report(
    positions: Sequence[Position],
    generations: dict[tuple[str, str], Generation],
    conditions: Sequence[str],
    alphas: Iterable[float],
    *,
    model: str,
    resamples: int = 2000,
    seed: int = 0,
) -> PromptAuditReport:
    """The disfluency rows over the positions that succeeded under every condition."""
    from controls import inject_disfluency
    from replay.audit.report import disfluency_row

    alphas = list(alphas)
    failures = {c: 0 for c in conditions}
    errors: list[str] = []
    kept: list[Position] = []
    dropped: list[str] = []
    report = PromptAuditReport(model, list(conditions), alphas, len(positions), 0, 0)
    for p in positions:
        ok = True
        for c in conditions:
            g = generations.get((p.id, c))
            if g is None or not g.ok:
                ok = False
                failures[c] += 1
                if g is not None and g.error and len(errors) < 5:
                    errors.append(g.error)
            if g is not None:
                report.cached += g.cached
                report.generated += g.text is not None and not g.cached
                report.prompt_tokens += g.prompt_tokens
                report.completion_tokens += g.completion_tokens
        if ok:
            kept.append(p)
        else:
            dropped.append(p.id)
    report.paired = len(kept)
    report.conversations = len(by_conversation(kept))
    report.dropped = dropped
    report.failures = {c: n for c, n in failures.items() if n}
    report.errors = errors

    def row(condition: dict[str, Any], text_of: Callable[[Position], str]) -> dict[str, Any]:
        convs = _conversations(kept, text_of, str(condition))
        return disfluency_row(condition, convs, resamples=resamples, seed=seed)

    def generated(condition: str) -> Callable[[Position], str]:
        return lambda p: generations[(p.id, condition)].text or ""

    def injected(alpha: float) -> Callable[[Position], str]:
        return lambda p: inject_disfluency(p.reply, alpha).rendered

    report.rows.append(row({"policy": "recorded"}, lambda p: p.reply))
    for c in conditions:
        report.rows.append(row({"policy": f"prompt: {c}", "model": model}, generated(c)))
    for a in alphas:
        report.rows.append(row({"alpha": a, "policy": "injection"}, injected(a)))
    return report
