"""What `cutin call` (or the home screen) asks for, and the call it makes. No Textual.

:func:`open_call` loads the scenario, builds the agent (scripted, an LLM, or a line to
a black-box agent), the voice, the policies and the log, and hands back a
:class:`~cutin_tui.call_driver.CallDriver` that is ready to start.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from controls.tendencies import Tendencies
from cutin_tui.call_driver import CallDriver, RealtimeDriver, VirtualDriver
from sessions.agents.base import Agent
from sessions.agents.scripted import ScriptedAgent
from sessions.call import CallConfig, CallLoop, Recorder
from sessions.call.adapt import RuleAdapter
from sessions.call.voice import Voice
from sessions.call.voice_setup import VoiceSpec, build_voice
from sessions.log.models import AgentInfo
from sessions.policies.factory import build_policy
from sessions.scenarios import Scenario, load_scenario
from sessions.speech_clock import SpeakingStyle

if TYPE_CHECKING:
    from sessions.llm_client import LLMConfig
    from sessions.simulator import UserSimulator

DEFAULT_SCENARIO = "retail-order-change"
DEFAULT_TENDENCIES = Tendencies(0.5, 0.0, 0.5)
"""α 0.5 (disfluent typing is visible at once), β 0 (interrupt on F2 or raise β),
γ 0.5 (backchannels from the agent's second turn). The method varies β and γ one
at a time, so the default keeps β at 0 while γ is on."""


@dataclass(frozen=True)
class CallOptions:
    """What `cutin call` (or the home screen) asks for."""

    scenario: str = DEFAULT_SCENARIO
    """A shipped scenario name or a TOML file path."""
    tendencies: Tendencies = DEFAULT_TENDENCIES
    seed: int = 0
    disfluency_style: str = "paper"
    """The caller's disfluency style (controls.disfluency.STYLES): paper or human."""
    words_per_minute: float = 165.0
    auto_interrupt: bool = True
    auto_backchannel: bool = True
    sessions_dir: Path | None = None
    """Where the log goes; None means don't record (tests of the screen alone)."""
    agent: str = "scripted"
    """scripted (the scenario's script, offline) | openai (any OpenAI-compatible endpoint)
    | twilio:ws://... (a black-box agent over Twilio Media Streams) | realtime (OpenAI
    Realtime speech-to-speech)."""
    base_url: str | None = None
    model: str | None = None
    agent_prompt: Path | None = None
    """The agent under test's system prompt file (default: the scenario's)."""
    policy: str = "rules"
    shadow: str | None = None
    simulator: bool = False
    """Offer LLM-suggested caller replies (needs an endpoint: --base-url or a key)."""
    speech: str = "text"
    """text (the text clock, no audio) | espeak | openai: how both sides are spoken."""
    input: str = "type"
    """type | mic (STT of the tester's microphone; needs audio speech)."""
    stt: str | None = None
    """faster-whisper model for --input mic (default: settings, else offline tiny.en)."""
    vad: str = "onnx"
    push_to_talk: bool = False
    """--input mic: utterances between two presses of the talk key, not VAD-segmented."""
    input_device: int | None = None
    output_device: int | None = None
    listen: bool = False
    adapt: bool = False
    """--adapt: the rule's thresholds follow the agent's rhythm, measured live."""
    """A black-box call: play the line on the output device."""

    def voice_spec(self) -> VoiceSpec:
        """How this call is spoken and heard (OpenAI TTS uses the agent's endpoint settings)."""
        base_url, api_key = self.base_url, None
        if self.speech == "openai":
            from sessions.settings import Settings

            settings = Settings()
            base_url = base_url or settings.openai_base_url
            if settings.openai_api_key is not None:
                api_key = settings.openai_api_key.get_secret_value()
        return VoiceSpec(
            speech=self.speech,
            input=self.input,
            stt=self.stt,
            vad=self.vad,
            push_to_talk=self.push_to_talk,
            input_device=self.input_device,
            output_device=self.output_device,
            words_per_minute=self.words_per_minute,
            openai_base_url=base_url,
            openai_api_key=api_key,
        )


def _llm_config(options: CallOptions) -> LLMConfig:
    from sessions.llm_client import LLMConfig
    from sessions.settings import Settings

    return LLMConfig.from_settings(Settings(), model=options.model, base_url=options.base_url)


def _agent(options: CallOptions, scenario: Scenario) -> tuple[Agent, AgentInfo]:
    if options.agent == "scripted":
        return ScriptedAgent(scenario), AgentInfo(kind="scripted", name=scenario.agent.name)
    if options.agent == "openai":
        from sessions.agents.openai_agent import OpenAIAgent
        from sessions.settings import Settings

        agent = OpenAIAgent.from_settings(
            Settings(),
            scenario_agent=scenario.agent,
            agent_prompt_file=options.agent_prompt,
            model=options.model,
            base_url=options.base_url,
        )
        config = agent.llm.config
        info = AgentInfo(
            kind="openai", name=scenario.agent.name, model=config.model, base_url=config.base_url
        )
        return agent, info
    raise ValueError(f"unknown agent {options.agent!r}; choose scripted or openai")


def _uses_llm(options: CallOptions) -> bool:
    return (
        options.agent == "openai"
        or options.simulator
        or "tau-voice" in (options.policy, options.shadow)
    )


def _call_config(options: CallOptions, scenario: Scenario) -> CallConfig:
    from controls.disfluency import profile_for_style

    return CallConfig(
        scenario=scenario,
        tendencies=options.tendencies,
        seed=options.seed,
        style=SpeakingStyle(words_per_minute=options.words_per_minute),
        auto_interrupt=options.auto_interrupt,
        auto_backchannel=options.auto_backchannel,
        profile=profile_for_style(options.disfluency_style),
    )


def _simulator(llm: LLMConfig, scenario: Scenario) -> UserSimulator:
    """The LLM user simulator behind F9 (and the caller of an LLM agent)."""
    from sessions.llm_client import LLMClient
    from sessions.simulator import UserSimulator

    return UserSimulator.from_scenario(LLMClient(llm), scenario.user)


def build_loop(
    options: CallOptions, scenario: Scenario, *, virtual: bool, voice: Voice | None = None
) -> tuple[CallLoop, AgentInfo, UserSimulator | None]:
    """A call loop for a tester typing (or speaking) to the agent under test."""
    config = _call_config(options, scenario)
    llm = _llm_config(options) if _uses_llm(options) else None
    if llm is not None:
        llm.resolved_key()  # no key and no local endpoint: say so before the call starts
    agent, info = _agent(options, scenario)
    policy = build_policy(options.policy, llm=llm, seed=options.seed)
    shadow = build_policy(options.shadow, llm=llm, seed=options.seed, shadow=True)
    simulator = None
    if llm is not None and (options.simulator or options.agent == "openai"):
        simulator = _simulator(llm, scenario)
    # Always there, off without --adapt: it takes in the agent's turns from the start, so
    # switching adapt on mid-call (F12) calibrates on what was already heard.
    adapter = RuleAdapter(
        enabled=options.adapt, frame_s=config.frame_s, busy_s=config.backchannel_s
    )
    loop = CallLoop(
        config,
        agent,
        user=None,
        policy=policy,
        shadow=shadow,
        virtual=virtual,
        voice=voice,
        adapter=adapter,
    )
    return loop, info, simulator


def open_call(options: CallOptions, *, virtual: bool = False) -> CallDriver:
    """Load the scenario, create the log (when a sessions dir is given) and a driver.

    Raises ``ScenarioError`` for a bad scenario, ``OSError`` when the log cannot be
    created, ``ValueError``/``LLMError``/``AgentError`` for an unusable agent or
    policy setup, and ``VoiceSetupError`` when the speech or input asked for cannot
    run (its message names the fix); nothing runs until the driver is started. A
    voice call's devices are open (playing silence) when this returns."""
    scenario = load_scenario(options.scenario)
    from sessions.lines.factory import is_line_agent

    if is_line_agent(options.agent):
        return _open_remote_call(options, scenario, virtual=virtual)
    spec = options.voice_spec()
    voice = build_voice(
        spec, style=SpeakingStyle(words_per_minute=options.words_per_minute), realtime=not virtual
    )
    try:
        loop, info, simulator = build_loop(options, scenario, virtual=virtual, voice=voice)
        recorder = None
        if options.sessions_dir is not None:
            recorder = Recorder.create(
                options.sessions_dir,
                loop.config,
                info,
                speech=spec.info(),
                policy=options.policy,
                shadow=options.shadow,
            )
            if spec.audio:
                _record_audio(voice, recorder)
    except BaseException:
        voice.close()
        raise
    if virtual:
        return VirtualDriver(loop, scenario, recorder, simulator)
    return RealtimeDriver(loop, scenario, recorder, simulator)


def _record_audio(voice: Voice, recorder: Recorder) -> None:
    from sessions.call.audio_voice import AudioVoice
    from sessions.call.recording import CallRecording, recording_path

    if isinstance(voice, AudioVoice):
        voice.record_to(CallRecording(recording_path(recorder.path)))


def _open_remote_call(options: CallOptions, scenario: Scenario, *, virtual: bool) -> CallDriver:
    """A call to a black-box agent: check the local parts, dial, then start the log."""
    from sessions.call.adapt import line_adapter
    from sessions.call.recording import CallRecording, recording_path
    from sessions.call.remote_setup import RemoteSpec, build_remote_loop

    instructions = scenario.agent.system_prompt or None
    if options.agent_prompt is not None:
        from sessions.safe_files import read_text

        instructions = read_text(options.agent_prompt)  # a FileError is one CLI line
    spec = RemoteSpec.from_settings(
        options.agent,
        base_url=options.base_url,
        model=options.model,
        instructions=instructions,
        stt=options.stt,
        vad=options.vad,
        words_per_minute=round(options.words_per_minute),
    )
    config = _call_config(options, scenario)
    simulator = None
    if options.simulator:
        llm = _llm_config(options)
        llm.resolved_key()  # no key and no local endpoint: say so before dialling
        simulator = _simulator(llm, scenario)
    loop = build_remote_loop(spec, config, virtual=virtual)
    # Off without --adapt but there, so F12 can switch it on over the turns already heard.
    loop.adapter = line_adapter(config, enabled=options.adapt)
    recorder = None
    try:
        if options.sessions_dir is not None:
            recorder = Recorder.create(
                options.sessions_dir,
                config,
                spec.agent_info(scenario.agent.name),
                speech=spec.speech_info(),
                policy="rules",
            )
            loop.recording = CallRecording(recording_path(recorder.path))
        if options.listen:
            from sessions.call.line_monitor import LineMonitor

            loop.monitor = LineMonitor(options.output_device).start()
        if options.input == "mic":
            from sessions.call.remote_setup import attach_microphone

            attach_microphone(
                loop,
                device=options.input_device,
                push_to_talk=options.push_to_talk,
                vad=options.vad,
            )
    except BaseException:
        loop.voice.close()
        raise
    if virtual:
        return VirtualDriver(loop, scenario, recorder, simulator)
    return RealtimeDriver(loop, scenario, recorder, simulator)
