"""How well cutin's ears hear a black-box agent: word error rate on telephone audio.

The bot's own sentences (examples/pipecat_bot.py's greeting and reply, spoken by
espeak-ng exactly as the bot speaks them: SSML breaks at ``—``) go down an 8 kHz
μ-law line and back up to 16 kHz through cutin's own codec and resamplers, then
through the agent ears' model (faster-whisper, the ``--stt`` choice; the offline
default is ``tiny.en``). Rows:

- word error rate against the known text (lower-cased, punctuation dropped), on the
  telephone line one segment at a time (each stretch between two pauses transcribed
  alone, as the ears do in a call) and on the whole clean 16 kHz audio, to show what
  the line and the short segments cost;
- how the per-word confidence separates right from wrong words: the share of wrong
  words below the "unsure" mark and the share of right words above it
  (``replay.report.confidence.UNSURE_BELOW``), which is why the screens dim exactly
  those words;
- the model's cost: seconds of CPU per second of audio (real-time factor).

``CUTIN_BENCH_STT=MODEL_DIR`` measures another faster-whisper model the same way
(a folder: nothing is downloaded).
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
TARGET_WER = 0.35
"""tiny.en on espeak over a phone line; a regression guard, not a quality claim."""
MORE_TEXTS = (
    "Your order ships on Monday — and the tracking number will arrive by text message.",
    "I can move the appointment to Thursday at four — or to Friday morning if that suits you.",
    "The refund of forty two dollars is on its way — it usually takes three to five days.",
    "Let me check that for you — one moment please — I see two accounts under this name.",
)
"""A few more agent-like sentences (numbers, days, names), beside the bot's own."""


def _bot() -> Any:
    """examples/pipecat_bot.py as a module (its texts and SSML; Pipecat is not imported)."""
    spec = importlib.util.spec_from_file_location(
        "cutin_bench_bot", REPO / "examples" / "pipecat_bot.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def normalize(text: str) -> list[str]:
    return re.sub(r"[^a-z0-9' ]+", " ", text.lower().replace("—", " ")).split()


def edit_ops(ref: list[str], hyp: list[str]) -> tuple[int, list[bool]]:
    """Word edit distance, and for each hypothesis word whether it matched the reference."""
    n, m = len(ref), len(hyp)
    d = np.zeros((n + 1, m + 1), dtype=np.int32)
    d[:, 0] = np.arange(n + 1)
    d[0, :] = np.arange(m + 1)
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            cost = 0 if ref[i - 1] == hyp[j - 1] else 1
            d[i, j] = min(d[i - 1, j] + 1, d[i, j - 1] + 1, d[i - 1, j - 1] + cost)
    right = [False] * m
    i, j = n, m
    while i > 0 and j > 0:
        if d[i, j] == d[i - 1, j - 1] + (ref[i - 1] != hyp[j - 1]):
            right[j - 1] = ref[i - 1] == hyp[j - 1]
            i, j = i - 1, j - 1
        elif d[i, j] == d[i - 1, j] + 1:
            i -= 1
        else:
            j -= 1
    return int(d[n, m]), right


def telephone(audio: np.ndarray) -> np.ndarray:
    """16 kHz → 8 kHz μ-law → 16 kHz, through cutin's own line codec."""
    from sessions.lines.codec import decode_ulaw, encode_ulaw, resampler

    down = resampler(16_000, 8_000).process(audio)
    wire = encode_ulaw(down)
    return resampler(8_000, 16_000).process(decode_ulaw(wire))


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:.0f} %"


def _share(flags: list[bool]) -> float | None:
    return sum(flags) / len(flags) if flags else None


