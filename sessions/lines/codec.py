"""G.711 μ-law and streaming resampling for lines to black-box agents.

μ-law is the 8 kHz phone format Twilio Media Streams carry: one byte per sample,
sign-magnitude on a logarithmic scale, every bit inverted (so digital silence is
``0xFF``). The encoder and decoder here are the classic G.711 segment algorithm,
vectorized with numpy (``audioop`` left the standard library in Python 3.13).

:class:`StreamResampler` converts between any two integer rates chunk by chunk. It is
a polyphase FIR (the Kaiser-windowed low-pass that ``scipy.signal.resample_poly``
designs, built and run with numpy alone, so a line does not import ``scipy.signal``)
whose state is carried from one chunk to the next, so the output of a stream cut into
arbitrary chunks equals the output of the whole stream and chunk boundaries make no
clicks. It is causal: the output lags the input by :attr:`StreamResampler.delay_s`
(about a millisecond for 8 ↔ 16 kHz). It runs as one convolution per phase of the
filter, over blocks of at most :data:`BLOCK_SAMPLES`, so one huge message from an agent
costs a few megabytes, not gigabytes.
"""

from __future__ import annotations

from collections.abc import Callable
from math import gcd
from typing import Any

import numpy as np
import numpy.typing as npt

Audio = npt.NDArray[np.float32]

BLOCK_SAMPLES = 1 << 16
"""The most input samples :class:`StreamResampler` filters at once: its memory stays a
few megabytes whatever size of input one call is handed."""

ULAW_SILENCE = 0xFF
"""The μ-law byte for a zero sample."""
_BIAS = 0x84
_CLIP14 = 8159
"""The largest 14-bit magnitude G.711 encodes (the encoder works on the top 14 bits)."""
_SEGMENT_ENDS = np.array([0x3F, 0x7F, 0xFF, 0x1FF, 0x3FF, 0x7FF, 0xFFF, 0x1FFF], dtype=np.int32)


def _decode_table() -> npt.NDArray[np.int16]:
    codes = ~np.arange(256, dtype=np.int32) & 0xFF
    exponent = (codes >> 4) & 0x07
    mantissa = codes & 0x0F
    magnitude = (((mantissa << 3) + _BIAS) << exponent) - _BIAS
    return np.where(codes & 0x80, -magnitude, magnitude).astype(np.int16)


_DECODE = _decode_table()


def pcm16_to_ulaw(samples: npt.NDArray[Any]) -> bytes:
    """Signed 16-bit samples (any integer array) to μ-law bytes, one per sample.

    The ITU G.711 reference encoder on the top 14 bits (bit-exact with the old
    ``audioop.lin2ulaw``).
    """
    pcm = np.asarray(samples).astype(np.int32).reshape(-1) >> 2
    mask = np.where(pcm < 0, 0x7F, 0xFF)
    magnitude = np.minimum(np.abs(pcm), _CLIP14) + (_BIAS >> 2)
    segment = np.searchsorted(_SEGMENT_ENDS, magnitude, side="left").astype(np.int32)
    code = (segment << 4) | ((magnitude >> (segment + 1)) & 0x0F)
    code = np.where(segment >= 8, 0x7F, code) ^ mask
    return code.astype(np.uint8).tobytes()


def ulaw_to_pcm16(data: bytes) -> npt.NDArray[np.int16]:
    """μ-law bytes to signed 16-bit samples (a lookup; every byte is a valid code)."""
    return _DECODE[np.frombuffer(data, dtype=np.uint8)]


def _to_pcm16(samples: npt.NDArray[Any]) -> npt.NDArray[np.float32]:
    """Float samples in [-1, 1] (clipped) as 16-bit values, for a G.711 encoder."""
    audio = np.clip(np.asarray(samples, dtype=np.float32).reshape(-1), -1.0, 1.0)
    return np.round(audio * 32767.0)


def _to_float(pcm: npt.NDArray[np.int16]) -> Audio:
    """A G.711 decoder's 16-bit samples as float32 in [-1, 1)."""
    return (pcm.astype(np.float32) / 32768.0).astype(np.float32)


def _encode_table(encode: Callable[[npt.NDArray[Any]], bytes]) -> npt.NDArray[np.uint8]:
    """Every 16-bit sample's code, by the reference encoder: a line encodes each 20 ms
    frame of every call with one lookup instead of the segment search."""
    return np.frombuffer(encode(np.arange(-32768, 32768, dtype=np.int32)), dtype=np.uint8)


