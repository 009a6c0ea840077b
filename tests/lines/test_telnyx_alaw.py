"""G.711 A-law (Telnyx's PCMA): bit-exact with the ITU reference algorithm.

The reference here is the spec's per-sample loop (segment search, 13-bit input, even
bits inverted), written plainly and independently of the vectorized codec; where this
Python still has ``audioop`` (before 3.13) it is checked against that too.
"""

from __future__ import annotations

import importlib
import warnings

import numpy as np

from sessions.lines.codec import (
    ALAW_SILENCE,
    alaw_to_pcm16,
    decode_alaw,
    decode_ulaw,
    encode_alaw,
    encode_ulaw,
    pcm16_to_alaw,
)

EVERY_SAMPLE = np.arange(-32768, 32768, dtype=np.int16)
EVERY_CODE = bytes(range(256))


def reference_encode(sample: int) -> int:
    value = sample >> 3  # the encoder sees the top 13 bits
    if value >= 0:
        mask = 0xD5
    else:
        mask = 0x55
        value = -value - 1
    ends = (0x1F, 0x3F, 0x7F, 0xFF, 0x1FF, 0x3FF, 0x7FF, 0xFFF)
    segment = next((i for i, end in enumerate(ends) if value <= end), None)
    if segment is None:
        return 0x7F ^ mask
    mantissa = (value >> (1 if segment < 2 else segment)) & 0x0F
    return ((segment << 4) | mantissa) ^ mask


def reference_decode(code: int) -> int:
    code ^= 0x55
    mantissa = (code & 0x0F) << 4
    segment = (code & 0x70) >> 4
    if segment == 0:
        value = mantissa + 8
    elif segment == 1:
        value = mantissa + 0x108
    else:
        value = (mantissa + 0x108) << (segment - 1)
    return value if code & 0x80 else -value


def test_every_16_bit_sample_encodes_as_the_reference_does() -> None:
    expected = bytes(reference_encode(int(s)) for s in EVERY_SAMPLE)
    assert pcm16_to_alaw(EVERY_SAMPLE) == expected


def test_every_code_decodes_as_the_reference_does() -> None:
    expected = np.array([reference_decode(c) for c in EVERY_CODE], dtype=np.int16)
    assert np.array_equal(alaw_to_pcm16(EVERY_CODE), expected)


def test_it_matches_audioop_where_this_python_has_it() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            audioop = importlib.import_module("audioop")
        except ImportError:  # Python 3.13+: the reference loops above are the check
            return
    assert pcm16_to_alaw(EVERY_SAMPLE) == audioop.lin2alaw(EVERY_SAMPLE.tobytes(), 2)
    decoded = np.frombuffer(audioop.alaw2lin(EVERY_CODE, 2), dtype="<i2")
    assert np.array_equal(alaw_to_pcm16(EVERY_CODE), decoded)


def test_silence_is_0xd5_and_a_tone_survives_a_round_trip() -> None:
    assert encode_alaw(np.zeros(4, dtype=np.float32)) == bytes([ALAW_SILENCE]) * 4
    t = np.arange(8000) / 8000
    tone = (0.5 * np.sin(2 * np.pi * 440 * t)).astype(np.float32)
    back = decode_alaw(encode_alaw(tone))
    snr = 10 * np.log10(np.sum(tone**2) / np.sum((tone - back) ** 2))
    assert snr > 30, snr  # G.711's ~38 dB for a loud tone
    # The two laws are not interchangeable: μ-law bytes read as A-law are garbage.
    wrong = decode_alaw(encode_ulaw(tone))
    assert 10 * np.log10(np.sum(tone**2) / np.sum((tone - wrong) ** 2)) < 3
    assert np.allclose(decode_ulaw(encode_ulaw(tone)), tone, atol=0.02)
