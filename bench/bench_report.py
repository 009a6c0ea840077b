"""The HTML report's budgets (issue 30): a 2-hour log renders in under 5 s and the page
stays under 5 MB; a call with its recording embeds at most 8 MB of audio.

* the synthetic two-hour session log of bench_replay (one ``agent_words`` event per
  word, pauses, opportunities, backchannels, interruptions) rendered by
  ``cutin report LOG --format html``'s renderer: load + model + the page (120 timeline
  strips, one a minute), timed from the file;
* a 10-minute call of the same log with a two-channel 16 kHz recording beside it: the
  agent's sound read from the WAV, and every turn with a cut, a backchannel or a yield
  cut out and embedded until the page's 8 MB audio cap.
"""

from __future__ import annotations

import random
import tempfile
import wave
from pathlib import Path

import numpy as np

from bench._timing import median_seconds
from bench.bench_replay import synthetic_call
from sessions.log.models import Event, Header
from sessions.log.writer import dump_line

REPEATS = 3
BUDGET_S = 5.0
BUDGET_MB = 5.0
RATE = 16000


def _write(folder: Path, events: list[Event], name: str) -> Path:
    header = Header(session_id=name, started_at="2026-01-01T00:00:00+00:00", scenario="bench")
    path = folder / f"{name}.jsonl"
    path.write_text(dump_line(header) + "".join(dump_line(e) for e in events), encoding="utf-8")
    return path


def _recording(log: Path, seconds: float) -> None:
    """Noise on both channels (the content does not matter to the cost)."""
    rng = np.random.default_rng(3)
    with wave.open(str(log.with_suffix(".wav")), "wb") as w:
        w.setnchannels(2)
        w.setsampwidth(2)
        w.setframerate(RATE)
        for _ in range(int(seconds // 60)):
            w.writeframes(rng.integers(-3000, 3000, RATE * 60 * 2, dtype="<i2").tobytes())


def _render(path: Path) -> str:
    from replay.load import load_paths
    from replay.report.trials import render

    return render(load_paths([path]), "html", [])


def rows() -> list[dict[str, object]]:
    """The rows bench/run.py prints."""
    from replay.report.call_audio import PAGE_CAP_BYTES

    events, words = synthetic_call(random.Random(7))
    with tempfile.TemporaryDirectory() as tmp:
        log = _write(Path(tmp), events, "bench2h")
        seconds = median_seconds(lambda: _render(log), REPEATS)
        page = _render(log)
        strips = page.count('<svg class="strip"')
        size_mb = len(page.encode("utf-8")) / 1e6
        ten = [e for e in events if e.t < 600.0]
        short = _write(Path(tmp), ten, "bench10m")
        _recording(short, 600.0)
        audio_s = median_seconds(lambda: _render(short), REPEATS)
        with_audio = _render(short)
    clips = with_audio.count("<audio")
    audio_mb = len(with_audio.encode("utf-8")) / 1e6
    return [
        {
            "budget": "report: a 2-hour log as HTML",
            "target": f"≤ {BUDGET_S:.0f} s",
            "measured": f"{seconds:.2f} s (load + page)",
            "target_value": BUDGET_S,
            "measured_value": round(seconds, 3),
            "unit": "s",
            "note": f"{words:,} words, {strips} timeline strips; median of {REPEATS}",
        },
        {
            "budget": "report: its page size",
            "target": f"≤ {BUDGET_MB:.0f} MB",
            "measured": f"{size_mb:.2f} MB",
            "target_value": BUDGET_MB,
            "measured_value": round(size_mb, 3),
            "unit": "MB",
            "note": "no recording beside the log: timeline and tables only",
        },
        {
            "budget": "report: a 10-minute call with its recording",
            "target": f"audio ≤ {PAGE_CAP_BYTES / 2**20:.0f} MB a page",
            "measured": f"{audio_s:.2f} s, {audio_mb:.1f} MB",
            "note": f"{clips} stretches to listen to (embedded until the cap, the rest "
            "noted); the agent's sound read from the 19 MB WAV",
        },
    ]