_ULAW_ENCODE = _encode_table(pcm16_to_ulaw)


def _table_index(samples: npt.NDArray[Any]) -> npt.NDArray[np.intp]:
    """Float samples in [-1, 1] (clipped, rounded to 16 bits) as indices into a table of
    the 65,536 sample values (a NaN as silence: it must not index outside the table)."""
    pcm = _to_pcm16(samples)
    if not np.isfinite(pcm).all():
        pcm = np.nan_to_num(pcm)
    return pcm.astype(np.intp) + 32768


def encode_ulaw(samples: npt.NDArray[Any]) -> bytes:
    """Float samples in [-1, 1] (clipped) to μ-law bytes."""
    return _ULAW_ENCODE[_table_index(samples)].tobytes()


_ULAW_FLOAT = _to_float(_DECODE)


def decode_ulaw(data: bytes) -> Audio:
    """μ-law bytes to float32 samples in [-1, 1) (one lookup)."""
    return _ULAW_FLOAT[np.frombuffer(data, dtype=np.uint8)]


# -- G.711 A-law (Telnyx's PCMA, SIP) ----------------------------------------------------
# The European companding law: sign-magnitude, 13-bit linear input, 8 segments (the first
# two linear), and the even bits inverted on the wire (0x55), so digital silence is 0xD5.

ALAW_SILENCE = 0xD5
"""The A-law byte for a zero sample."""
_ALAW_SEGMENT_ENDS = np.array([0x1F, 0x3F, 0x7F, 0xFF, 0x1FF, 0x3FF, 0x7FF, 0xFFF], dtype=np.int32)


def _alaw_decode_table() -> npt.NDArray[np.int16]:
    codes = np.arange(256, dtype=np.int32) ^ 0x55
    segment = (codes & 0x70) >> 4
    magnitude = ((codes & 0x0F) << 4) + np.where(segment == 0, 8, 0x108)
    magnitude = np.where(segment > 1, magnitude << np.maximum(segment - 1, 0), magnitude)
    return np.where(codes & 0x80, magnitude, -magnitude).astype(np.int16)


_ALAW_DECODE = _alaw_decode_table()


def pcm16_to_alaw(samples: npt.NDArray[Any]) -> bytes:
    """Signed 16-bit samples (any integer array) to A-law bytes, one per sample.

    The ITU G.711 reference encoder on the top 13 bits (bit-exact with the old
    ``audioop.lin2alaw``).
    """
    pcm = np.asarray(samples).astype(np.int32).reshape(-1) >> 3
    negative = pcm < 0
    mask = np.where(negative, 0x55, 0xD5)
    magnitude: npt.NDArray[np.int32] = np.where(negative, -pcm - 1, pcm)
    segment = np.searchsorted(_ALAW_SEGMENT_ENDS, magnitude, side="left").astype(np.int32)
    shift = np.where(segment < 2, 1, segment)
    code = (np.minimum(segment, 7) << 4) | ((magnitude >> shift) & 0x0F)
    wire = np.bitwise_xor(np.where(segment >= 8, 0x7F, code), mask)
    return wire.astype(np.uint8).tobytes()


def alaw_to_pcm16(data: bytes) -> npt.NDArray[np.int16]:
    """A-law bytes to signed 16-bit samples (a lookup; every byte is a valid code)."""
    return _ALAW_DECODE[np.frombuffer(data, dtype=np.uint8)]


_ALAW_ENCODE = _encode_table(pcm16_to_alaw)


def encode_alaw(samples: npt.NDArray[Any]) -> bytes:
    """Float samples in [-1, 1] (clipped) to A-law bytes."""
    return _ALAW_ENCODE[_table_index(samples)].tobytes()


_ALAW_FLOAT = _to_float(_ALAW_DECODE)


def decode_alaw(data: bytes) -> Audio:
    """A-law bytes to float32 samples in [-1, 1) (one lookup)."""
    return _ALAW_FLOAT[np.frombuffer(data, dtype=np.uint8)]


