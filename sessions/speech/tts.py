"""Speech synthesis for agent text and the tester's typed (disfluent) text.

Two backends, one shape: ``synthesize(text) -> Speech`` (16 kHz mono float32 plus
estimated word timings).

- ``espeak``: espeak-ng, offline. Text is sent as SSML (``-m``) so pause tokens
  ("—", what ``controls.inject_disfluency`` emits) become exact ``<break>``s; the
  WAV comes back on stdout and is parsed with the stdlib ``wave`` module.
- ``openai``: the OpenAI speech endpoint (or any compatible server) through the
  ``openai`` package, raw PCM at 24 kHz resampled to 16 kHz. It has no SSML, so a
  pause token becomes an ellipsis, which such voices render as a pause.

The caller's turns in the human disfluency style go through :func:`speak_caller`, which
gives break-offs, pause tokens and fillers human-length silences and filled pauses
(:mod:`sessions.speech.hesitation`).
"""

from __future__ import annotations

import html
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from sessions.speech import SAMPLE_RATE
from sessions.speech.hesitation import FILLER_RATE_PERCENT, hesitant_pieces
from sessions.speech.timing import Pause, Piece, estimate_word_timings
from sessions.speech.wav import WavError, decode_wav, pcm16_to_float, resample
from sessions.speech.words import TimedWord

Audio = npt.NDArray[np.float32]

PAUSE_TOKENS = frozenset({"—", "--", "…"})
"""Whitespace-separated tokens that mean "pause here" in text to be spoken."""
DEFAULT_PAUSE_MS = 300
OPENAI_PCM_RATE = 24_000
TTS_BACKENDS = ("espeak", "openai")


class TtsError(RuntimeError):
    """Synthesis failed or the backend is unavailable; the message says how to fix it."""


@dataclass
class Speech:
    """Synthesized audio with the words it says, timed (estimated) from its start."""

    audio: Audio
    text: str
    words: list[TimedWord] = field(default_factory=list)
    backend: str = ""

    @property
    def duration(self) -> float:
        return self.audio.size / SAMPLE_RATE


class Tts(Protocol):
    name: str

    @property
    def cache_key(self) -> str:
        """Identifies the voice (backend + settings) so cached audio is not mixed up."""

    def synthesize(self, text: str) -> Speech: ...


def text_to_pieces(text: str, pause_ms: float = DEFAULT_PAUSE_MS) -> list[Piece]:
    """Words of plain text, with each standalone pause token as a :class:`Pause`."""
    return [Pause(pause_ms / 1000.0) if token in PAUSE_TOKENS else token for token in text.split()]


def pieces_to_ssml(pieces: list[Piece]) -> str:
    """An SSML document speaking ``pieces``; pauses become ``<break time="Nms"/>``."""
    parts = [
        f'<break time="{round(p.seconds * 1000)}ms"/>'
        if isinstance(p, Pause)
        else html.escape(p, quote=False)
        for p in pieces
    ]
    return "<speak>" + " ".join(parts) + "</speak>"


_BREAK = re.compile(r"<break\b[^>]*?\btime\s*=\s*[\"']([\d.]+)\s*(ms|s)[\"'][^>]*>", re.I)
_TAG = re.compile(r"<[^>]*>")


def ssml_to_pieces(ssml: str) -> list[Piece]:
    """Words and ``<break time=…>`` pauses of an SSML string (other tags dropped)."""
    pieces: list[Piece] = []
    pos = 0
    for m in _BREAK.finditer(ssml):
        pieces.extend(html.unescape(_TAG.sub(" ", ssml[pos : m.start()])).split())
        value = float(m.group(1))
        pieces.append(Pause(value / 1000.0 if m.group(2).lower() == "ms" else value))
        pos = m.end()
    pieces.extend(html.unescape(_TAG.sub(" ", ssml[pos:])).split())
    return pieces


def spoken_text(pieces: list[Piece]) -> str:
    return " ".join(p for p in pieces if isinstance(p, str))


