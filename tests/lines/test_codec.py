"""G.711 μ-law and the streaming resamplers of sessions/lines/codec.py."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from sessions.lines.codec import (
    ULAW_SILENCE,
    StreamResampler,
    decode_ulaw,
    encode_ulaw,
    pcm16_to_ulaw,
    ulaw_to_pcm16,
)

ALL_PCM16 = np.arange(-32768, 32768, dtype=np.int16)


def tone(freq: float, seconds: float, rate: int, level: float = 0.5) -> np.ndarray:
    t = np.arange(int(seconds * rate)) / rate
    return (level * np.sin(2 * np.pi * freq * t)).astype(np.float32)


def test_known_ulaw_values() -> None:
    assert pcm16_to_ulaw(np.array([0])) == bytes([ULAW_SILENCE])
    assert ulaw_to_pcm16(bytes([0xFF, 0x7F])).tolist() == [0, 0]
    # The loudest codes: 0x80 is the largest positive, 0x00 the largest negative.
    assert ulaw_to_pcm16(bytes([0x80, 0x00])).tolist() == [32124, -32124]
    assert pcm16_to_ulaw(np.array([32767, -32768])) == bytes([0x80, 0x00])
    assert pcm16_to_ulaw(np.array([1, -1])) == bytes([0xFF, 0x7E])
    assert decode_ulaw(bytes([0xFF]))[0] == 0.0


def test_every_code_survives_decode_then_encode() -> None:
    codes = bytes(range(256))
    again = pcm16_to_ulaw(ulaw_to_pcm16(codes))
    # 0x7F is "negative zero": it decodes to 0, which encodes as 0xFF.
    assert again == codes.replace(b"\x7f", b"\xff")


def test_encoder_matches_the_g711_reference_where_audioop_exists() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        audioop = pytest.importorskip("audioop", reason="audioop left the stdlib in 3.13")
    assert pcm16_to_ulaw(ALL_PCM16) == audioop.lin2ulaw(ALL_PCM16.tobytes(), 2)
    codes = bytes(range(256))
    assert ulaw_to_pcm16(codes).tobytes() == audioop.ulaw2lin(codes, 2)


def test_round_trip_error_is_logarithmic() -> None:
    pcm = ALL_PCM16.astype(np.int64)
    decoded = ulaw_to_pcm16(pcm16_to_ulaw(ALL_PCM16)).astype(np.int64)
    error = np.abs(decoded - pcm)
    # G.711's step doubles per segment: 8 near zero, under 4 % of the value above 1024.
    assert error[np.abs(pcm) < 64].max() <= 8
    big = np.abs(pcm) > 1024
    assert (error[big] / np.abs(pcm[big])).max() < 0.04
    audio = tone(440, 0.5, 8000)
    back = decode_ulaw(encode_ulaw(audio))
    snr = 10 * np.log10(np.sum(audio**2) / np.sum((audio - back) ** 2))
    assert snr > 30


def test_float_encode_clips() -> None:
    assert encode_ulaw(np.array([2.0, -2.0], dtype=np.float32)) == bytes([0x80, 0x00])


@pytest.mark.parametrize(
    ("rate_in", "rate_out"), [(8000, 16000), (16000, 8000), (24000, 16000), (16000, 24000)]
)
def test_chunked_equals_whole(rate_in: int, rate_out: int) -> None:
    rng = np.random.default_rng(7)
    audio = (0.2 * rng.standard_normal(rate_in)).astype(np.float32)
    whole = StreamResampler(rate_in, rate_out).process(audio)
    assert whole.size == rate_out
    stream = StreamResampler(rate_in, rate_out)
    sizes = rng.integers(0, 700, size=200)
    parts, i = [], 0
    for n in sizes:
        parts.append(stream.process(audio[i : i + n]))
        i += int(n)
    parts.append(stream.process(audio[i:]))
    chunked = np.concatenate(parts)
    assert chunked.size == whole.size
    np.testing.assert_allclose(chunked, whole, atol=1e-6)


@pytest.mark.parametrize(("rate_in", "rate_out"), [(8000, 16000), (16000, 8000), (24000, 16000)])
def test_resampled_tone_keeps_pitch_and_level(rate_in: int, rate_out: int) -> None:
    audio = tone(440, 1.0, rate_in)
    stream = StreamResampler(rate_in, rate_out)
    out = np.concatenate([stream.process(audio[i : i + 160]) for i in range(0, audio.size, 160)])
    settled = out[rate_out // 10 :]
    rms = float(np.sqrt(np.mean(settled**2)))
    assert rms == pytest.approx(0.5 / np.sqrt(2), rel=0.02)
    spectrum = np.abs(np.fft.rfft(settled * np.hanning(settled.size)))
    peak_hz = np.argmax(spectrum) * rate_out / settled.size
    assert peak_hz == pytest.approx(440, abs=3)
    # No clicks at chunk joins: the sample-to-sample step never exceeds a sine's.
    max_step = 0.5 * 2 * np.pi * 440 / rate_out
    assert np.abs(np.diff(settled)).max() < 1.1 * max_step


def test_downsampling_removes_what_8khz_cannot_carry() -> None:
    audio = tone(6000, 1.0, 16000)
    out = StreamResampler(16000, 8000).process(audio)
    assert float(np.sqrt(np.mean(out[800:] ** 2))) < 0.01


def test_delay_is_small_and_reset_forgets() -> None:
    stream = StreamResampler(8000, 16000)
    assert 0 < stream.delay_s < 0.003
    first = stream.process(tone(300, 0.1, 8000))
    stream.reset()
    again = stream.process(tone(300, 0.1, 8000))
    np.testing.assert_array_equal(first, again)
    assert StreamResampler(16000, 16000).process(np.ones(5)).tolist() == [1.0] * 5


@pytest.mark.parametrize(
    ("rate_in", "rate_out"), [(8000, 16000), (16000, 8000), (24000, 16000), (16000, 24000)]
)
def test_stream_matches_scipy_resample_poly_after_its_delay(rate_in: int, rate_out: int) -> None:
    from scipy.signal import resample_poly

    rng = np.random.default_rng(3)
    audio = (0.2 * rng.standard_normal(rate_in // 2)).astype(np.float32)
    stream = StreamResampler(rate_in, rate_out)
    ours = np.concatenate([stream.process(audio[i : i + 333]) for i in range(0, audio.size, 333)])
    reference = resample_poly(audio.astype(np.float64), stream.up, stream.down)
    lag = round(stream.delay_s * rate_out)  # a whole number of output samples here
    assert lag == pytest.approx(stream.delay_s * rate_out)
    inner = slice(100, ours.size - 100)
    np.testing.assert_allclose(ours[lag:][inner], reference[: ours.size - lag][inner], atol=1e-5)
