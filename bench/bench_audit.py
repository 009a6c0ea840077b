"""Audit budget (DESIGN.md): 10k turns, 2,000 bootstrap resamples in ≤ 2 s.

10,000 realistic tester turns: 500 conversations of 10 turns, each rendered at α = 0
and at α = 0.5 (two conditions of 5,000 turns), counted by the independent counter
and audited: per condition the disfluency row with its three bootstrap intervals over
conversations (2,000 resamples, vectorised), then the τ-b trend test and the Wilcoxon
test of α = 0.5 against α = 0 with its paired bootstrap. Medians of 5 runs.

The peer is the straightforward implementation: a Python loop over resamples that
pools the picked conversations' turns one by one — measured at 200 resamples and
scaled to 2,000 (it is linear in the resample count).
"""

from __future__ import annotations

import random

import numpy as np

from bench._timing import median_seconds
from replay.audit.report import build_report
from replay.audit.sessions import Conversation
from replay.audit.texts import from_texts

CONVERSATIONS = 500
TURNS = 10
RESAMPLES = 2000
REPEATS = 5
_LINES = (
    "Hi, I'd like to change the address on my order, please.",
    "It's the one I placed last Tuesday, I think it was around noon.",
    "Yes, the new address is twelve Elm Street, apartment four B.",
    "Can you tell me when my refund will arrive? I returned it two weeks ago.",
    "Okay, that makes sense, thank you so much for checking on that for me.",
    "Sorry, what was the last part? The line cut out for a second there.",
    "No, I don't have the order number with me, but my email is on the account.",
    "I was hoping it would get here before the weekend, to be honest with you.",
)


def texts(rng: random.Random) -> list[list[str]]:
    out = []
    for c in range(CONVERSATIONS):
        turns = []
        for k in range(TURNS):
            words = rng.choice(_LINES).split()
            rng.shuffle(words)  # distinct texts, so each renders on its own seed
            turns.append(f"({c}.{k}) " + " ".join(words))
        out.append(turns)
    return out


def naive_bootstrap(convs: list[Conversation], resamples: int, seed: int) -> list[float]:
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(convs), size=(resamples, len(convs)))
    values = []
    for row in picks:
        words = combined = 0
        for i in row:
            for t in convs[i].turns:
                words += t.words
                combined += t.combined
        values.append(1000.0 * combined / words)
    return values


def rows() -> list[dict[str, object]]:
    corpus = texts(random.Random(3))
    convs = from_texts(corpus, [0.0, 0.5])
    turns = sum(len(c.turns) for c in convs)

    def full() -> None:
        build_report(from_texts(corpus, [0.0, 0.5]), ["alpha"], resamples=RESAMPLES)

    def stats_only() -> None:
        build_report(convs, ["alpha"], resamples=RESAMPLES)

    full_s = median_seconds(full, REPEATS)
    stats_s = median_seconds(stats_only, REPEATS)
    treated = [c for c in convs if c.header["tendencies"]["alpha"] == 0.5]
    peer_s = median_seconds(lambda: naive_bootstrap(treated, 200, 0), 3) * (RESAMPLES / 200)
    return [
        {
            "budget": "audit: 10k turns, 2000 bootstrap resamples",
            "target": "≤ 2 s",
            "measured": f"{full_s:.2f} s",
            "target_value": 2.0,
            "measured_value": round(full_s, 3),
            "unit": "s",
            "peer": f"naive loop ≈ {peer_s:.1f} s (one interval)",
            "note": (
                f"inject + count + audit of {turns:,} turns (2 conditions × "
                f"{CONVERSATIONS} conversations × {TURNS} turns): 3 intervals per "
                f"condition, τ-b, Wilcoxon; statistics alone {stats_s:.2f} s; "
                f"median of {REPEATS}"
            ),
        }
    ]


if __name__ == "__main__":
    for row in rows():
        print(row)
