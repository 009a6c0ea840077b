"""A :class:`~sessions.plan.model.CallPlan` made into a call: the loop with its agent (or
line), caller, voice, policies, adapter, log writer and audio recording.

The one place a call is put together, whoever asks (`cutin call`, the TUI, `cutin
simulate`, the overlap gallery), and the one reader of the settings for it. Everything
that can fail is done before the log file is created, so a call that cannot start
leaves no log behind.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sessions.call.config import CallConfig
from sessions.call.engine.engine import CallEngine
from sessions.call.near_end.caller import InterruptionText
from sessions.call.recorder import Recorder, make_header
from sessions.call.setup.simulated_call import simulated_call
from sessions.call.voice.voice import TextVoice, Voice
from sessions.log.models import AgentInfo, Event, SpeechInfo
from sessions.log.writer import new_session_id
from sessions.plan.model import CallPlan, check_plan
from sessions.scenarios.keypad import check_keypad
from sessions.scenarios.model import Scenario
from sessions.speech.speech_clock import SpeakingStyle

if TYPE_CHECKING:
    from sessions.agents.base import Agent
    from sessions.call.adapt import RuleAdapter
    from sessions.call.policy import TurnTakingPolicy
    from sessions.call.setup.line_call import RemoteSpec
    from sessions.call.setup.voice import VoiceSpec
    from sessions.callers.simulator import UserSimulator
    from sessions.callers.users import UserProvider
    from sessions.llm_client import LLMConfig
    from sessions.scenarios.profile import AgentProfile
    from sessions.settings import Settings

LINE_CALL_SECONDS = 120.0
"""A headless call to a black-box agent runs in real time; it is ended here unless told
otherwise."""

Closer = Callable[[], None]


@dataclass
class BuiltCall:
    """A call ready to run: nothing has been said yet."""

    plan: CallPlan
    scenario: Scenario
    loop: CallEngine[Any]
    """The engine with its far end: a simulated agent, or a black-box agent on a line."""
    agent: AgentInfo
    recorder: Recorder | None = None
    """The log writer (None: not recorded); whoever runs the call makes it a listener."""
    simulator: UserSimulator | None = None
    """Suggests the tester's next turn (F9); None without an LLM endpoint."""
    closers: list[Closer] = field(default_factory=list)
    """What :meth:`close` releases besides the log: the voice, the simulated caller,
    the policies' clients."""

    def run_headless(self) -> None:
        """Run to the end: on the virtual clock, or a line in real time until the caller
        hangs up (or ``max_seconds``)."""
        if self.loop.line is not None:
            self.loop.run_for(self.plan.max_seconds or LINE_CALL_SECONDS)
        else:
            self.loop.run_virtual()

    def close(self) -> None:
        """Close the log, then the rest; never raises for a part that fails to close."""
        if self.recorder is not None:
            self.recorder.close()
        closers, self.closers = self.closers, []  # closed once, however often asked
        for close in closers:
            with contextlib.suppress(Exception):
                close()


@dataclass
class _Caller:
    """Who speaks for the caller (None: the tester), and how their interruptions read."""

    user: UserProvider | None = None
    interruption_text: InterruptionText | None = None
    model: str | None = None
    simulator: UserSimulator | None = None
    """The tester's F9 suggestions."""


def build_call(
    plan: CallPlan,
    settings: Settings | None = None,
    *,
    listeners: Iterable[Callable[[Event], None]] = (),
) -> BuiltCall:
    """Check the plan, then build its call; ``settings`` default to the environment's.

    Raises :class:`~sessions.plan.model.PlanError` for a plan that cannot work, before
    anything opens; ``ScenarioError``, ``LLMError``/``AgentError``/``ValueError`` for an
    unusable scenario, endpoint or prompt, ``VoiceSetupError`` naming the fix for a
    missing speech part, ``LineError`` when the line cannot be dialled, ``OSError`` when
    the log cannot be created. A real-time voice call's devices are open when this
    returns."""
    check_plan(plan)
    if settings is None:
        from sessions.settings import Settings

        settings = Settings()
    scenario = plan.scenario_model or _load_scenario(plan.scenario)
    check_keypad(scenario, plan.agent, plan.user)  # keys only a line with DTMF hears
    config = call_config(plan, scenario)
    closers: list[Closer] = []
    try:
        llm = _llm_config(plan, settings) if plan.uses_llm else None
        if llm is not None:
            llm.resolved_key()  # no key and no local endpoint: say so before the call starts
        caller = _caller(plan, scenario, llm, closers)
        if plan.on_line:
            built = _line_call(plan, settings, config, caller, llm, closers)
        else:
            built = _local_call(plan, settings, config, caller, llm, closers)
        built.loop.listeners.extend(listeners)
    except BaseException:
        for close in reversed(closers):
            with contextlib.suppress(Exception):
                close()
        raise
    return built


