"""Everything a call to a black-box agent needs, put together before the call starts.

Order matters for the tester: the slow, local parts (espeak-ng, the backchannel
inventory, Silero VAD, the STT model) are checked first, each failing with one line
that names the fix; the line is dialled last, so a wrong URL is reported without a
half-made call, and the agent's greeting waits in the playout buffer for t = 0.

A helper of :mod:`sessions.plan.build`, which builds every call from its plan; tests
and benches call it directly with a line of their own.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path

from sessions.call.config import CallConfig
from sessions.call.engine.engine import CallEngine
from sessions.call.far_ends.agent_ears import AgentEars, Audio
from sessions.call.far_ends.line import LineFarEnd
from sessions.call.line_parts import RemoteConfig
from sessions.call.near_end.caller import InterruptionText
from sessions.call.near_end.caller_line import Synthesizer
from sessions.call.policy import TurnTakingPolicy
from sessions.call.voice.recording import CallRecording
from sessions.callers.users import UserProvider
from sessions.hostile.redact import public_url
from sessions.lines.base import Line
from sessions.lines.factory import LineSpec, open_line, parse_line_agent
from sessions.log.models import AgentInfo, SpeechInfo


@dataclass(frozen=True)
class RemoteSpec:
    """How to reach the agent and how cutin speaks and hears on the line."""

    agent: str
    """The ``--agent`` value: ``twilio:ws://...`` or ``realtime``."""
    base_url: str | None = None
    model: str | None = None
    api_key: str | None = None
    """Realtime only; never logged."""
    instructions: str | None = None
    """Realtime: the model's instructions (the scenario's agent prompt)."""
    stt: str | None = None
    vad: str = "onnx"
    words_per_minute: int = 165
    """The caller's espeak-ng speaking rate."""
    cache_dir: Path | None = None
    """The backchannel cache (a call's plan gives the settings'; None: read them here)."""
    connect_timeout_s: float = 10.0
    transcribe: str = "live"
    """What of the agent's audio is transcribed: live | end | off
    (:data:`~sessions.call.far_ends.agent_ears.TRANSCRIBE_MODES`)."""

    @property
    def line(self) -> LineSpec:
        return parse_line_agent(self.agent)

    def agent_info(self, name: str) -> AgentInfo:
        spec = self.line
        if spec.url is not None:
            # A transport named by the agent's URL (twilio:ws://...): that URL is the endpoint.
            return AgentInfo(kind=spec.kind, name=name, base_url=public_url(spec.url))
        return AgentInfo(kind=spec.kind, name=name, model=self.model, base_url=self.base_url)

    def speech_info(self) -> SpeechInfo:
        return SpeechInfo(
            tts="espeak",
            input="type",
            stt=self.stt or "tiny.en (offline)",
            vad=self.vad,
            words_per_minute=self.words_per_minute,
            transcribe=None if self.transcribe == "live" else self.transcribe,
        )


LineCall = CallEngine[LineFarEnd]


@dataclass
class RemoteParts:
    """The local parts of a remote call, loaded (and checked) before dialling."""

    synthesizer: Synthesizer
    backchannels: dict[str, Audio]
    ears: AgentEars


