"""Budgets of the rule engine and the session log (DESIGN.md, "Tests and benchmarks").

* disfluency injection, words per second, over realistic tester utterances;
* one turn-taking decision, µs p50/p99, over the pauses of realistic agent turns,
  side by side with the τ-Voice method's LLM classifier calls;
* session log write and read, events per second, over a simulated call.
"""

from __future__ import annotations

import gc
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from controls import Situation, Tendencies, decide, inject_disfluency
from sessions.log import (
    AgentTurnEnd,
    AgentTurnStart,
    AgentWords,
    Event,
    Header,
    Opportunity,
    SessionWriter,
    ShortPause,
    TurnEnd,
    UserTurn,
    WordTiming,
    read_session,
)

# What a tester types or a simulator says in a retail call.
USER_SENTENCES = (
    "Hi, I'm calling about an order I placed last week.",
    "I need to change the shipping address before it goes out.",
    "The new address is 42 Elm Street, apartment 3B.",
    "Can you send the confirmation to jo.miller@example.com instead?",
    "Yes, that's the one, the blue jacket in a medium.",
    "Actually, wait, I think I ordered two of them.",
    "I was hoping it would arrive before the weekend, to be honest.",
    "No, I don't have the order number in front of me right now.",
    "My name is Joanna Miller, M I L L E R.",
    "Sure, the last four digits of the card are 1234.",
    "Okay, and how long will the refund take to show up?",
    "That sounds fine, thank you so much for your help.",
    "Sorry, could you repeat that last part?",
    "I'd rather get a store credit if that's possible.",
    "Well, the first one arrived damaged, the box was completely crushed.",
    "Hmm, I'm not sure, let me check my email real quick.",
    "Is there any way to upgrade the shipping to express?",
    "Great, that's all I needed today.",
)
# What a retail support agent says.
AGENT_TURNS = (
    "Thanks for calling. I have your order open here, and I can see it was placed on "
    "the third and is scheduled to ship tomorrow morning from our Dallas warehouse.",
    "I understand. Before I change anything I just need to verify a couple of details "
    "on the account, so could you confirm the email address we have on file?",
    "Perfect, thank you. I've updated the shipping address to the Elm Street one, and "
    "you'll get a new confirmation email within the next few minutes with the details.",
    "So the refund goes back to the original card. It usually takes three to five "
    "business days to show up, although some banks post it a little sooner than that.",
    "Okay. I can see two jackets on the order, both in medium, and one of them is the "
    "navy and the other is the forest green. Which one would you like to return?",
    "Got it. I've gone ahead and issued a store credit for the full amount, and it is "
    "already on your account, so you can use it right away on your next purchase.",
)


def _corpus_utterances(count: int, seed: int = 1) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.sample(USER_SENTENCES, rng.randint(1, 3))) for _ in range(count)]


def _median_seconds(run: Callable[[], object], repeats: int) -> float:
    run()  # warm up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _percentile(sorted_values: list[float], q: float) -> float:
    index = min(len(sorted_values) - 1, round(q * (len(sorted_values) - 1)))
    return sorted_values[index]


def injection_row() -> dict[str, object]:
    corpus = _corpus_utterances(20_000)
    words = sum(len(t.split()) for t in corpus)

    def run() -> None:
        for text in corpus:
            inject_disfluency(text, 0.5)

    seconds = _median_seconds(run, repeats=7)
    return {
        "budget": "disfluency injection",
        "target": "≥ 300k words/s",
        "measured": f"{words / seconds / 1000:,.0f}k words/s",
        "target_value": 300_000,
        "measured_value": round(words / seconds),
        "unit": "words/s",
        "lower_is_better": False,
        "peer": "τ-Voice: prompted, inside the LLM reply (rate not controllable)",
        "note": f"median of 7 runs, {len(corpus):,} utterances / {words:,} words, α 0.5",
    }


def _agent_situations(count: int, seed: int = 2) -> list[Situation]:
    """The short pauses of realistic agent turns: text so far, words, seconds, history."""
    rng = random.Random(seed)
    out: list[Situation] = []
    while len(out) < count:
        words = rng.choice(AGENT_TURNS).split()
        turn = rng.randint(0, 12)
        last_bc = 0
        for k in range(3, len(words) + 1, rng.randint(2, 5)):
            backchannels = 0 if k < 10 else rng.randint(0, 2)
            if backchannels:
                last_bc = rng.randint(6, k)
            out.append(
                Situation(
                    agent_speaking_seconds=k * 0.36 + rng.random(),
                    agent_words=k,
                    agent_text=" ".join(words[:k]),
                    agent_turn_index=turn,
                    interrupted_this_turn=rng.random() < 0.2,
                    backchannels_this_turn=backchannels,
                    words_at_last_backchannel=last_bc,
                )
            )
    return out[:count]


