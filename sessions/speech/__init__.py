"""Speech I/O for a live call: VAD, TTS, STT and audio devices. Headless (no Textual).

Everything here works on mono float32 audio at :data:`SAMPLE_RATE` (16 kHz), the
rate Silero VAD and Whisper use. Modules, each importing its heavy dependency only
inside the functions that need it:

- ``wav``: read/write WAV files and bytes, resample, mix down to mono.
- ``vad``: Silero VAD v6 (onnxruntime; optional torch backend) feeding
  ``controls.PauseDetector``: streaming class and whole-file function, talk-over.
- ``tts``: espeak-ng and OpenAI speech synthesis, with estimated word timings.
- ``backchannel_cache``: listener tokens synthesized once, cached on disk and in memory.
- ``stt``: faster-whisper transcription with word timestamps; per-turn "heard so far".
- ``segmenter``: VAD-segmented hands-free utterances and push-to-talk capture.
- ``mixer``: the pure sample mixer behind the player (testable without a device).
- ``audio``: sounddevice Player / Recorder; ``devices``: listing and selection.

This file stays free of heavy imports so ``import sessions.speech`` is instant.
"""

from __future__ import annotations

SAMPLE_RATE = 16_000
"""Every array in this package is mono float32 at this rate."""

FRAME_SAMPLES = 512
"""One VAD frame: 512 new samples = 32 ms."""

FRAME_S = FRAME_SAMPLES / SAMPLE_RATE

__all__ = ["FRAME_S", "FRAME_SAMPLES", "SAMPLE_RATE"]
