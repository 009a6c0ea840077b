"""Voice budgets (DESIGN.md, "Tests and benchmarks"), measured on real espeak-ng speech.

* VAD, one 32 ms frame: streaming Silero v6 on onnxruntime (one thread), side by side
  with the optional torch backend when ``cutin[silero]`` is installed;
* STT real-time factor: faster-whisper tiny.en (int8, CPU) on a 20 s agent turn;
* agent silence onset → backchannel audio onset, through a real audio device: the
  player plays an agent turn with many pauses into a userspace PulseAudio null sink,
  streaming VAD + pause detector run on the played stream, a token is mixed in at
  each short pause, and both onsets are read off the sink's recorded monitor. Next to
  it, the τ-Voice method on the same pauses: a decision only at each 2.0 s tick of
  agent speech, plus a classifier call (stated: 0.5 s).
"""

from __future__ import annotations

import importlib.util
import math
import queue
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from controls import PauseEvent, PauseEventKind
from sessions.speech import FRAME_SAMPLES, SAMPLE_RATE
from sessions.speech.backchannel_cache import trim_silence
from sessions.speech.tts import EspeakTts
from sessions.speech.vad import FrameVad, SileroOnnxVad, load_vad, vad_probs

PHRASES = (
    "Thanks for holding, I have your order open here",
    "and I can see it was placed on the third of the month",
    "it is scheduled to ship tomorrow morning from our Dallas warehouse",
    "the delivery window is usually two to three business days",
    "I can also see the address we have on file for you",
    "which is the Elm Street one from last year",
    "if you would like, I can update that before it goes out",
    "the refund for the damaged item was approved this morning",
)
BREAKS_MS = (350, 450, 600, 400, 750, 500, 650, 380, 550, 420, 700, 480)
TAU_TICK_S = 2.0
TAU_CLASSIFIER_S = 0.5  # stated: one small-LLM classifier round trip after the tick


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    k = min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))
    return ordered[k]


def _agent_turn(tts: EspeakTts, repeats: int = 2) -> np.ndarray:
    phrases = list(PHRASES) * repeats
    parts: list[str] = []
    for i, phrase in enumerate(phrases):
        parts.append(phrase)
        if i < len(phrases) - 1:
            parts.append(f'<break time="{BREAKS_MS[i % len(BREAKS_MS)]}ms"/>')
    ssml = "<speak>" + " ".join(parts) + "</speak>"
    return tts.synthesize_ssml(ssml)


def _pauses(audio: np.ndarray, min_s: float = 0.3) -> list[tuple[float, float]]:
    """(onset, end) of inner silences, to the millisecond, from the samples."""
    hop = SAMPLE_RATE // 1000
    n = audio.size // hop
    env = np.abs(audio[: n * hop]).reshape(n, hop).max(axis=1)
    quiet = env < env.max() * 10 ** (-50 / 20)
    out: list[tuple[float, float]] = []
    i = 0
    while i < n:
        if not quiet[i]:
            i += 1
            continue
        j = i
        while j < n and quiet[j]:
            j += 1
        if i > 0 and j < n and (j - i) / 1000 >= min_s:
            out.append((i / 1000, j / 1000))
        i = j
    return out


