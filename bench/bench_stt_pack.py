"""Speech-to-text per piece vs packed: word accuracy against what the agents really say,
and CPU per second of audio.

The pieces are what the agent ears cut in a call: the stretches between an agent's
pauses. Their text is known by construction: the known agent's greeting and its six
reply phrases (``examples/known_agent.py``, espeak-ng with exact SSML breaks), the
Pipecat bot's greeting and reply cut at its ``—`` pauses (``examples/pipecat_bot.py``)
and a few more agent-like sentences (``bench_agent_ears.MORE_TEXTS``), each spoken by
espeak-ng and sent down an 8 kHz μ-law line and back through cutin's codec.

``CALLS`` calls speak them at once, each starting at a different phrase, and their
pieces arrive interleaved. Three ways to transcribe them:

- **per piece** (the ears before issue 28): each piece alone, temperature fallback on;
- **packed**: :class:`sessions.speech.packing.PackedTranscriber`, pieces in arrival order
  packed into ≤ 28 s inputs with 0.5 s of silence between them, each call's side by side
  (as the worker packs them), fallback off, the loop guard on, words handed back by
  timestamp;
- **packed, one call**: the same with only one call's pieces in each pack (a single
  ``live`` call whose turn's pieces join while the worker waits);
- **packed, calls in step**: every call says the same line at the same moment (a batch
  to one agent, its calls started together), with and without the sort by call.

Each piece's words are scored against *its own* text (word edit distance per piece), so
a word handed to the wrong piece or the wrong call counts as an error twice. Rows: word
error rate, the share of heard words that are right (precision), CPU-s per audio-s.

    .venv/bin/python bench/bench_stt_pack.py          # the table
    CUTIN_BENCH_STT=MODEL_DIR ...                      # another faster-whisper model
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
CALLS = 4


def _module(name: str, path: Path) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def phrases() -> list[str]:
    """Every piece's text: the known agent's, the Pipecat bot's, a few more."""
    known = _module("cutin_bench_known_agent", REPO / "examples" / "known_agent.py")
    ears = _module("cutin_bench_agent_ears", REPO / "bench" / "bench_agent_ears.py")
    bot = ears._bot()
    out = ["Hello, you are through to the test line.", *known.REPLY_PHRASES]
    for text in (bot.DEFAULT_GREETING, bot.DEFAULT_REPLY, *ears.MORE_TEXTS):
        out += [p.strip() for p in re.split(r"\s(?:—|--|…)\s", text) if p.strip()]
    return out


def normalize(text: str) -> list[str]:
    return re.sub(r"[^a-z0-9' ]+", " ", text.lower().replace("—", " ")).split()


def render(texts: list[str]) -> list[np.ndarray]:
    from sessions.speech.tts import EspeakTts

    ears = sys.modules["cutin_bench_agent_ears"]
    tts = EspeakTts(words_per_minute=165)
    return [ears.telephone(tts.synthesize(t).audio).astype(np.float32) for t in texts]


def score(refs: list[list[str]], heard: list[list[str]]) -> dict[str, float]:
    ears = sys.modules["cutin_bench_agent_ears"]
    errors = right = said = 0
    hyp_n = 0
    for ref, hyp in zip(refs, heard, strict=True):
        e, ok = ears.edit_ops(ref, hyp)
        errors += e
        right += sum(ok)
        said += len(ref)
        hyp_n += len(hyp)
    return {
        "wer": errors / said,
        "precision": right / hyp_n if hyp_n else 0.0,
        "recall": right / said,
        "words_heard": hyp_n,
        "words_said": said,
    }


def _words(ws: list[Any]) -> list[str]:
    return [n for w in ws for n in normalize(w.word)[:1]]


