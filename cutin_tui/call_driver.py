"""The bridge between a running call and the screen. No Textual here.

A driver owns one call: the call loop, its recorder (the session log) and a
queue of events for the UI. The loop's listeners run on the loop's thread, so
they only write the log and append to the queue; the screen drains the queue
on its own timer and never blocks the loop. Commands go the other way through
the loop's thread-safe :meth:`CallLoop.submit`.

A voice call (``CallOptions.speech`` espeak/openai) speaks through an
:class:`~sessions.call.audio_voice.AudioVoice`: the driver opens its devices before
the call, starts them with the loop (whose clock the voice then provides), writes
both sides to ``<log>.wav`` beside the log, and closes everything at the end.

:class:`RealtimeDriver` runs the loop on a thread against the real clock (the
app). :class:`VirtualDriver` steps it on the virtual clock when told to, so
screen tests and snapshots see exactly the same call every time.
"""

from __future__ import annotations

import collections
import contextlib
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from controls.tendencies import Tendencies
from sessions.agents.base import Agent, Message
from sessions.agents.scripted import ScriptedAgent
from sessions.call import CallConfig, CallLoop, Command, EndCall, Recorder
from sessions.call.voice import Voice
from sessions.call.voice_setup import VoiceSpec, build_voice
from sessions.clock import Clock, RealClock
from sessions.log.models import AgentInfo, EndEvent, Event
from sessions.policies.factory import build_policy, close_policy
from sessions.scenarios import Scenario, load_scenario
from sessions.speech_clock import SpeakingStyle

if TYPE_CHECKING:
    from sessions.call.remote_loop import RemoteCallLoop
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


@dataclass
class CallDriver:
    """One call, its log, and the event queue the screen drains."""

    loop: CallLoop | RemoteCallLoop
    scenario: Scenario
    recorder: Recorder | None = None
    simulator: UserSimulator | None = None
    """Suggests the caller's next turn (None: no LLM endpoint configured)."""
    _events: collections.deque[Event] = field(default_factory=collections.deque)
    _ended: bool = False
    _stopped: bool = False
    _end_t: float | None = None

    def __post_init__(self) -> None:
        # The recorder first: an event is on disk before the screen can show it.
        listeners = [self._record, self._enqueue]
        self.loop.listeners[:0] = listeners

    # -- the loop thread side

    def _record(self, event: Event) -> None:
        recorder = self.recorder
        if recorder is not None and not recorder.writer.closed:
            recorder(event)

    def _enqueue(self, event: Event) -> None:
        if isinstance(event, EndEvent):
            self._end_t = event.t
            self._ended = True
        self._events.append(event)

    # -- the screen side

    @property
    def config(self) -> CallConfig:
        return self.loop.config

    @property
    def log_path(self) -> Path | None:
        return self.recorder.path if self.recorder is not None else None

    @property
    def ended(self) -> bool:
        """True once the call's end event has been emitted."""
        return self._ended

    def drain(self) -> list[Event]:
        """Every event queued since the last drain, in order (thread-safe)."""
        out: list[Event] = []
        events = self._events
        while events:
            out.append(events.popleft())
        return out

    @property
    def voice(self) -> Voice | Any:
        return self.loop.voice

    @property
    def line(self) -> Any:
        """The line to a black-box agent (None for a simulated agent)."""
        return getattr(self.loop, "line", None)

    @property
    def recording_path(self) -> Path | None:
        """The call's audio beside the log (voice calls that are recorded only)."""
        recording = getattr(self.loop.voice, "recording", None)
        return recording.path if recording is not None else None

    @property
    def push_to_talk(self) -> bool:
        """The tester's microphone waits for the talk key (:meth:`toggle_talk`)."""
        mic = getattr(self.loop.voice, "mic", None)
        return bool(mic is not None and mic.push_to_talk)

    def toggle_talk(self) -> bool:
        """Push-to-talk: start (or end) what the tester says into the microphone; returns
        whether they are talking now. Thread-safe. ``RuntimeError`` without push-to-talk."""
        mic = getattr(self.loop.voice, "mic", None)
        if mic is None or not mic.push_to_talk or self._ended:
            raise RuntimeError("push-to-talk needs a call with --input mic --push-to-talk")
        talking: bool = mic.toggle_talk()
        return talking

    def history(self) -> list[Message]:
        """A copy of the conversation so far (as the agent heard it)."""
        return [Message(m.role, m.content, m.truncated) for m in list(self.loop.history)]

    def suggest_reply(self) -> str:
        """Ask the LLM user simulator for the caller's next turn (blocking; call from a
        worker thread). Raises ``RuntimeError`` when no simulator is configured."""
        if self.simulator is None:
            raise RuntimeError(
                "suggestions need an LLM endpoint: start with --base-url URL (and --model), "
                "or set OPENAI_API_KEY"
            )
        return self.simulator.suggest(self.history())

    def submit(self, command: Command) -> None:
        """Queue a command for the loop's next frame (thread-safe)."""
        if not self._ended:
            self.loop.submit(command)

    def now(self) -> float:
        """Seconds since call start on the call's clock."""
        raise NotImplementedError

    def start(self) -> None:
        """Begin the call (idempotent)."""

    def stop(self, reason: str = "hangup") -> None:
        """End the call if it is still on, wait for the loop, close the log (idempotent)."""
        self._stopped = True
        self._close()

    def _close(self) -> None:
        with contextlib.suppress(Exception):  # devices going away must not hide the log
            self.loop.voice.close()
        if self.recorder is not None:
            self.recorder.close()
        for part in (self.loop.policy, self.loop.shadow, self.simulator):
            with contextlib.suppress(Exception):
                close_policy(part)