def measure(model: str | None = None) -> dict[str, Any]:
    from replay.report.confidence import UNSURE_BELOW
    from sessions.speech.stt import Transcriber
    from sessions.speech.tts import EspeakTts

    bot = _bot()
    texts = [bot.DEFAULT_GREETING, bot.DEFAULT_REPLY, *MORE_TEXTS]
    tts = EspeakTts(words_per_minute=160)
    ears = Transcriber(model=model, cpu_threads=1).load()
    out: dict[str, Any] = {"words": 0, "errors": {"line": 0, "clean": 0}, "audio_s": 0.0}
    cpu = 0.0
    wrong_p: list[float] = []
    right_p: list[float] = []
    for text in texts:
        ref = normalize(" ".join(t for t in text.split() if t not in bot.PAUSE_TOKENS))
        out["words"] += len(ref)
        # The ears transcribe an agent turn one segment at a time, cut at its pauses:
        # so does the line row (each stretch between two "—" on its own).
        pieces = [p for p in re.split(r"\s—\s", text) if p.strip()]
        line = [telephone(tts.synthesize_ssml(bot.text_to_ssml(p, 300))) for p in pieces]
        clean = [tts.synthesize_ssml(bot.text_to_ssml(text, 300))]
        for name, segments in (("line", line), ("clean", clean)):
            t0 = time.process_time()
            heard = [w for audio in segments for w in ears.transcribe(audio).words]
            cpu += time.process_time() - t0 if name == "line" else 0.0
            if name == "line":
                out["audio_s"] += sum(a.size for a in segments) / 16_000
            hyp_words = [w for w in heard if normalize(w.word)]
            hyp = [normalize(w.word)[0] for w in hyp_words]
            errors, right = edit_ops(ref, hyp)
            out["errors"][name] += errors
            if name == "line":
                for w, ok in zip(hyp_words, right, strict=True):
                    if w.probability is not None:
                        (right_p if ok else wrong_p).append(w.probability)
    out["wer_line"] = out["errors"]["line"] / out["words"]
    out["wer_clean"] = out["errors"]["clean"] / out["words"]
    out["rtf"] = cpu / out["audio_s"]
    out["wrong_flagged"] = (
        sum(p < UNSURE_BELOW for p in wrong_p) / len(wrong_p) if wrong_p else None
    )
    out["right_kept"] = sum(p >= UNSURE_BELOW for p in right_p) / len(right_p) if right_p else None
    out["wrong_n"], out["right_n"] = len(wrong_p), len(right_p)
    out["wrong_p"], out["right_p"] = wrong_p, right_p
    return out


def rows() -> list[dict[str, Any]]:
    model = os.environ.get("CUTIN_BENCH_STT") or None
    name = Path(model).name if model else "tiny.en (offline default)"
    m = measure(model)
    return [
        {
            "budget": f"agent ears WER, 8 kHz μ-law ({name})",
            "target": f"≤ {100 * TARGET_WER:.0f} %",
            "measured": f"{100 * m['wer_line']:.1f} % of {m['words']} words",
            "note": f"clean 16 kHz: {100 * m['wer_clean']:.1f} %",
            "target_value": TARGET_WER,
            "measured_value": round(m["wer_line"], 4),
            "unit": "ratio",
            "lower_is_better": True,
        },
        {
            "budget": "unsure mark: wrong words dimmed / right words kept",
            "target": "informational",
            "measured": f"{_pct(m['wrong_flagged'])} of {m['wrong_n']} / "
            f"{_pct(m['right_kept'])} of {m['right_n']}",
            "note": "per-word confidence below the mark is dimmed with '?'",
        },
        {
            "budget": f"agent ears cost ({name})",
            "target": "informational",
            "measured": f"{m['rtf']:.3f} CPU-s per audio-s",
            "note": "one thread; transcribed once per segment between pauses",
        },
    ]


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    result = measure(os.environ.get("CUTIN_BENCH_STT") or None)
    for mark in (0.3, 0.4, 0.5, 0.6, 0.7, 0.8):
        flagged = sum(p < mark for p in result["wrong_p"]) / max(1, result["wrong_n"])
        kept = sum(p >= mark for p in result["right_p"]) / max(1, result["right_n"])
        print(f"mark {mark:.1f}: wrong words flagged {flagged:.0%}, right words kept {kept:.0%}")
