"""The call recording is written in blocks: a frame pushed costs the pump no I/O."""

from __future__ import annotations

import contextlib
import time
import wave
from pathlib import Path

import numpy as np
import pytest

from sessions.call.voice import recording as rec_mod
from sessions.call.voice.recording import BLOCK_S, CallRecording


def test_frames_are_written_in_blocks_not_one_write_each(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writes: list[int] = []
    real = rec_mod.interleave

    def counted(agent: np.ndarray, caller: np.ndarray) -> bytes:
        writes.append(agent.size)
        return real(agent, caller)

    monkeypatch.setattr(rec_mod, "interleave", counted)
    path = tmp_path / "call.wav"
    rec = CallRecording(path)
    frame = 512  # one 32 ms frame at 16 kHz
    for i in range(100):  # 3.2 s of call pushed at once, as a pump catching up would
        rec.push(np.full(frame, (i % 10) / 20, np.float32), np.zeros(frame, np.float32))
    deadline = time.monotonic() + 5 * BLOCK_S + 5
    while rec.frames < 100 * frame and time.monotonic() < deadline:
        time.sleep(0.01)
    assert rec.frames == 100 * frame
    assert len(writes) <= 2, writes  # one block (two if the writer woke mid-push)
    # Still open: the header already counts every frame, in order.
    with wave.open(str(path)) as w:
        assert w.getnframes() == 100 * frame
        data = np.frombuffer(w.readframes(w.getnframes()), "<i2").reshape(-1, 2)
    assert np.allclose(data[::frame, 0] / 32767, [(i % 10) / 20 for i in range(100)], atol=1e-4)
    rec.push(np.full(frame, 0.5, np.float32), np.zeros(frame, np.float32))
    rec.close()  # what was kept since the last block is written by the close
    with wave.open(str(path)) as w:
        assert w.getnframes() == 101 * frame


def test_a_write_error_is_kept_not_raised(tmp_path: Path) -> None:
    rec = CallRecording(tmp_path / "call.wav")
    rec._file.close()  # the disk went away under it
    rec.push(np.ones(512, np.float32), np.zeros(512, np.float32))
    rec.write_kept()
    assert isinstance(rec.error, ValueError) and rec.frames == 0
    rec.push(np.ones(512, np.float32), np.zeros(512, np.float32))  # never raises
    with contextlib.suppress(ValueError, OSError):
        rec.close()
