"""The player's mixer, block by block, without a device."""

from __future__ import annotations

import queue
import threading

import numpy as np
import pytest

from sessions.speech import SAMPLE_RATE
from sessions.speech.mixer import Mixer, TapBlock


def ramp(n: int, start: float = 0.0) -> np.ndarray:
    return (start + np.arange(n, dtype=np.float32)) / 100_000


def render_all(mixer: Mixer, blocks: int, n: int = 256) -> np.ndarray:
    return np.concatenate([mixer.render(n) for _ in range(blocks)])


def test_a_turn_plays_in_order_then_silence() -> None:
    mixer = Mixer()
    audio = ramp(1000)
    mixer.play(audio)
    assert mixer.main_active and not mixer.idle.is_set()
    out = render_all(mixer, 5)
    assert np.array_equal(out[:1000], audio)
    assert not out[1000:].any()
    assert mixer.position_s == pytest.approx(1000 / SAMPLE_RATE)
    assert not mixer.main_active and mixer.idle.is_set()


def test_streamed_chunks_play_back_to_back_until_finished() -> None:
    mixer = Mixer()
    mixer.play(ramp(300), more_coming=True)
    first = render_all(mixer, 2)  # 512 samples: the 300 we have, then silence
    assert mixer.main_active  # still waiting for more audio
    mixer.append(ramp(400, 300))
    mixer.finish()
    second = render_all(mixer, 2)
    assert np.array_equal(first[:300], ramp(300))
    assert np.array_equal(second[:400], ramp(400, 300))
    assert mixer.position_s == pytest.approx(700 / SAMPLE_RATE)
    assert not mixer.main_active


def test_stop_returns_what_was_handed_out_and_nothing_more_plays() -> None:
    mixer = Mixer()
    mixer.play(np.full(SAMPLE_RATE, 0.5, dtype=np.float32))
    render_all(mixer, 10)
    position = mixer.stop()
    assert position == pytest.approx(2560 / SAMPLE_RATE)
    assert not render_all(mixer, 4).any()
    assert mixer.position_s == position


def test_a_token_is_mixed_on_top_from_the_next_block() -> None:
    mixer = Mixer()
    mixer.play(np.full(2000, 0.25, dtype=np.float32))
    mixer.render(256)
    mixer.overlay(np.full(300, 0.5, dtype=np.float32), "yeah")
    out = mixer.render(256)
    assert np.allclose(out, 0.75)
    out = mixer.render(256)
    assert np.allclose(out[:44], 0.75) and np.allclose(out[44:], 0.25)
    start = mixer.overlay_starts.get_nowait()
    assert (start.token, start.index) == ("yeah", 256)


def test_a_token_continues_after_the_agent_is_cut_and_output_is_clipped() -> None:
    mixer = Mixer()
    mixer.play(np.full(2000, 0.8, dtype=np.float32))
    mixer.overlay(np.full(600, 0.8, dtype=np.float32))
    assert mixer.render(256).max() == 1.0  # 1.6 clipped
    mixer.stop()
    out = mixer.render(512)
    assert np.allclose(out[:344], 0.8) and not out[344:].any()
    assert mixer.idle.is_set()


def test_the_tap_gets_only_the_agent_with_stream_indexes() -> None:
    tap: queue.SimpleQueue[TapBlock] = queue.SimpleQueue()
    mixer = Mixer(tap=tap)
    mixer.render(256)  # before the turn: silence, still tapped (the stream clock runs)
    mixer.play(np.full(300, 0.25, dtype=np.float32))
    mixer.overlay(np.full(300, 0.5, dtype=np.float32))
    mixer.render(256)
    mixer.render(256)
    blocks = [tap.get_nowait() for _ in range(3)]
    assert [b.index for b in blocks] == [0, 256, 512]
    assert not blocks[0].samples.any()
    assert np.allclose(blocks[1].samples, 0.25)  # no token in the tap
    assert np.allclose(blocks[2].samples[:44], 0.25) and not blocks[2].samples[44:].any()


def test_control_from_another_thread_while_rendering() -> None:
    mixer = Mixer()
    mixer.play(np.full(SAMPLE_RATE * 10, 0.1, dtype=np.float32))
    stop = threading.Event()
    rendered: list[int] = []

    def audio_thread() -> None:
        while not stop.is_set():
            mixer.render(128)
            rendered.append(128)

    worker = threading.Thread(target=audio_thread)
    worker.start()
    try:
        for _ in range(200):
            mixer.overlay(np.full(64, 0.1, dtype=np.float32))
        position = mixer.stop()
    finally:
        stop.set()
        worker.join()
    assert 0 <= position <= sum(rendered) / SAMPLE_RATE
    assert mixer.position_s == position