def call_config(plan: CallPlan, scenario: Scenario) -> CallConfig:
    from controls.disfluency import profile_for_style

    limit = {} if plan.max_seconds is None else {"max_seconds": plan.max_seconds}
    return CallConfig(
        scenario=scenario,
        tendencies=plan.tendencies,
        seed=plan.seed,
        style=SpeakingStyle(words_per_minute=plan.words_per_minute),
        auto_interrupt=plan.auto_interrupt,
        auto_backchannel=plan.auto_backchannel,
        profile=profile_for_style(plan.disfluency_style),
        **limit,  # type: ignore[arg-type]
    )


def _load_scenario(name: str) -> Scenario:
    from sessions.scenarios import load_scenario

    return load_scenario(name)


def _llm_config(plan: CallPlan, settings: Settings) -> LLMConfig:
    from sessions.llm_client import LLMConfig

    return LLMConfig.from_settings(
        settings, model=plan.model, base_url=plan.base_url, seed=plan.llm_seed
    )


def _caller(
    plan: CallPlan, scenario: Scenario, llm: LLMConfig | None, closers: list[Closer]
) -> _Caller:
    if plan.user == "scripted":
        from sessions.callers.users import ScriptedUser

        return _Caller(ScriptedUser(scenario, barge_in_with_next_line=plan.scripted_barge_in))
    wants_simulator = plan.user == "llm" or plan.suggest or plan.agent == "openai"
    if llm is None or not wants_simulator:
        return _Caller()
    from sessions.callers.simulator import UserSimulator
    from sessions.llm_client import LLMClient

    sim = UserSimulator.from_scenario(LLMClient(llm), scenario.user)
    closers.append(sim.close)
    if plan.user == "llm":
        return _Caller(sim, sim.interruption_line, llm.model)
    return _Caller(simulator=sim)


def _profile(plan: CallPlan) -> AgentProfile | None:
    from sessions.scenarios.profile import load_profile

    return None if plan.agent_profile is None else load_profile(plan.agent_profile)


def _agent(
    plan: CallPlan, scenario: Scenario, llm: LLMConfig | None, profile: AgentProfile | None
) -> tuple[Agent, AgentInfo]:
    name = scenario.agent.name
    if plan.agent == "scripted":
        from sessions.agents.scripted import ScriptedAgent

        words = profile.turn_words if profile is not None else []
        agent = ScriptedAgent(scenario, turn_words=words, seed=plan.seed)
        return agent, AgentInfo(kind="scripted", name=name)
    from sessions.agents.base import AgentError
    from sessions.agents.openai_agent import OpenAIAgent
    from sessions.hostile.safe_files import FileError, read_text

    assert llm is not None  # an LLM agent makes the plan use an LLM
    prompt = scenario.agent.system_prompt
    if plan.agent_prompt is not None:
        try:
            prompt = read_text(plan.agent_prompt).strip()
        except FileError as exc:
            raise AgentError(f"cannot read agent prompt: {exc}") from None
    info = AgentInfo(kind="openai", name=name, model=llm.model, base_url=llm.base_url)
    return OpenAIAgent.from_config(llm, system_prompt=prompt, name=name), info


