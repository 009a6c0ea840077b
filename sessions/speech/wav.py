"""WAV files and bytes to and from mono float32 arrays at 16 kHz.

The stdlib ``wave`` module reads integer PCM (what espeak-ng, sox and most recorders
write); float or WAVE_FORMAT_EXTENSIBLE files, which ``wave`` rejects on Python 3.11,
go through ``scipy.io.wavfile``. Any other rate is resampled, more channels are mixed
down, so callers only ever see :data:`sessions.speech.SAMPLE_RATE` mono audio.
"""

from __future__ import annotations

import io
import wave
from math import gcd
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from sessions.speech import SAMPLE_RATE

Audio = npt.NDArray[np.float32]


class WavError(ValueError):
    """A file or byte string that is not a readable WAV; the message is one line."""


def to_mono(samples: npt.NDArray[Any]) -> Audio:
    """Average the channels of a (frames, channels) array; a 1-D array passes through."""
    arr = np.asarray(samples, dtype=np.float32)
    if arr.ndim == 1:
        return arr
    if arr.ndim == 2:
        return np.asarray(arr.mean(axis=1), dtype=np.float32)
    raise ValueError(f"expected a 1-D or 2-D sample array, got shape {arr.shape}")


def resample(audio: npt.NDArray[Any], src_rate: int, dst_rate: int = SAMPLE_RATE) -> Audio:
    """Polyphase resampling (scipy ``resample_poly``) from ``src_rate`` to ``dst_rate``."""
    arr = np.asarray(audio, dtype=np.float32)
    if src_rate == dst_rate or arr.size == 0:
        return arr
    if src_rate <= 0 or dst_rate <= 0:
        raise ValueError("sample rates must be positive")
    from scipy.signal import resample_poly

    g = gcd(src_rate, dst_rate)
    out = resample_poly(arr, dst_rate // g, src_rate // g)
    return np.asarray(out, dtype=np.float32)


def pcm16_to_float(data: bytes) -> Audio:
    """Little-endian signed 16-bit PCM bytes to float32 in [-1, 1)."""
    usable = len(data) - len(data) % 2
    return np.frombuffer(data[:usable], dtype="<i2").astype(np.float32) / 32768.0


def float_to_pcm16(audio: npt.NDArray[Any]) -> bytes:
    """float32 in [-1, 1] to little-endian signed 16-bit PCM bytes (clipped)."""
    clipped = np.clip(np.asarray(audio, dtype=np.float32), -1.0, 1.0)
    return (clipped * 32767.0).round().astype("<i2").tobytes()


def _int_pcm(raw: bytes, width: int, channels: int) -> npt.NDArray[np.float32]:
    if width == 1:  # 8-bit WAV is unsigned
        ints = np.frombuffer(raw, dtype=np.uint8).astype(np.float32)
        out = (ints - 128.0) / 128.0
    elif width == 2:
        out = np.frombuffer(raw, dtype="<i2").astype(np.float32) / 32768.0
    elif width == 3:
        b = np.frombuffer(raw[: len(raw) - len(raw) % 3], dtype=np.uint8).reshape(-1, 3)
        ints32 = (
            b[:, 0].astype(np.int32)
            | (b[:, 1].astype(np.int32) << 8)
            | (b[:, 2].astype(np.int32) << 16)
        )
        ints32 = np.where(ints32 >= 1 << 23, ints32 - (1 << 24), ints32)
        out = ints32.astype(np.float32) / float(1 << 23)
    elif width == 4:
        out = np.frombuffer(raw, dtype="<i4").astype(np.float32) / float(1 << 31)
    else:
        raise WavError(f"unsupported sample width: {width * 8} bits")
    usable = out.size - out.size % channels
    return out[:usable].reshape(-1, channels)


def _decode_with_wave(source: io.BytesIO | Path) -> tuple[npt.NDArray[np.float32], int]:
    with wave.open(str(source) if isinstance(source, Path) else source, "rb") as w:
        channels, width, rate = w.getnchannels(), w.getsampwidth(), w.getframerate()
        # espeak-ng --stdout writes a placeholder frame count; readframes stops at EOF.
        raw = w.readframes(w.getnframes())
    if channels < 1 or rate <= 0:
        raise WavError("bad WAV header")
    return _int_pcm(raw, width, channels), rate


def _decode_with_scipy(source: io.BytesIO | Path) -> tuple[npt.NDArray[np.float32], int]:
    from scipy.io import wavfile

    rate, data = wavfile.read(source)
    arr = np.asarray(data)
    if arr.dtype.kind == "f":
        samples = arr.astype(np.float32)
    elif arr.dtype == np.uint8:
        samples = (arr.astype(np.float32) - 128.0) / 128.0
    elif arr.dtype.kind == "i":
        samples = arr.astype(np.float32) / float(np.iinfo(arr.dtype).max + 1)
    else:
        raise WavError(f"unsupported sample type {arr.dtype}")
    if samples.ndim == 1:
        samples = samples[:, None]
    return samples, int(rate)


def _decode(source: io.BytesIO | Path, rate: int) -> Audio:
    try:
        try:
            samples, src_rate = _decode_with_wave(source)
        except wave.Error as exc:
            if "unknown format" not in str(exc):
                raise
            if isinstance(source, io.BytesIO):
                source.seek(0)
            samples, src_rate = _decode_with_scipy(source)
    except WavError:
        raise
    except EOFError:
        raise WavError("not a readable WAV (the file is empty or cut short)") from None
    except (wave.Error, ValueError) as exc:
        raise WavError(f"not a readable WAV ({exc or type(exc).__name__})") from None
    return resample(to_mono(samples), src_rate, rate)


def read_wav(path: str | Path, rate: int = SAMPLE_RATE) -> Audio:
    """Read a WAV file as mono float32 at ``rate`` (resampling, mixing down).

    Raises :class:`WavError` with a one-line message for a missing or unreadable file.
    """
    p = Path(path)
    if not p.is_file():
        raise WavError(f"{p}: no such file")
    try:
        return _decode(p, rate)
    except WavError as exc:
        raise WavError(f"{p}: {exc}") from None
    except OSError as exc:
        raise WavError(f"{p}: {exc.strerror or exc}") from None


def decode_wav(data: bytes, rate: int = SAMPLE_RATE) -> Audio:
    """Decode WAV bytes (e.g. espeak-ng's ``--stdout``) as mono float32 at ``rate``."""
    return _decode(io.BytesIO(data), rate)


def wav_bytes(audio: npt.NDArray[Any], rate: int = SAMPLE_RATE) -> bytes:
    """Mono float32 audio as 16-bit PCM WAV bytes."""
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(float_to_pcm16(audio))
    return buf.getvalue()


def write_wav(path: str | Path, audio: npt.NDArray[Any], rate: int = SAMPLE_RATE) -> Path:
    """Write mono float32 audio as a 16-bit PCM WAV file (parent folders created)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(wav_bytes(audio, rate))
    return p