class StreamResampler:
    """Resample a stream from ``rate_in`` to ``rate_out``, one chunk at a time.

    ``process`` takes any number of input samples (including none) and returns every
    output sample they complete. Not thread-safe: one stream, one caller at a time.
    """

    def __init__(self, rate_in: int, rate_out: int, *, half_width: int = 10) -> None:
        if rate_in <= 0 or rate_out <= 0:
            raise ValueError("sample rates must be positive")
        g = gcd(rate_in, rate_out)
        self.rate_in = rate_in
        self.rate_out = rate_out
        self.up = rate_out // g
        self.down = rate_in // g
        self._identity = self.up == 1 and self.down == 1
        taps: npt.NDArray[np.float64] = np.ones(1)
        if not self._identity:
            factor = max(self.up, self.down)
            taps = _lowpass(2 * half_width * factor + 1, 1.0 / factor) * self.up
        self._taps = taps
        # The filter on the zero-stuffed stream, split into its ``up`` phases: output
        # sample m of the upsampled stream is phase m % up run over the input up to
        # sample m // up (the zeros between input samples contribute nothing).
        width = -(-taps.size // self.up)
        phases = np.zeros((self.up, width), dtype=np.float64)
        for r in range(self.up):
            phases[r, : taps[r :: self.up].size] = taps[r :: self.up]
        self._phases = phases
        self._history = np.zeros(width - 1, dtype=np.float64)
        """The last ``width - 1`` input samples (the filter's state)."""
        self._phase = 0
        """Index, in the upsampled stream, of the next sample to keep, minus what was consumed."""

    @property
    def delay_s(self) -> float:
        """How far the output lags the input (the filter's group delay)."""
        return (self._taps.size - 1) / 2 / (self.rate_in * self.up)

    def reset(self) -> None:
        """Forget the stream so far (e.g. after the far end flushed its audio)."""
        self._history[:] = 0.0
        self._phase = 0

    def process(self, samples: npt.NDArray[Any]) -> Audio:
        x = np.asarray(samples, dtype=np.float64).reshape(-1)
        if self._identity:
            return x.astype(np.float32)
        if x.size <= BLOCK_SAMPLES:
            return self._process_block(x)
        # A long input (a hostile agent's megabyte of audio in one message) goes through in
        # blocks, so the work arrays stay a few megabytes whatever one call is handed.
        blocks = [
            self._process_block(x[i : i + BLOCK_SAMPLES]) for i in range(0, x.size, BLOCK_SAMPLES)
        ]
        return np.concatenate(blocks)

    def _process_block(self, x: npt.NDArray[np.float64]) -> Audio:
        if x.size == 0:
            return np.zeros(0, dtype=np.float32)
        # A few C loops per chunk, nothing per sample in Python: a line calls this for
        # every 20 ms message of every call.
        stream = np.concatenate((self._history, x))
        if self.up == 1:
            kept = np.convolve(stream, self._phases[0], mode="valid")[self._phase :: self.down]
        elif self.down == 1:  # every output is kept: the phases interleave
            kept = np.empty(x.size * self.up, dtype=np.float64)
            for r, h in enumerate(self._phases):
                kept[r :: self.up] = np.convolve(stream, h, mode="valid")
        else:
            each = np.stack([np.convolve(stream, h, mode="valid") for h in self._phases])
            keep = np.arange(self._phase, x.size * self.up, self.down)
            kept = each[keep % self.up, keep // self.up]
        if self._history.size:
            self._history = stream[stream.size - self._history.size :].copy()
        # Carry the decimation phase over to the next chunk.
        self._phase = (self._phase - x.size * self.up) % self.down
        return np.asarray(kept, dtype=np.float32)


def _lowpass(n_taps: int, cutoff: float) -> npt.NDArray[np.float64]:
    """A Kaiser-windowed (β = 5) sinc low-pass, ``cutoff`` relative to Nyquist, unity DC gain
    (what ``scipy.signal.firwin(n_taps, cutoff, window=("kaiser", 5.0))`` designs)."""
    n = np.arange(n_taps) - (n_taps - 1) / 2
    taps = cutoff * np.sinc(cutoff * n) * np.kaiser(n_taps, 5.0)
    return np.asarray(taps / taps.sum(), dtype=np.float64)


def resampler(rate_in: int, rate_out: int) -> StreamResampler:
    """A fresh :class:`StreamResampler` (8 ↔ 16 kHz for Twilio, 24 ↔ 16 kHz for Realtime)."""
    return StreamResampler(rate_in, rate_out)
