"""Fixtures for voice calls: real espeak-ng, real Silero VAD (onnxruntime), a
backchannel cache in a temporary folder, and the virtual audio device."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.support.pulse import pulse_server

__all__ = ["pulse_server"]  # the session fixture, registered for this folder


@pytest.fixture(scope="session")
def espeak_ok() -> None:
    if shutil.which("espeak-ng") is None:
        pytest.skip("espeak-ng is not installed (apt-get install espeak-ng)")


@pytest.fixture(scope="session")
def voice_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One backchannel cache for the session (tokens are synthesized once)."""
    return tmp_path_factory.mktemp("voice-cache")


@pytest.fixture(autouse=True)
def _isolated_cache(voice_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Settings().cache_dir is where build_audio_voice caches tokens by default.
    monkeypatch.setenv("CUTIN_CACHE_DIR", str(voice_cache))