def _voice_spec(plan: CallPlan, settings: Settings) -> VoiceSpec:
    from sessions.call.setup.voice import VoiceSpec

    key = settings.openai_api_key
    return VoiceSpec(
        speech=plan.speech,
        input=plan.input,
        stt=plan.stt or settings.stt_model,
        vad=plan.vad,
        push_to_talk=plan.push_to_talk,
        input_device=plan.input_device,
        output_device=plan.output_device,
        words_per_minute=plan.words_per_minute,
        openai_base_url=plan.base_url or settings.openai_base_url,
        openai_api_key=key.get_secret_value() if key is not None else None,
        cache_dir=settings.cache_dir,
    )


def _simulated_speech(plan: CallPlan) -> SpeechInfo:
    """The header's speech block of a call whose caller is simulated."""
    return SpeechInfo(
        tts=plan.speech,
        input="simulator",
        vad=plan.vad if plan.speech != "text" else None,
        words_per_minute=plan.words_per_minute,
    )


def _local_call(
    plan: CallPlan,
    settings: Settings,
    config: CallConfig,
    caller: _Caller,
    llm: LLMConfig | None,
    closers: list[Closer],
) -> BuiltCall:
    from sessions.call.setup.voice import build_voice
    from sessions.scenarios.profile import agent_style

    scenario = config.scenario
    profile = _profile(plan)
    agent, info = _agent(plan, scenario, llm, profile)
    spec = _voice_spec(plan, settings)
    voice: Voice = build_voice(spec, style=config.style, realtime=not plan.clock_virtual)
    closers.append(voice.close)
    if profile is not None and not spec.audio:
        # The agent's turns are timed by its profile; the caller keeps the call's style.
        voice = TextVoice(config.style, agent_style=agent_style(profile, config.style))
    policy, shadow = _policies(plan, llm, closers)
    loop = simulated_call(
        config,
        agent,
        user=caller.user,
        interruption_text=caller.interruption_text,
        policy=policy,
        shadow=shadow,
        virtual=plan.clock_virtual,
        voice=voice,
        adapter=_adapter(plan, config, profile),
    )
    speech = spec.info() if plan.user == "tester" else _simulated_speech(plan)
    recorder = _recorder(plan, config, info, speech, caller)
    if recorder is not None and spec.audio:
        from sessions.call.voice.audio_voice import AudioVoice
        from sessions.call.voice.recording import CallRecording, recording_path

        if isinstance(voice, AudioVoice):
            audio = plan.audio_path or recording_path(recorder.path)
            with _removed_on_error(recorder):
                voice.record_to(CallRecording(audio))
    return BuiltCall(plan, scenario, loop, info, recorder, caller.simulator, closers)


def _policies(
    plan: CallPlan, llm: LLMConfig | None, closers: list[Closer]
) -> tuple[TurnTakingPolicy | None, TurnTakingPolicy | None]:
    """The acting policy and the shadow beside it (None: none), for either far end."""
    from sessions.policies.factory import build_policy, close_policy

    policy = build_policy(plan.policy, llm=llm, seed=plan.seed)
    closers.append(lambda: close_policy(policy))
    shadow = build_policy(plan.shadow, llm=llm, seed=plan.seed, shadow=True)
    closers.append(lambda: close_policy(shadow))
    return policy, shadow


def _adapter(
    plan: CallPlan, config: CallConfig, profile: AgentProfile | None
) -> RuleAdapter | None:
    """The tester's call always has one, off without --adapt, so switching adapt on mid-call
    (F12) calibrates on what was already heard. A simulated call has one only with --adapt:
    a scripted agent on the text clock is measured before the call, on its own script in its
    own voice style; any other agent live, over the call's first turns."""
    from sessions.call.adapt import RuleAdapter, script_sample

    frame_s, busy_s = config.frame_s, config.backchannel_s
    if plan.user == "tester":
        return RuleAdapter(enabled=plan.adapt, frame_s=frame_s, busy_s=busy_s)
    if not plan.adapt:
        return None
    if plan.agent != "scripted" or plan.speech != "text":
        return RuleAdapter(frame_s=frame_s, busy_s=busy_s)
    from sessions.scenarios.profile import agent_style

    style = config.style if profile is None else agent_style(profile, config.style)
    words = profile.turn_words if profile is not None else []
    sample = script_sample(config.scenario, style, turn_words=words, seed=config.seed)
    return RuleAdapter(sample=sample, frame_s=frame_s, busy_s=busy_s)