def measure(
    model: str | None = None, calls: int = CALLS, only: tuple[str, ...] = ()
) -> dict[str, Any]:
    from sessions.speech.packing import PackedTranscriber, find_speech, fits
    from sessions.speech.stt import Transcriber

    texts = phrases()
    audio = render(texts)
    # Call c speaks every phrase, starting at phrase 3c; pieces arrive round-robin.
    order = [(c, (3 * c + k) % len(texts)) for k in range(len(texts)) for c in range(calls)]
    refs = [normalize(texts[i]) for _, i in order]
    pieces = [audio[i] for _, i in order]
    audio_s = sum(p.size for p in pieces) / 16_000
    transcriber = Transcriber(model=model, cpu_threads=1).load()
    transcriber.transcribe(np.zeros(16_000, np.float32))  # warm: VAD and tokenizer loaded
    out: dict[str, Any] = {"pieces": len(pieces), "audio_s": audio_s, "calls": calls}

    def wanted(mode: str) -> bool:
        return not only or mode in only

    if wanted("per_piece"):
        t0 = time.process_time()
        heard = [_words(transcriber.transcribe(p).words) for p in pieces]
        out["per_piece"] = score(refs, heard) | {"cpu": (time.process_time() - t0) / audio_s}

    packer = PackedTranscriber(transcriber)
    # Where each piece has speech, as the worker finds it; a pack is filled by speech.
    speech = [find_speech(p, transcriber.skip_silence_ms) for p in pieces]
    speech_s = [sum(b - a for a, b in s) / 16_000 for s in speech]

    whole = [[(0, p.size)] for p in pieces]
    whole_s = [p.size / 16_000 for p in pieces]

    def packed(
        groups: list[list[int]], *, by_call: bool = True, filtered: bool = True
    ) -> dict[str, Any]:
        where, seconds = (speech, speech_s) if filtered else (whole, whole_s)
        heard: list[list[str]] = [[] for _ in pieces]
        t0 = time.process_time()
        packs = 0
        for group in groups:
            i = 0
            while i < len(group):
                n = fits([seconds[k] for k in group[i:]])
                chunk = group[i : i + n]
                if by_call:  # each call's pieces side by side, as the packing worker packs
                    chunk = sorted(chunk, key=lambda k: order[k][0])
                results, _ = packer.transcribe_pieces(
                    [pieces[k] for k in chunk], [0.0] * len(chunk), [where[k] for k in chunk]
                )
                for k, r in zip(chunk, results, strict=True):
                    heard[k] = _words(r.words)
                i += n
                packs += 1
        cpu = (time.process_time() - t0) / audio_s
        loops = packer.stats.loops - loops0
        return score(refs, heard) | {"cpu": cpu, "packs": packs, "loops": loops}

    loops0 = 0
    if wanted("packed"):
        out["packed"] = packed([list(range(len(pieces)))])
    if wanted("packed_one_call"):
        loops0 = packer.stats.loops
        out["packed_one_call"] = packed(
            [[k for k, (c, _) in enumerate(order) if c == call] for call in range(calls)]
        )
    if wanted("packed_in_step"):
        # Every call says the same line at the same moment (a batch to one agent, its
        # calls started together): identical pieces side by side in one input.
        loops0 = packer.stats.loops
        in_step = sorted(range(len(pieces)), key=lambda k: (order[k][1], order[k][0]))
        out["packed_in_step"] = packed([in_step])
        loops0 = packer.stats.loops
        out["packed_in_step_unsorted"] = packed([in_step], by_call=False)
    if wanted("packed_no_vad"):
        loops0 = packer.stats.loops
        out["packed_no_vad"] = packed([list(range(len(pieces)))], filtered=False)
    return out


MODES = (
    ("per_piece", "per piece (fallback on)"),
    ("packed", "packed, calls out of step"),
    ("packed_one_call", "packed, one call's pieces"),
    ("packed_in_step", "packed, calls in step"),
    ("packed_in_step_unsorted", "  in step, not sorted by call"),
    ("packed_no_vad", "packed, no VAD filter"),
)


def rows() -> list[dict[str, Any]]:
    m = measure(os.environ.get("CUTIN_BENCH_STT") or None)
    out = []
    for key, name in MODES:
        r = m[key]
        out.append(
            {
                "budget": f"agent ears, {name}: WER / right share / cost",
                "target": "informational",
                "measured": f"{100 * r['wer']:.1f} % / {100 * r['precision']:.0f} % / "
                f"{r['cpu']:.3f} CPU-s per audio-s",
                "note": f"{m['pieces']} pieces, {m['audio_s']:.0f} s, {m['calls']} calls; "
                f"{r['words_heard']} of {r['words_said']} words heard",
            }
        )
    return out


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    chosen = tuple(sys.argv[1:])  # e.g. packed packed_in_step: only those modes
    result = measure(os.environ.get("CUTIN_BENCH_STT") or None, only=chosen)
    print(f"{result['pieces']} pieces, {result['audio_s']:.1f} s of audio, {result['calls']} calls")
    for key, name in MODES:
        if key not in result:
            continue
        r = result[key]
        print(
            f"{name:28s} WER {100 * r['wer']:5.1f} %  right {100 * r['precision']:4.0f} %  "
            f"recall {100 * r['recall']:4.0f} %  heard {r['words_heard']}/{r['words_said']}  "
            f"{r['cpu']:.3f} CPU-s/audio-s"
            + (f"  {r['packs']} packs, {r['loops']} loops cut" if "packs" in r else "")
        )
