"""Speech I/O for a live call: VAD, TTS, STT and audio devices. Headless (no Textual).

Everything here works on mono float32 audio at :data:`SAMPLE_RATE` (16 kHz), the
rate Silero VAD and Whisper use. Modules, each importing its heavy dependency only
inside the functions that need it:

- ``wav``: read/write WAV files and bytes, resample, mix down to mono.
- ``vad``: Silero VAD v6 (onnxruntime; optional torch backend) feeding
  ``controls.PauseDetector``: streaming class and whole-file function, talk-over.
- ``tts``: espeak-ng and OpenAI speech synthesis; ``timing``: estimated word times.
- ``backchannel_cache``: listener tokens synthesized once, cached on disk and in memory.
- ``stt``: faster-whisper transcription with word timestamps; per-turn "heard so far".
- ``segmenter``: VAD-segmented hands-free utterances and push-to-talk capture.
- ``mixer``: the pure sample mixer behind the player (testable without a device).
- ``audio``: sounddevice Player / Recorder; ``devices``: import guard, listing, selection.
- ``live``: pause detection on the stream the player actually plays.
- ``words``: timed words and the spoken/unspoken split at a cut.
- ``speech_clock``: how long speech takes (speaking styles, rates, word times) without audio.
- ``hesitation``: how the human style's hesitations sound (silences and filled pauses).

A voice call wires them like this: agent text → TTS → ``Player.play``; the player's
tap → ``PlaybackPauses`` → pause events → ``controls.decide`` → ``Player.mix(token)``
or an interruption; an interruption is ``Player.stop()`` (the played position gives
the cut word via ``words.split_at``). The tester's mic → ``Recorder`` → segmenter →
``Transcriber`` → ``controls.inject_disfluency`` → TTS.

This file stays free of heavy imports so ``import sessions.speech`` is instant.
"""

from __future__ import annotations

SAMPLE_RATE = 16_000
"""Every array in this package is mono float32 at this rate."""

FRAME_SAMPLES = 512
"""One VAD frame: 512 new samples = 32 ms."""

FRAME_S = FRAME_SAMPLES / SAMPLE_RATE

__all__ = ["FRAME_S", "FRAME_SAMPLES", "SAMPLE_RATE"]