def _recorder(
    plan: CallPlan, config: CallConfig, info: AgentInfo, speech: SpeechInfo, caller: _Caller
) -> Recorder | None:
    """The log writer: a new file in the sessions folder, or exactly ``log_path``."""
    fields: dict[str, object] = {"speech": speech, "policy": plan.policy, "shadow": plan.shadow}
    if plan.batch is not None:
        batch = dict(plan.batch)
        if caller.model is not None:
            batch["user_model"] = caller.model
        fields["batch"] = batch
    if plan.log_path is not None:
        header = make_header(config, session_id=new_session_id(), agent=info, **fields)  # type: ignore[arg-type]
        return Recorder(plan.log_path, header)
    if plan.sessions_dir is not None:
        return Recorder.create(plan.sessions_dir, config, info, **fields)
    return None


@contextlib.contextmanager
def _removed_on_error(recorder: Recorder) -> Iterator[None]:
    """The log was the last thing made: if what follows fails, no log is left behind."""
    try:
        yield
    except BaseException:
        recorder.close()
        recorder.path.unlink(missing_ok=True)
        raise


def _remote_spec(plan: CallPlan, settings: Settings, scenario: Scenario) -> RemoteSpec:
    from sessions.call.setup.line_call import RemoteSpec

    instructions = scenario.agent.system_prompt or None
    if plan.agent_prompt is not None:
        from sessions.hostile.safe_files import read_text

        instructions = read_text(plan.agent_prompt)  # a FileError is one CLI line
    key = settings.openai_api_key
    return RemoteSpec(
        agent=plan.agent,
        base_url=plan.base_url or settings.openai_base_url,
        model=plan.model,
        api_key=key.get_secret_value() if key is not None else None,
        instructions=instructions,
        stt=plan.stt or settings.stt_model,
        vad=plan.vad,
        words_per_minute=round(plan.words_per_minute),
        cache_dir=settings.cache_dir,
        transcribe=plan.transcribe,
    )


def _line_call(
    plan: CallPlan,
    settings: Settings,
    config: CallConfig,
    caller: _Caller,
    llm: LLMConfig | None,
    closers: list[Closer],
) -> BuiltCall:
    """Check the local parts, dial, attach the tester's devices, then start the log."""
    from sessions.call.adapt import line_adapter
    from sessions.call.line_parts import RemoteConfig
    from sessions.call.setup.line_call import attach_microphone, build_line_call
    from sessions.call.voice.recording import CallRecording, recording_path

    scenario = config.scenario
    spec = _remote_spec(plan, settings, scenario)
    source = "simulator" if plan.user == "llm" else "scenario"
    policy, shadow = _policies(plan, llm, closers)
    loop = build_line_call(
        spec,
        config,
        user=caller.user,
        virtual=plan.clock_virtual,
        remote=RemoteConfig(playout_depth_s=settings.playout_ms / 1000.0),
        user_source=source,
        policy=policy,
        shadow=shadow,
        interruption_text=caller.interruption_text,
    )
    try:
        if plan.user == "tester":
            # Off without --adapt but there, so F12 can switch it on over the turns heard.
            loop.adapter = line_adapter(config, enabled=plan.adapt)
            if plan.listen:
                from sessions.call.near_end.line_monitor import LineMonitor

                loop.far.monitor = LineMonitor(plan.output_device).start()
            if plan.input == "mic":
                attach_microphone(
                    loop, device=plan.input_device, push_to_talk=plan.push_to_talk, vad=plan.vad
                )
            speech = spec.speech_info()
        else:
            if plan.adapt:
                loop.adapter = line_adapter(config)
            speech = _simulated_speech(plan)
        info = spec.agent_info(scenario.agent.name)
        recorder = _recorder(plan, config, info, speech, caller)
        if recorder is not None:
            with _removed_on_error(recorder):
                loop.far.recording = CallRecording(plan.audio_path or recording_path(recorder.path))
    except BaseException:
        # Hangs up and closes the loop's parts (run_for does it after a call that ran).
        loop.voice.close()
        raise
    return BuiltCall(plan, scenario, loop, info, recorder, caller.simulator, closers)