class RealtimeDriver(CallDriver):
    """Runs the loop on its own daemon thread against the monotonic clock."""

    def __init__(
        self,
        loop: CallLoop | RemoteCallLoop,
        scenario: Scenario,
        recorder: Recorder | None,
        simulator: UserSimulator | None = None,
    ) -> None:
        super().__init__(loop, scenario, recorder, simulator)
        self._clock: Clock = RealClock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.error: BaseException | None = None
        """What ended the loop's thread, if it crashed (also logged as an error event)."""

    def now(self) -> float:
        if self._end_t is not None:
            return self._end_t
        return self._clock.now() if self._thread is not None else 0.0

    def start(self) -> None:
        if self._thread is not None or self._stopped:
            return
        # A voice call follows the clock its audio device keeps (see sessions.call.audio_out).
        self._clock = self.loop.voice.start(self.loop.submit)
        self._thread = threading.Thread(target=self._run, name="cutin-call-loop", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self.loop.run_realtime(self._clock, self._stop)
        except BaseException as exc:  # already logged by the loop; keep it off the terminal
            self.error = exc

    def stop(self, reason: str = "hangup", timeout: float = 3.0) -> None:
        if self._stopped:
            return
        self._stopped = True
        thread = self._thread
        if thread is not None and thread.is_alive():
            self.loop.submit(EndCall(reason))
            thread.join(timeout / 2)
            if thread.is_alive():
                self._stop.set()
                thread.join(timeout / 2)
        self._close()


class VirtualDriver(CallDriver):
    """Steps the loop on its virtual clock only when :meth:`advance` is called."""

    def now(self) -> float:
        return self.loop.t

    def advance(self, until: float) -> None:
        """Run the call up to ``until`` seconds (or its end)."""
        while not self.loop.ended and self.loop.t < until - 1e-9:
            self.loop.step()

    def stop(self, reason: str = "hangup") -> None:
        if self._stopped:
            return
        self._stopped = True
        if not self.loop.ended:
            self.loop.submit(EndCall(reason))
            self.loop.step()
        self._close()


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
    return CallConfig(
        scenario=scenario,
        tendencies=options.tendencies,
        seed=options.seed,
        style=SpeakingStyle(words_per_minute=options.words_per_minute),
        auto_interrupt=options.auto_interrupt,
        auto_backchannel=options.auto_backchannel,
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
    loop = CallLoop(
        config, agent, user=None, policy=policy, shadow=shadow, virtual=virtual, voice=voice
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