@dataclass
class EspeakTts:
    """espeak-ng as a subprocess: SSML in, WAV on stdout, 22.05 kHz resampled to 16 kHz."""

    voice: str = "en-us"
    words_per_minute: int = 165
    pitch: int | None = None
    pause_ms: float = DEFAULT_PAUSE_MS
    executable: str = "espeak-ng"
    name: str = field(default="espeak", init=False)

    @property
    def cache_key(self) -> str:
        return f"espeak-{self.voice}-{self.words_per_minute}-{self.pitch}"

    def synthesize(self, text: str) -> Speech:
        """Speak plain text; standalone "—" tokens become SSML breaks of ``pause_ms``."""
        pieces = text_to_pieces(text, self.pause_ms)
        audio = self.synthesize_ssml(pieces_to_ssml(pieces))
        return Speech(audio, text, estimate_word_timings(pieces, audio), self.name)

    def speak_ssml(self, ssml: str) -> Speech:
        """Speak an SSML document (``<break time="300ms"/>`` etc.) with word estimates."""
        audio = self.synthesize_ssml(ssml)
        pieces = ssml_to_pieces(ssml)
        return Speech(audio, spoken_text(pieces), estimate_word_timings(pieces, audio), self.name)

    def synthesize_ssml(self, ssml: str) -> Audio:
        """Raw 16 kHz audio for an SSML document."""
        exe = shutil.which(self.executable)
        if exe is None:
            raise TtsError(
                f"{self.executable} is not installed: apt-get install espeak-ng "
                "(or use the text clock / --tts openai)"
            )
        cmd = [exe, "-m", "--stdout", "--stdin", "-v", self.voice, "-s", str(self.words_per_minute)]
        if self.pitch is not None:
            cmd += ["-p", str(self.pitch)]
        try:
            proc = subprocess.run(cmd, input=ssml.encode(), capture_output=True, timeout=60)
        except subprocess.TimeoutExpired:
            raise TtsError("espeak-ng took longer than 60 s") from None
        if proc.returncode != 0 or not proc.stdout:
            msg = proc.stderr.decode(errors="replace").strip().splitlines()
            raise TtsError(f"espeak-ng failed: {msg[-1] if msg else f'exit {proc.returncode}'}")
        try:
            return decode_wav(proc.stdout)
        except WavError as exc:
            raise TtsError(f"espeak-ng wrote no usable WAV: {exc}") from None


def text_for_plain_tts(text: str) -> str:
    """Text for a TTS without SSML: a pause token becomes an ellipsis on the word before it."""
    out: list[str] = []
    for token in text.split():
        if token in PAUSE_TOKENS:
            if out and not out[-1].endswith("..."):
                out[-1] += "..."
            continue
        out.append(token)
    return " ".join(out)


@dataclass
class OpenAiTts:
    """OpenAI (or compatible) text-to-speech over HTTP with the ``openai`` client.

    ``client`` may be given (shared with the agent connector); otherwise one is made
    from ``base_url`` / ``api_key`` (a local server needs no real key).
    """

    model: str = "gpt-4o-mini-tts"
    voice: str = "alloy"
    base_url: str | None = None
    api_key: str | None = None
    speed: float | None = None
    instructions: str | None = None
    timeout_s: float = 30.0
    client: Any = None
    name: str = field(default="openai", init=False)

    @property
    def cache_key(self) -> str:
        return f"openai-{self.model}-{self.voice}-{self.speed}"

    def _client(self) -> Any:
        if self.client is None:
            import openai

            key = self.api_key
            if key is None and self.base_url is None:
                import os

                key = os.environ.get("OPENAI_API_KEY")
                if not key:
                    raise TtsError(
                        "OpenAI TTS needs OPENAI_API_KEY (or a base URL for a local server)"
                    )
            from sessions.llm_client import split_query

            base_url, query = split_query(self.base_url)
            self.client = openai.OpenAI(
                api_key=key or "not-needed-locally",
                base_url=base_url,
                default_query=query or None,
                max_retries=1,
            )
        return self.client

    def fetch_pcm(self, text: str) -> bytes:
        """Raw 24 kHz 16-bit mono PCM for ``text`` as the server sends it."""
        import openai

        kwargs: dict[str, Any] = {}
        if self.speed is not None:
            kwargs["speed"] = self.speed
        if self.instructions:
            kwargs["instructions"] = self.instructions
        try:
            response = self._client().audio.speech.create(
                model=self.model,
                voice=self.voice,
                input=text,
                response_format="pcm",
                timeout=self.timeout_s,
                **kwargs,
            )
        except openai.OpenAIError as exc:
            from sessions.hostile.redact import scrub

            # The client's message may echo the URL (user info, ?key=) or the key.
            message = scrub(f"OpenAI TTS failed: {exc}", self.api_key, urls=[self.base_url])
            raise TtsError(message) from None
        data: bytes = response.content
        return data

    def synthesize(self, text: str) -> Speech:
        pieces = text_to_pieces(text)
        pcm = self.fetch_pcm(text_for_plain_tts(text))
        audio = resample(pcm16_to_float(pcm), OPENAI_PCM_RATE, SAMPLE_RATE)
        return Speech(audio, text, estimate_word_timings(pieces, audio), self.name)