def load_parts(spec: RemoteSpec, config: CallConfig, *, virtual: bool) -> RemoteParts:
    """Load espeak-ng, the backchannel tokens, VAD and STT; their errors say the fix."""
    from sessions.settings import Settings
    from sessions.speech.backchannel_cache import BackchannelCache
    from sessions.speech.shared import cached_speech, shared_packer, shared_transcriber
    from sessions.speech.tts import EspeakTts, Speech, speak_caller
    from sessions.speech.vad import load_vad

    tts = EspeakTts(words_per_minute=spec.words_per_minute)
    cache_dir = spec.cache_dir or Settings().cache_dir
    cache = BackchannelCache(tts, cache_dir, config.backchannel_tokens).load()
    tokens = {t: cache.get(t) for t in config.backchannel_tokens}
    # The caller's speech is resampled with scipy.signal, whose first import takes seconds
    # on a busy machine. With the tokens cached, nothing above imported it: pay for it
    # now, before the line opens, not with the call's first barge-in.
    import numpy as np

    from sessions.speech.wav import resample

    resample(np.zeros(32, np.float32), 22050, 16000)
    vad = load_vad(spec.vad)
    # Loaded once per process and shared by every call of a batch (so are VAD and speech).
    # In real time every call's pieces are packed into shared Whisper inputs (cheaper and
    # no worse: docs/capacity.md); --transcribe off loads no model at all.
    transcriber = None if spec.transcribe == "off" else shared_transcriber(spec.stt, cpu_threads=1)
    packer = None if transcriber is None or virtual else shared_packer(transcriber)
    ears = AgentEars(vad, transcriber, inline=virtual, packer=packer, transcribe=spec.transcribe)
    # On a line the caller's hesitations are real silences of human length in either
    # style (the paper's "—" and fillers too): they are the bait an agent that talks into
    # a pause takes (docs/agent-measures.md, "Agent interruptions").
    hesitations = True

    voice_key = f"{tts.cache_key}-hesitant"

    def synthesize(text: str) -> Speech:
        return cached_speech(
            voice_key, text, lambda said: speak_caller(tts, said, hesitations=hesitations)
        )

    synth = Synthesizer(synthesize, inline=virtual)
    return RemoteParts(synth, tokens, ears)


def build_line_call(
    spec: RemoteSpec,
    config: CallConfig,
    *,
    recording_path: Path | None = None,
    user: UserProvider | None = None,
    line: Line | None = None,
    virtual: bool = False,
    remote: RemoteConfig | None = None,
    user_source: str = "scenario",
    policy: TurnTakingPolicy | None = None,
    shadow: TurnTakingPolicy | None = None,
    interruption_text: InterruptionText | None = None,
) -> LineCall:
    """Load the parts, dial the agent (unless ``line`` is given, open) and make the call:
    the engine with a :class:`~sessions.call.far_ends.line.LineFarEnd`."""
    parts = load_parts(spec, config, virtual=virtual)
    if line is None:
        line = open_line(
            spec.line,
            base_url=spec.base_url,
            model=spec.model,
            api_key=spec.api_key,
            instructions=spec.instructions,
            timeout_s=spec.connect_timeout_s,
        )
    recording = None
    try:
        if recording_path is not None:
            recording = CallRecording(recording_path)
        tokens = parts.backchannels

        def backchannel(token: str) -> Audio:
            return tokens[token]

        far = LineFarEnd(
            line,
            parts.ears,
            parts.synthesizer,
            backchannel,
            remote=remote,
            recording=recording,
            user_source=user_source,
        )
        loop = CallEngine(
            config,
            far,
            user=user,
            policy=policy,
            shadow=shadow,
            interruption_text=interruption_text,
            virtual=virtual,
        )
        # Barge-in openers are synthesized now, so an interruption goes out at once.
        parts.synthesizer.prepare(loop.caller.interruption_openers())
    except BaseException:
        with contextlib.suppress(Exception):
            line.close()
        if recording is not None:
            recording.close()
        raise
    return loop


def attach_microphone(
    loop: LineCall,
    *,
    device: int | str | None = None,
    push_to_talk: bool = False,
    vad: str = "onnx",
) -> None:
    """The tester's microphone on the line: its audio goes into the line as captured, its
    onsets over the agent are manual interruptions, its words (STT) caller turns.

    Opens the input device now (:class:`~sessions.speech.devices.AudioUnavailable`); it
    starts feeding when the call starts. Use headphones: there is no echo cancellation."""
    from sessions.call.near_end.mic import MicInput
    from sessions.lines.base import PlayoutBuffer
    from sessions.speech.vad import load_vad

    transcriber = loop.far.ears.transcriber
    if transcriber is None:
        raise ValueError("the microphone needs speech-to-text")
    fifo = PlayoutBuffer(max_seconds=5.0)
    mic = MicInput(
        transcriber,
        device=device,
        vad=None if push_to_talk else load_vad(vad),
        push_to_talk=push_to_talk,
        tap=fifo.push,
    )
    mic.open()
    loop.far.mic_audio = fifo
    loop.far.mic = mic