def _frame_times_ms(vad: FrameVad, audio: np.ndarray) -> list[float]:
    frames = audio[: audio.size // FRAME_SAMPLES * FRAME_SAMPLES].reshape(-1, FRAME_SAMPLES)
    vad.reset()
    for frame in frames[:50]:  # warm up
        vad.run(frame[None, :])
    vad.reset()
    clock = time.perf_counter_ns
    out: list[float] = []
    for frame in frames:
        start = clock()
        vad.run(frame[None, :])
        out.append((clock() - start) / 1e6)
    return out


def vad_row(audio: np.ndarray) -> dict[str, object]:
    onnx = _frame_times_ms(SileroOnnxVad(), audio)
    start = time.perf_counter()
    vad_probs(audio, SileroOnnxVad())
    batched_us = (time.perf_counter() - start) / (audio.size / FRAME_SAMPLES) * 1e6
    if importlib.util.find_spec("silero_vad") is None:
        # No square brackets: the table is rendered with rich markup.
        peer = "silero-torch: not installed (the cutin 'silero' extra)"
    else:
        torch_ms = _frame_times_ms(load_vad("silero-torch"), audio)
        peer = (
            f"silero-torch: p50 {statistics.median(torch_ms):.3f} ms · "
            f"p99 {_percentile(torch_ms, 0.99):.3f} ms"
        )
    return {
        "budget": "VAD, one 32 ms frame",
        "target": "≤ 0.2 ms (median frame)",
        "measured": f"onnx p50 {statistics.median(onnx):.3f} ms · "
        f"p99 {_percentile(onnx, 0.99):.3f} ms",
        "target_value": 0.2,
        "measured_value": round(statistics.median(onnx), 4),
        "unit": "ms",
        "peer": peer,
        "note": f"streaming, 1 thread, {len(onnx):,} frames of espeak speech; "
        f"whole file batched {batched_us:.0f} µs/frame",
    }


def stt_row(tts: EspeakTts) -> dict[str, object]:
    from sessions.speech.stt import Transcriber

    audio = tts.synthesize(" ".join(PHRASES[:5]) + ".").audio
    transcriber = Transcriber().load()
    transcriber.transcribe(audio[: SAMPLE_RATE * 2])  # warm up
    runs: list[float] = []
    for _ in range(3):
        start = time.perf_counter()
        transcriber.transcribe(audio)
        runs.append(time.perf_counter() - start)
    seconds = audio.size / SAMPLE_RATE
    rtf = statistics.median(runs) / seconds
    return {
        "budget": "STT real-time factor",
        "target": "< 1 (≤ 0.25 to keep up with a live turn)",
        "measured": f"RTF {rtf:.3f}",
        "target_value": 1.0,
        "measured_value": round(rtf, 4),
        "unit": "× real time",
        "note": f"faster-whisper tiny.en int8 CPU, word timestamps; {seconds:.1f} s turn, "
        "median of 3",
    }


def _tau_voice_latencies(
    pauses: list[tuple[float, float]], turn_onset: float
) -> tuple[list[float], int]:
    """Silence onset → a τ-Voice backchannel: the next 2 s tick of agent speech, then the
    classifier call. Also counts pauses the agent has already ended by then (the token
    lands on top of resumed speech)."""
    out: list[float] = []
    late = 0
    for onset, end in pauses:
        tick = turn_onset + math.ceil((onset - turn_onset) / TAU_TICK_S) * TAU_TICK_S
        sound = tick + TAU_CLASSIFIER_S
        out.append(sound - onset)
        late += sound >= end
    return out, late


def _locate(haystack: np.ndarray, needle: np.ndarray) -> tuple[int, float]:
    from scipy.signal import correlate

    h = haystack.astype(np.float64)
    k = needle.astype(np.float64)
    if h.size < k.size:
        return 0, 0.0
    corr = correlate(h, k, mode="valid", method="fft")
    energy = np.convolve(h * h, np.ones(k.size), mode="valid")
    score = corr / (np.sqrt(np.maximum(energy, 1e-12)) * np.linalg.norm(k))
    best = int(np.argmax(score))
    return best, float(score[best])


def _play_through_device(
    agent: np.ndarray, token: np.ndarray
) -> tuple[np.ndarray, list[PauseEvent], str]:
    """Play ``agent`` with live backchannels; returns (monitor recording, events, device notes)."""
    from sessions.speech.audio import MicRecorder, Player, join_blocks
    from sessions.speech.live import PlaybackPauses
    from sessions.speech.mixer import TapBlock

    tap: queue.SimpleQueue[TapBlock] = queue.SimpleQueue()
    with MicRecorder(blocksize=256) as recorder:
        if not recorder.started.wait(10):
            raise RuntimeError("the input stream never started")
        with Player(blocksize=256, tap=tap) as player:
            player.started.wait(10)
            time.sleep(0.3)
            recorder.drain()

            def on_event(ev: PauseEvent) -> None:
                if ev.kind is PauseEventKind.SHORT_PAUSE:
                    player.mix(token, "mm-hmm")

            pauses = PlaybackPauses(tap, on_event, vad=SileroOnnxVad()).start()
            try:
                player.play(agent)
                player.wait_idle(agent.size / SAMPLE_RATE + 10)
                time.sleep(0.4)
            finally:
                pauses.stop()
            if pauses.error is not None:
                raise pauses.error
            notes = (
                f"output latency {player.output_latency_s * 1000:.0f} ms (agent and token alike), "
                f"{player.underflows} output underflows, {recorder.overflows} input overflows"
            )
        monitor = join_blocks(recorder.drain())
    return monitor, pauses.events, notes


def _token_latencies(
    monitor: np.ndarray, agent: np.ndarray, token: np.ndarray, pauses: list[tuple[float, float]]
) -> tuple[list[float], int, int]:
    """Silence onset → token onset per pause, both read off the monitor recording.

    Each pause is aligned on its own (a recording can drop or gain samples under load):
    the agent audio around it is matched in the monitor, subtracted, and the token is
    found in what is left. Returns (latencies, pauses skipped for a dropout, no token).
    """
    rate = SAMPLE_RATE
    shift, _ = _locate(monitor, agent[: rate // 2])  # monitor index of agent sample 0 (first guess)
    latencies: list[float] = []
    disturbed = missing = 0
    for onset, end in pauses:
        a = max(0, round((onset - 1.0) * rate))
        b = min(agent.size, round((end + 0.6) * rate))
        segment = agent[a:b]
        lo = max(0, shift + a - 2 * rate)
        found, s = _locate(monitor[lo : lo + segment.size + 4 * rate], segment[:rate])
        if s < 0.97:
            disturbed += 1
            continue
        seg_at = lo + found
        local = monitor[seg_at : seg_at + segment.size].copy()
        if local.size < segment.size or _locate(local, segment)[1] < 0.9:
            disturbed += 1  # a dropout inside the pause window
            continue
        shift = seg_at - a
        residual = local - segment
        tok_at, tok_score = _locate(residual, token)
        if tok_score < 0.9:
            missing += 1
            continue
        latencies.append((tok_at + a) / rate - onset)
    return latencies, disturbed, missing


def backchannel_row(tts: EspeakTts) -> dict[str, object]:
    row: dict[str, object] = {
        "budget": "agent silence onset → backchannel audio out (real audio device)",
        "target": "≤ 300 ms p95",
        "target_value": 300,
        "unit": "ms",
    }
    try:
        from tests.support.pulse import PulseUnavailable, pulse_session
    except ImportError as exc:  # the bench runs from a checkout with tests/
        return {**row, "measured": "skipped", "note": f"tests/support/pulse.py: {exc}"}
    agent = _agent_turn(tts)
    token = trim_silence(tts.synthesize("mm-hmm").audio) * 0.7
    pauses = _pauses(agent)
    turn_onset = 0.0
    tau, tau_late = _tau_voice_latencies(pauses, turn_onset)
    peer = (
        f"τ-Voice (2 s ticks + {TAU_CLASSIFIER_S:.1f} s classifier, same pauses): "
        f"p50 {statistics.median(tau) * 1000:.0f} ms · p95 {_percentile(tau, 0.95) * 1000:.0f} ms, "
        f"{tau_late}/{len(pauses)} land after the agent resumed"
    )
    try:
        with tempfile.TemporaryDirectory(prefix="cutin-pulse-") as tmp, pulse_session(Path(tmp)):
            monitor, _events, device_notes = _play_through_device(agent, token)
    except PulseUnavailable as exc:
        return {**row, "measured": "skipped", "peer": peer, "note": str(exc)}
    latencies, disturbed, missing = _token_latencies(monitor, agent, token, pauses)
    if not latencies:
        return {**row, "measured": "error", "peer": peer, "note": "no backchannel found"}
    return {
        **row,
        "measured": f"p50 {statistics.median(latencies) * 1000:.0f} ms · "
        f"p95 {_percentile(latencies, 0.95) * 1000:.0f} ms",
        "measured_value": round(_percentile(latencies, 0.95) * 1000, 1),
        "peer": peer,
        "note": f"{len(latencies)} pauses of 350-750 ms, onsets read off the PulseAudio "
        f"null-sink monitor ({missing} without a token, {disturbed} skipped for a dropout "
        f"in the recording); includes the 200 ms pause rule; {device_notes}",
    }


def rows() -> list[dict[str, object]]:
    """The rows bench/run.py prints."""
    tts = EspeakTts()
    agent = _agent_turn(tts, repeats=1)
    return [vad_row(agent), stt_row(tts), backchannel_row(tts)]
