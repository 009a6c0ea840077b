"""Listener tokens ("mm-hmm", "yeah", …) synthesized once, kept on disk and in memory.

A backchannel must start the instant a short pause fires, so the tokens are never
synthesized on the call's critical path: :meth:`BackchannelCache.load` reads each
token's WAV from ``<cache_dir>/backchannels/<voice>/`` (synthesizing and writing the
missing ones first) and keeps the arrays in memory, trimmed of leading and trailing
silence so the token's sound begins at its first sample.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from sessions.speech import SAMPLE_RATE
from sessions.speech.tts import Tts
from sessions.speech.wav import WavError, read_wav, write_wav

Audio = npt.NDArray[np.float32]

BACKCHANNEL_TOKENS = ("mm-hmm", "yeah", "right", "uh-huh", "okay")


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_") or "token"


def trim_silence(
    audio: npt.NDArray[Any], *, floor_db: float = -45.0, keep_s: float = 0.005
) -> Audio:
    """Cut leading/trailing samples quieter than ``floor_db`` below the peak (keep a few ms)."""
    arr = np.asarray(audio, dtype=np.float32).reshape(-1)
    if arr.size == 0:
        return arr
    peak = float(np.abs(arr).max())
    if peak <= 0.0:
        return arr[:0]
    loud = np.nonzero(np.abs(arr) >= peak * 10 ** (floor_db / 20))[0]
    keep = int(keep_s * SAMPLE_RATE)
    start = max(0, int(loud[0]) - keep)
    end = min(arr.size, int(loud[-1]) + 1 + keep)
    return arr[start:end].copy()


class BackchannelCache:
    """Tokens for one TTS voice. ``load()`` once before the call; ``get()`` is instant."""

    def __init__(
        self,
        tts: Tts,
        cache_dir: str | Path,
        tokens: Iterable[str] = BACKCHANNEL_TOKENS,
    ) -> None:
        self.tts = tts
        self.tokens = tuple(tokens)
        self.folder = Path(cache_dir) / "backchannels" / _safe(tts.cache_key)
        self._audio: dict[str, Audio] = {}
        self.synthesized: list[str] = []
        """Tokens synthesized (not read from disk) by the last :meth:`load`."""

    def path_for(self, token: str) -> Path:
        return self.folder / f"{_safe(token)}.wav"

    def load(self) -> BackchannelCache:
        """Fill memory from disk, synthesizing (and caching) whatever is missing."""
        self.synthesized = []
        for token in self.tokens:
            path = self.path_for(token)
            audio: Audio | None = None
            if path.is_file():
                try:
                    audio = read_wav(path)
                except WavError:
                    audio = None  # a damaged cache file is rebuilt below
            if audio is None or audio.size == 0:
                self._write(path, trim_silence(self.tts.synthesize(token).audio))
                # Read back so memory holds exactly what later runs will load.
                audio = read_wav(path)
                self.synthesized.append(token)
            self._audio[token] = audio
        return self

    def _write(self, path: Path, audio: Audio) -> None:
        # Write then rename, so a concurrent reader never sees half a file.
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        write_wav(tmp, audio)
        tmp.replace(path)

    def get(self, token: str) -> Audio:
        """The token's samples (16 kHz mono float32). ``KeyError`` before :meth:`load`."""
        return self._audio[token]

    def __contains__(self, token: object) -> bool:
        return token in self._audio

    def duration(self, token: str) -> float:
        return self._audio[token].size / SAMPLE_RATE
