"""Measure real agents' turns in τ2-bench result files: the numbers behind the
``tau2-voice`` agent profile (``sessions/scenarios/profiles/tau2-voice.toml``).

    .venv/bin/python bench/measure_agent_turns.py RESULTS.json [VOICE_DIR ...]

* A monolithic ``results.json`` (half-duplex, with message text): per agent message
  with text, its words, sentences, words per sentence, commas per word, and whether
  its last sentence is a question. Quantiles at 0, 10, ..., 100 %.
* A ``dir`` layout with full-duplex ``simulations/*.json``: the agent's unbroken
  speech runs (consecutive 0.2 s ticks with ``contains_speech``), in seconds, and the
  gaps between them. The ticks carry no pause shorter than a tick, so they bound
  the turn length in seconds but cannot show the 200 ms pauses inside a turn.

Prints JSON. Nothing is written; the files are only read.
"""

from __future__ import annotations

import json
import re
import statistics
import sys
from pathlib import Path
from typing import Any

TICK_S = 0.2
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def quantiles(values: list[float], n: int = 10) -> list[float]:
    """Min, the n-1 cut points (inclusive method) and max."""
    if len(values) < 2:
        return [float(v) for v in values]
    cuts = statistics.quantiles(values, n=n, method="inclusive")
    return [round(float(v), 2) for v in (min(values), *cuts, max(values))]


def agent_messages(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text(encoding="utf-8"))
    words: list[float] = []
    sentences: list[float] = []
    sentence_words: list[float] = []
    commas = 0
    questions = 0
    for sim in data.get("simulations", []):
        for m in sim.get("messages") or []:
            text = m.get("content") if m.get("role") == "assistant" else None
            if not text or not text.strip():
                continue
            tokens = text.split()
            parts = [s for s in _SENTENCE.split(text.strip()) if s]
            words.append(len(tokens))
            sentences.append(len(parts))
            sentence_words.extend(len(s.split()) for s in parts)
            commas += sum(1 for t in tokens if t.endswith((",", ";", ":")))
            questions += parts[-1].rstrip().endswith("?")
    n = len(words)
    return {
        "file": path.name,
        "agent_messages": n,
        "words": quantiles(words),
        "words_median": statistics.median(words) if words else None,
        "sentences": quantiles(sentences),
        "words_per_sentence": quantiles(sentence_words),
        "commas_per_word": round(commas / sum(words), 3) if words else None,
        "ends_with_question": round(questions / n, 3) if n else None,
    }


def speech_runs(folder: Path) -> dict[str, Any]:
    runs: list[float] = []
    gaps: list[float] = []
    files = sorted((folder / "simulations").glob("*.json"))
    for f in files:
        ticks = json.loads(f.read_text(encoding="utf-8")).get("ticks") or []
        on = [bool((t.get("agent_chunk") or {}).get("contains_speech")) for t in ticks]
        start: int | None = None
        last_end: int | None = None
        for i, speaking in enumerate([*on, False]):
            if speaking and start is None:
                start = i
                if last_end is not None:
                    gaps.append((i - last_end) * TICK_S)
            elif not speaking and start is not None:
                runs.append((i - start) * TICK_S)
                start, last_end = None, i
    return {
        "folder": folder.name,
        "simulations": len(files),
        "speech_runs": len(runs),
        "run_seconds": quantiles(runs),
        "run_median_s": round(statistics.median(runs), 2) if runs else None,
        "shortest_gap_s": round(min(gaps), 2) if gaps else None,
    }


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    out = []
    for arg in argv:
        p = Path(arg)
        out.append(speech_runs(p) if p.is_dir() else agent_messages(p))
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