def hesitant_ssml(text: str) -> tuple[str, list[Piece]]:
    """SSML for espeak-ng saying ``text`` with human-length hesitations
    (:mod:`sessions.speech.hesitation`), and its pieces for word timing.

    A broken-off word ("the—") and a pause token become the word and a ``<break>``; a
    filler is said at a slower rate and followed by its silence. The text is escaped
    before it is wrapped: a caller's ``<`` or ``&`` is spoken, never read as markup.
    """
    parts: list[str] = []
    pieces: list[Piece] = []
    for spoken in hesitant_pieces(text):
        if spoken.word:
            said = html.escape(spoken.word, quote=False)
            if spoken.filler:
                said = f'<prosody rate="{FILLER_RATE_PERCENT}%">{said}</prosody>'
            parts.append(said)
            pieces.append(spoken.written)
        if spoken.silence_after > 0:
            parts.append(f'<break time="{round(spoken.silence_after * 1000)}ms"/>')
            pieces.append(Pause(spoken.silence_after))
    return "<speak>" + " ".join(parts) + "</speak>", pieces


def text_for_hesitant_plain_tts(text: str) -> str:
    """Text for a TTS without SSML in the human style: a broken-off word ends in an
    ellipsis too, which such voices render as a pause (they choose its length)."""
    out: list[str] = []
    for spoken in hesitant_pieces(text):
        if spoken.word:
            out.append(spoken.written if spoken.filler else spoken.word)
        if spoken.silence_after > 0 and not spoken.filler and out and not out[-1].endswith("..."):
            out[-1] += "..."
    return " ".join(out)


def speak_caller(tts: Tts, text: str, *, hesitations: bool = False) -> Speech:
    """The caller's turn as speech. With ``hesitations`` (the human disfluency style) its
    break-offs, pause tokens and fillers get human timing; without, ``tts.synthesize``."""
    if not hesitations:
        return tts.synthesize(text)
    if isinstance(tts, EspeakTts):
        ssml, pieces = hesitant_ssml(text)
        audio = tts.synthesize_ssml(ssml)
        return Speech(audio, text, estimate_word_timings(pieces, audio), tts.name)
    if isinstance(tts, OpenAiTts):
        pcm = tts.fetch_pcm(text_for_hesitant_plain_tts(text))
        audio = resample(pcm16_to_float(pcm), OPENAI_PCM_RATE, SAMPLE_RATE)
        return Speech(audio, text, estimate_word_timings(text_to_pieces(text), audio), tts.name)
    return tts.synthesize(text)


def make_tts(backend: str, **options: Any) -> Tts:
    """A TTS by name (``espeak`` or ``openai``); options go to its constructor."""
    if backend == "espeak":
        return EspeakTts(**options)
    if backend == "openai":
        return OpenAiTts(**options)
    raise TtsError(f"unknown TTS backend {backend!r} (choose from {', '.join(TTS_BACKENDS)})")
