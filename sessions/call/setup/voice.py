"""Choosing and building a call's voice from options: text clock, espeak-ng or OpenAI TTS;
typed input or the microphone; the VAD and STT models.

Everything that can fail is tried here, before the call starts, and fails with a
:class:`VoiceSetupError` of one line that names the fix; the text clock with typed
input needs none of it and always works. A helper of :mod:`sessions.plan.build`, which
builds every call from its plan (and passes the settings' cache folder).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from sessions.call.voice.voice import TextVoice, Voice
from sessions.log.models import SpeechInfo
from sessions.speech.speech_clock import SpeakingStyle

if TYPE_CHECKING:
    from sessions.call.voice.audio_voice import AudioVoice
    from sessions.speech.tts import Tts

SPEECH_CHOICES = ("text", "espeak", "openai")
INPUT_CHOICES = ("type", "mic")
VAD_CHOICES = ("onnx", "silero-torch")
TYPED_FALLBACK = "(--speech text --input type works without any of it)"

AGENT_ESPEAK_VOICE = "en-us"
CALLER_ESPEAK_VOICE = "en-gb+f3"
AGENT_OPENAI_VOICE = "alloy"
CALLER_OPENAI_VOICE = "nova"


class VoiceSetupError(RuntimeError):
    """The requested speech or input cannot run here; the message says what to install."""


@dataclass(frozen=True)
class VoiceSpec:
    """How a call is spoken and heard."""

    speech: str = "text"
    """text (the text clock) | espeak | openai."""
    input: str = "type"
    """type | mic."""
    stt: str | None = None
    """faster-whisper model name or folder for the microphone (default: offline tiny.en)."""
    vad: str = "onnx"
    push_to_talk: bool = False
    input_device: int | None = None
    output_device: int | None = None
    words_per_minute: float = 165.0
    openai_base_url: str | None = None
    openai_api_key: str | None = None
    cache_dir: Path | None = None
    """Where backchannel tokens are cached (default: the settings' cache dir)."""

    @property
    def audio(self) -> bool:
        return self.speech != "text"

    def info(self) -> SpeechInfo:
        """The header's ``speech`` block."""
        return SpeechInfo(
            tts=self.speech,
            input=self.input,
            stt=(self.stt or "tiny.en (offline)") if self.input == "mic" else None,
            vad=self.vad if self.audio else None,
            words_per_minute=self.words_per_minute,
        )

    def check(self) -> None:
        """Raise :class:`VoiceSetupError` for a combination that cannot work."""
        if self.speech not in SPEECH_CHOICES:
            raise VoiceSetupError(f"unknown --speech {self.speech!r}: {', '.join(SPEECH_CHOICES)}")
        if self.input not in INPUT_CHOICES:
            raise VoiceSetupError(f"unknown --input {self.input!r}: {', '.join(INPUT_CHOICES)}")
        if self.vad not in VAD_CHOICES:
            raise VoiceSetupError(f"unknown --vad {self.vad!r}: {', '.join(VAD_CHOICES)}")
        if self.input == "mic" and not self.audio:
            raise VoiceSetupError("--input mic needs audio out: add --speech espeak (or openai)")

    def preflight(self) -> None:
        """The cheap checks, before any device opens: options, espeak-ng, the STT model's
        folder. :class:`VoiceSetupError` naming the fix."""
        self.check()
        if self.speech == "espeak" and shutil.which("espeak-ng") is None:
            raise VoiceSetupError(
                f"--speech espeak needs espeak-ng: apt-get install espeak-ng {TYPED_FALLBACK}"
            )
        if self.input == "mic":
            from sessions.speech.stt import SttError, resolve_model

            try:
                resolve_model(self.stt)
            except SttError as exc:
                raise VoiceSetupError(f"--stt: {exc}") from None


def _tts(spec: VoiceSpec, speaker: str) -> Tts:
    from sessions.speech.tts import EspeakTts, OpenAiTts

    wpm = round(spec.words_per_minute)
    if spec.speech == "espeak":
        if shutil.which("espeak-ng") is None:
            raise VoiceSetupError(
                f"--speech espeak needs espeak-ng: apt-get install espeak-ng {TYPED_FALLBACK}"
            )
        voice = AGENT_ESPEAK_VOICE if speaker == "agent" else CALLER_ESPEAK_VOICE
        return EspeakTts(voice=voice, words_per_minute=wpm)
    return OpenAiTts(
        voice=AGENT_OPENAI_VOICE if speaker == "agent" else CALLER_OPENAI_VOICE,
        base_url=spec.openai_base_url,
        api_key=spec.openai_api_key,
    )


def build_voice(spec: VoiceSpec, *, style: SpeakingStyle, realtime: bool) -> Voice:
    """The voice for ``spec``: the text clock, or audio (with devices when ``realtime``).

    Raises :class:`VoiceSetupError` with the fix when a part is missing.
    """
    spec.preflight()
    if not spec.audio:
        return TextVoice(style)
    return build_audio_voice(spec, realtime=realtime)


def build_audio_voice(spec: VoiceSpec, *, realtime: bool) -> AudioVoice:
    """Synthesis, VAD, backchannel cache and -- in real time -- the devices."""
    from sessions.call.near_end.mic import MicInput
    from sessions.call.timeline import CallTimeline
    from sessions.call.voice.audio_out import TimelinePlayer
    from sessions.call.voice.audio_voice import AudioVoice
    from sessions.settings import Settings
    from sessions.speech.backchannel_cache import BackchannelCache
    from sessions.speech.devices import AudioUnavailable
    from sessions.speech.stt import SttError, Transcriber
    from sessions.speech.tts import TtsError
    from sessions.speech.vad import VadError, load_vad

    spec.check()
    try:
        agent_tts, caller_tts = _tts(spec, "agent"), _tts(spec, "caller")
        vad = load_vad(spec.vad)
        cache_dir = spec.cache_dir or Settings().cache_dir
        # Synthesized now (or read from the cache), so a token plays the instant it is chosen.
        backchannels = BackchannelCache(caller_tts, cache_dir).load()
    except (TtsError, VadError) as exc:
        raise VoiceSetupError(f"{exc} {TYPED_FALLBACK}") from None
    except OSError as exc:
        raise VoiceSetupError(f"cannot cache backchannel tokens: {exc}") from None
    timeline = CallTimeline()
    player: TimelinePlayer | None = None
    mic: MicInput | None = None
    if realtime:
        try:
            player = TimelinePlayer(timeline, spec.output_device).open()
            if spec.input == "mic":
                transcriber = Transcriber(spec.stt).load()
                mic_vad = None if spec.push_to_talk else load_vad(spec.vad)
                mic = MicInput(
                    transcriber,
                    device=spec.input_device,
                    vad=mic_vad,
                    push_to_talk=spec.push_to_talk,
                    timeline=timeline,
                ).open()
        except (AudioUnavailable, SttError, VadError) as exc:
            if player is not None:
                player.close()
            raise VoiceSetupError(f"{exc} {TYPED_FALLBACK}") from None
    return AudioVoice(
        name=spec.speech,
        agent_tts=agent_tts,
        caller_tts=caller_tts,
        vad=vad,
        backchannels=backchannels,
        player=player,
        mic=mic,
        timeline=timeline,
    )