def decision_row() -> dict[str, object]:
    situations = _agent_situations(50_000)
    tendencies = Tendencies(alpha=0.5, beta=0.7, gamma=0.3)
    for s in situations[:2000]:  # warm up
        decide(s, tendencies)
    clock = time.perf_counter_ns
    samples: list[float] = []
    for s in situations:
        start = clock()
        decide(s, tendencies)
        samples.append((clock() - start) / 1000)
    samples.sort()
    p50, p99 = _percentile(samples, 0.50), _percentile(samples, 0.99)
    return {
        "budget": "rule decision (one short pause)",
        "target": "≤ 50 µs p99",
        "measured": f"p50 {p50:.1f} µs · p99 {p99:.1f} µs",
        "target_value": 50,
        "measured_value": round(p99, 2),
        "unit": "µs",
        "peer": "τ-Voice: ~3.7 LLM classifier calls per agent turn (2 s ticks)",
        "note": f"{len(samples):,} pauses of realistic agent turns, β 0.7 γ 0.3; "
        "no LLM call is made",
    }


def llm_calls_row() -> dict[str, object]:
    # decide() is pure and controls imports only the standard library (checked in
    # tests/test_import_isolation.py), so the count is structural, not sampled.
    return {
        "budget": "LLM calls spent on turn-taking",
        "target": "0 per call",
        "measured": "0",
        "target_value": 0,
        "measured_value": 0,
        "unit": "calls",
        "peer": "τ-Voice: 3.69 per agent turn (64 per conversation)",
        "note": "controls is stdlib-only and pure; see tests/test_import_isolation.py",
    }


def _simulated_call(turns: int) -> list[Event]:
    """Events a call writes: per agent turn, word chunks, pauses, an opportunity each."""
    events: list[Event] = []
    t = 0.0
    situation = _agent_situations(1)[0]
    decision = decide(situation, Tendencies(beta=0.7, gamma=0.3))
    checks = [c.as_dict() for c in decision.checks]
    pause_index = 0
    for turn in range(turns):
        text = AGENT_TURNS[turn % len(AGENT_TURNS)]
        words = text.split()
        events.append(AgentTurnStart(t=t, turn=turn, text=text))
        for first in range(0, len(words), 4):
            chunk = words[first : first + 4]
            timings = [
                WordTiming(word=w, start=t + k * 0.36, end=t + k * 0.36 + 0.3)
                for k, w in enumerate(chunk)
            ]
            t += 0.36 * len(chunk)
            events.append(AgentWords(t=t, turn=turn, words=timings, first_index=first))
            if first % 12 == 8:
                events.append(ShortPause(t=t + 0.2, index=pause_index, silence_start=t))
                events.append(
                    Opportunity(
                        t=t + 0.2,
                        index=pause_index,
                        pause_index=pause_index,
                        turn=turn,
                        decision=str(decision.action),
                        checks=checks,
                        situation=situation.as_dict(),
                    )
                )
                pause_index += 1
        events.append(TurnEnd(t=t + 0.5, silence_start=t, turn=turn))
        events.append(AgentTurnEnd(t=t + 0.5, turn=turn, text=text, spoken=text))
        user = inject_disfluency(USER_SENTENCES[turn % len(USER_SENTENCES)], 0.5)
        events.append(
            UserTurn(
                t=t + 1.0, turn=turn, original=user.original, rendered=user.rendered, alpha=0.5
            )
        )
        t += 4.0
    return events


def log_rows() -> list[dict[str, object]]:
    events = _simulated_call(turns=1200)
    header = Header(session_id="bench", started_at="2025-01-01T00:00:00+00:00")
    with tempfile.TemporaryDirectory(prefix="cutin-bench-") as tmp:
        path = Path(tmp) / "call.jsonl"
        start = time.perf_counter()
        with SessionWriter(path, header) as writer:
            for event in events:
                writer.write(event)
        write_s = time.perf_counter() - start
        size_mb = path.stat().st_size / 1e6
        read_s = _median_seconds(lambda: read_session(path), repeats=3)
    n = len(events)
    per_hour = n / (events[-1].t / 3600)
    two_hours = 2 * per_hour
    return [
        {
            "budget": "session log write",
            "target": "≥ 1k events/s (a call emits tens per s)",
            "measured": f"{n / write_s:,.0f} events/s",
            "target_value": 1000,
            "measured_value": round(n / write_s),
            "unit": "events/s",
            "lower_is_better": False,
            "note": f"{n:,} events, flushed each, fsync at turn ends; {size_mb:.1f} MB",
        },
        {
            "budget": "session log read",
            "target": "2-hour log ≤ 0.5 s (half of replay's 1 s first paint)",
            "measured": f"{n / read_s:,.0f} events/s → 2-hour log {two_hours / (n / read_s):.2f} s",
            "target_value": 0.5,
            "measured_value": round(two_hours / (n / read_s), 3),
            "unit": "s",
            "note": f"median of 3 reads; simulated call density {per_hour:,.0f} events/hour",
        },
    ]


def rows() -> list[dict[str, object]]:
    """The rows bench/run.py prints."""
    gc.collect()
    return [injection_row(), decision_row(), llm_calls_row(), *log_rows()]
