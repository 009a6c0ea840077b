"""Running a planned batch: one virtual-clock call per :class:`~sessions.batch.CallSpec`.

Each call is written to ``<stem>.jsonl.part`` and renamed to ``<stem>.jsonl`` only
when it ended cleanly, so a file with the final name is always a finished call and
a crash (or a kill) never leaves a half log that looks complete. On a rerun a
finished call is skipped after checking its header matches the plan; a call that
failed (an error event, or the loop raised) is kept as ``<stem>.jsonl.failed`` for
inspection and is run again next time.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

from controls.tendencies import Tendencies
from sessions.agents.base import Agent
from sessions.batch import CallSpec, CallTally, tally
from sessions.call.config import CallConfig
from sessions.call.loop import CallLoop, InterruptionText
from sessions.call.policy import TurnTakingPolicy
from sessions.call.recorder import Recorder, make_header
from sessions.call.users import ScriptedUser, UserProvider
from sessions.call.voice import TextVoice, Voice
from sessions.log.models import AgentInfo, Event, Header, SpeechInfo
from sessions.log.reader import LogError, read_session
from sessions.log.writer import new_session_id
from sessions.policies.factory import close_policy
from sessions.scenarios.model import Scenario
from sessions.scenarios.profile import AgentProfile, agent_style, load_profile
from sessions.speech_clock import SpeakingStyle

if TYPE_CHECKING:
    from sessions.call.adapt import RuleAdapter
    from sessions.call.remote_setup import RemoteSpec
    from sessions.llm_client import LLMConfig

PART_SUFFIX = ".part"
FAILED_SUFFIX = ".failed"


class BatchMismatch(RuntimeError):
    """A finished log in the batch folder was made with different settings."""


@dataclass(frozen=True, slots=True)
class RunOptions:
    """How every call of the batch is run (the same for all of them)."""

    agent: str = "scripted"
    """scripted | openai | twilio:ws://... | realtime (a black-box agent, in real time)"""
    model: str | None = None
    base_url: str | None = None
    """Endpoint and model for whatever runs on an LLM (the agent, the user, or both)."""
    user: str = "scripted"
    """scripted (the scenario's lines) | llm (the user simulator)"""
    policy: str = "rules"
    shadow: str | None = None
    speech: str = "text"
    """text (the text clock) | espeak (synthesized on the virtual clock, pauses from VAD;
    each call's audio is kept as ``<stem>.wav`` beside its log)."""
    max_seconds: float | None = None
    """Virtual seconds after which a call is ended (``time_limit``); default: the config's."""
    agent_profile: str | None = None
    """An agent profile (shipped name or TOML path) for every scenario; default: each
    scenario's own ``agent.profile``, if any (:mod:`sessions.scenarios.profile`)."""
    disfluency_style: str = "paper"
    """``--style``: the caller's disfluency style (controls.disfluency.STYLES)."""
    adapt: bool = False
    """``--adapt``: the rule's thresholds are calibrated to the agent's rhythm
    (:mod:`sessions.call.adapt`); each calibration is a ``calibration`` log event."""


class CallStatus(StrEnum):
    RAN = "ran"
    SKIPPED = "skipped"
    FAILED = "failed"


@dataclass(slots=True)
class CallOutcome:
    spec: CallSpec
    status: CallStatus
    path: Path
    tally: CallTally = field(default_factory=CallTally)
    message: str = ""
    """Why a call failed (first error)."""


def final_path(out_dir: Path, spec: CallSpec) -> Path:
    return Path(out_dir) / spec.file_name


def part_path(out_dir: Path, spec: CallSpec) -> Path:
    return Path(out_dir) / (spec.file_name + PART_SUFFIX)


def failed_path(out_dir: Path, spec: CallSpec) -> Path:
    return Path(out_dir) / (spec.file_name + FAILED_SUFFIX)


# ---- headers ----------------------------------------------------------------------


def agent_info(scenario: Scenario, options: RunOptions, model: str | None = None) -> AgentInfo:
    from sessions.lines.factory import is_line_agent

    if is_line_agent(options.agent):
        return _remote_spec(options).agent_info(scenario.agent.name)
    if options.agent == "scripted":
        return AgentInfo(kind="scripted", name=scenario.agent.name)
    return AgentInfo(
        kind=options.agent, name=scenario.agent.name, model=model, base_url=options.base_url
    )


def call_config(spec: CallSpec, scenario: Scenario, disfluency_style: str = "paper") -> CallConfig:
    from controls.disfluency import profile_for_style

    c = spec.condition
    return CallConfig(
        scenario=scenario,
        tendencies=Tendencies(c.alpha, c.beta, c.gamma),
        seed=spec.seed,
        style=SpeakingStyle(words_per_minute=spec.words_per_minute),
        profile=profile_for_style(disfluency_style),
    )


def profile_name(scenario: Scenario, options: RunOptions) -> str | None:
    """The agent profile a call of ``scenario`` runs with (as the header records it)."""
    return options.agent_profile or scenario.agent.profile


def _profile(scenario: Scenario, options: RunOptions) -> AgentProfile | None:
    name = profile_name(scenario, options)
    return None if name is None else load_profile(name)


def _header_mismatch(header: Header, spec: CallSpec, options: RunOptions) -> str | None:
    """The first planned setting the header disagrees with, as 'field: logged vs planned'."""
    c = spec.condition
    logged_t = header.tendencies
    batch = header.batch or {}
    pairs: list[tuple[str, object, object]] = [
        ("scenario", header.scenario, spec.scenario),
        ("seed", header.seeds.get("seed"), spec.seed),
        ("alpha", logged_t.alpha, c.alpha),
        ("beta", logged_t.beta, c.beta),
        ("gamma", logged_t.gamma, c.gamma),
        ("words per minute", header.speech.words_per_minute, spec.words_per_minute),
        ("speech", header.speech.tts, options.speech),
        ("agent", header.agent.kind, _agent_kind(options.agent)),
        ("policy", header.policy, options.policy),
        ("shadow", header.shadow, options.shadow),
        ("user", batch.get("user"), options.user),
    ]
    if options.agent_profile is not None:
        pairs.append(("agent profile", batch.get("agent_profile"), options.agent_profile))
    pairs.append(("adapt", bool(batch.get("adapt", False)), options.adapt))
    pairs.append(("disfluency style", header.disfluency_style, options.disfluency_style))
    if options.agent != "scripted" and options.model is not None:
        pairs.append(("model", header.agent.model, options.model))
    if options.user != "scripted" and options.model is not None:
        pairs.append(("user model", batch.get("user_model"), options.model))
    for name, logged, planned in pairs:
        if logged != planned:
            return f"{name}: {logged!r} in the log, {planned!r} planned"
    return None


def finished_tally(out_dir: Path, spec: CallSpec, options: RunOptions) -> CallTally | None:
    """The tally of this call's finished log, or ``None`` when it must be (re)run.

    Raises :class:`BatchMismatch` when a finished log with this name was made with
    other settings: mixing two batches in one folder would corrupt an audit."""
    path = final_path(out_dir, spec)
    if not path.is_file():
        return None
    try:
        session = read_session(path, skip_bad=True)
    except LogError:
        return None
    counted = tally(session.events)
    if not counted.complete:
        return None
    problem = _header_mismatch(session.header, spec, options)
    if problem is not None:
        raise BatchMismatch(
            f"{path} was made with other settings ({problem}); "
            "use another --out folder or delete that file"
        )
    return counted


# ---- one call ---------------------------------------------------------------------


def _llm_config(options: RunOptions, spec: CallSpec) -> LLMConfig:
    from sessions.llm_client import LLMConfig
    from sessions.settings import load_settings

    # The call's seed goes to the endpoint too, so a seeded server repeats itself.
    return LLMConfig.from_settings(
        load_settings(), model=options.model, base_url=options.base_url, seed=spec.seed
    )


def _make_agent(scenario: Scenario, spec: CallSpec, options: RunOptions) -> tuple[Agent, AgentInfo]:
    if options.agent == "scripted":
        from sessions.agents.scripted import ScriptedAgent

        profile = _profile(scenario, options)
        words = profile.turn_words if profile is not None else []
        scripted = ScriptedAgent(scenario, turn_words=words, seed=spec.seed)
        return scripted, agent_info(scenario, options)
    if options.agent == "openai":
        from sessions.agents.openai_agent import OpenAIAgent

        config = _llm_config(options, spec)
        agent = OpenAIAgent.from_config(
            config, system_prompt=scenario.agent.system_prompt, name=scenario.agent.name
        )
        return agent, agent_info(scenario, options, model=config.model)
    raise ValueError(f"unknown agent kind {options.agent!r}")


def _make_policies(
    spec: CallSpec, options: RunOptions
) -> tuple[TurnTakingPolicy | None, TurnTakingPolicy | None]:
    from sessions.policies.factory import build_policy

    needs_llm = "tau-voice" in (options.policy, options.shadow)
    llm = _llm_config(options, spec) if needs_llm else None
    policy = build_policy(options.policy, llm=llm, seed=spec.seed)
    shadow = build_policy(options.shadow, llm=llm, seed=spec.seed, shadow=True)
    return policy, shadow


@dataclass
class _Caller:
    """Who speaks for the caller, and how their interruption lines are made."""

    user: UserProvider
    interruption_text: InterruptionText | None = None
    model: str | None = None
    close: Callable[[], None] = lambda: None


def _make_user(scenario: Scenario, spec: CallSpec, options: RunOptions) -> _Caller:
    if options.user == "scripted":
        return _Caller(ScriptedUser(scenario, barge_in_with_next_line=True))
    if options.user == "llm":
        from sessions.llm_client import LLMClient
        from sessions.simulator import UserSimulator

        config = _llm_config(options, spec)
        sim = UserSimulator.from_scenario(LLMClient(config), scenario.user)
        return _Caller(sim, sim.interruption_line, config.model, sim.close)
    raise ValueError(f"unknown user kind {options.user!r}")


def _agent_kind(agent: str) -> str:
    """The header's ``agent.kind`` for an ``--agent`` value (a line's URL is not a kind)."""
    from sessions.lines.factory import is_line_agent, parse_line_agent

    return parse_line_agent(agent).kind if is_line_agent(agent) else agent


def _header(
    spec: CallSpec, config: CallConfig, info: AgentInfo, options: RunOptions, caller: _Caller
) -> Header:
    batch: dict[str, object] = {**spec.batch_info(), "user": options.user}
    profile = profile_name(config.scenario, options)
    if profile is not None:
        batch["agent_profile"] = profile
    if caller.model is not None:
        batch["user_model"] = caller.model
    if options.adapt:
        batch["adapt"] = True
    return make_header(
        config,
        session_id=new_session_id(),
        agent=info,
        speech=SpeechInfo(
            tts=options.speech,
            input="simulator",
            vad="onnx" if options.speech != "text" else None,
            words_per_minute=spec.words_per_minute,
        ),
        policy=options.policy,
        shadow=options.shadow,
        batch=batch,
    )


def _fsync_dir(path: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _make_voice(config: CallConfig, options: RunOptions, wav: Path) -> Voice | None:
    """The call's voice for ``--speech`` (None: the plain text clock), recording to ``wav``.
    On the text clock an agent profile times the agent's turns (the caller keeps the
    call's style)."""
    if options.speech == "text":
        profile = _profile(config.scenario, options)
        if profile is None:
            return None
        return TextVoice(config.style, agent_style=agent_style(profile, config.style))
    from sessions.call.audio_voice import AudioVoice
    from sessions.call.recording import CallRecording
    from sessions.call.voice_setup import VoiceSpec, build_audio_voice

    spec = VoiceSpec(speech=options.speech, words_per_minute=config.style.words_per_minute)
    voice: AudioVoice = build_audio_voice(spec, realtime=False)
    voice.record_to(CallRecording(wav))
    return voice


def _make_adapter(config: CallConfig, options: RunOptions) -> RuleAdapter:
    """A scripted agent on the text clock is measured before the call, on its own script
    in its own voice style; any other agent live, over the call's first turns."""
    from sessions.call.adapt import RuleAdapter, script_sample

    frame_s, busy_s = config.frame_s, config.backchannel_s
    if options.agent != "scripted" or options.speech != "text":
        return RuleAdapter(frame_s=frame_s, busy_s=busy_s)
    profile = _profile(config.scenario, options)
    style = config.style if profile is None else agent_style(profile, config.style)
    words = profile.turn_words if profile is not None else []
    return RuleAdapter(
        sample=script_sample(config.scenario, style, turn_words=words, seed=config.seed),
        frame_s=frame_s,
        busy_s=busy_s,
    )


def recording_part(out_dir: Path, spec: CallSpec) -> Path:
    """Where a voice call's audio is written while it runs (renamed with its log)."""
    return final_path(out_dir, spec).with_suffix(".wav" + PART_SUFFIX)


LINE_CALL_SECONDS = 120.0
"""A call to a black-box agent runs in real time; it is ended here unless told otherwise."""


def _remote_spec(options: RunOptions) -> RemoteSpec:
    from sessions.call.remote_setup import RemoteSpec

    return RemoteSpec.from_settings(options.agent, base_url=options.base_url, model=options.model)


def _run_on_line(
    spec: CallSpec,
    scenario: Scenario,
    options: RunOptions,
    caller: _Caller,
    listeners: list[Callable[[Event], None]],
    wav: Path,
) -> None:
    """One call to a black-box agent, in real time, ending when the caller hangs up."""
    from sessions.call.remote_setup import build_remote_loop

    config = call_config(spec, scenario, options.disfluency_style)
    remote = _remote_spec(options)
    if scenario.agent.system_prompt:
        remote = dataclasses.replace(remote, instructions=scenario.agent.system_prompt)
    source = "simulator" if options.user == "llm" else "scenario"
    loop = build_remote_loop(
        remote, config, recording_path=wav, user=caller.user, user_source=source
    )
    if options.adapt:
        from sessions.call.adapt import line_adapter

        loop.adapter = line_adapter(config)
    loop.listeners.extend(listeners)
    loop.run_for(options.max_seconds or LINE_CALL_SECONDS)


def run_call(spec: CallSpec, scenario: Scenario, options: RunOptions, out_dir: Path) -> CallOutcome:
    """Run one call on the virtual clock (a black-box agent: in real time) and file its
    log by how it ended."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    part = part_path(out_dir, spec)
    part.unlink(missing_ok=True)  # a crash's leftover; never appended to
    wav_part = recording_part(out_dir, spec)
    config = call_config(spec, scenario, options.disfluency_style)
    from sessions.lines.factory import is_line_agent

    if is_line_agent(options.agent):
        return _run_line_call(spec, scenario, options, out_dir, part, wav_part)
    agent, info = _make_agent(scenario, spec, options)
    caller = _make_user(scenario, spec, options)
    counted = CallTally()
    recorder: Recorder | None = None
    voice = policy = shadow = None
    crash: str | None = None
    # Everything from the moment a .part file can exist sits inside the try, so a Ctrl-C
    # at any point leaves nothing half-done behind that could look like a result.
    try:
        voice = _make_voice(config, options, wav_part)
        recorder = Recorder(part, _header(spec, config, info, options, caller))
        policy, shadow = _make_policies(spec, options)
        adapter = _make_adapter(config, options) if options.adapt else None
        loop = CallLoop(
            config,
            agent,
            user=caller.user,
            listeners=[recorder, counted.add],
            interruption_text=caller.interruption_text,
            policy=policy,
            shadow=shadow,
            voice=voice,
            adapter=adapter,
        )
        loop.run_virtual(max_seconds=options.max_seconds)
    except Exception as exc:
        crash = f"{type(exc).__name__}: {exc}"
    except BaseException:
        if recorder is not None:
            recorder.close()
        if voice is not None:
            voice.close()
        part.unlink(missing_ok=True)
        wav_part.unlink(missing_ok=True)
        raise
    finally:
        if recorder is not None:
            recorder.close()
        if voice is not None:
            voice.close()
        with contextlib.suppress(Exception):
            caller.close()
        for p in (policy, shadow):
            with contextlib.suppress(Exception):
                close_policy(p)
    return _file(spec, out_dir, part, wav_part, recorder, counted, crash)


def _file(
    spec: CallSpec,
    out_dir: Path,
    part: Path,
    wav_part: Path,
    recorder: Recorder | None,
    counted: CallTally,
    crash: str | None,
) -> CallOutcome:
    """Move a finished call's log (and audio) to its final name, or file it as failed."""
    if recorder is None:
        # The log could not even be created: nothing to file; say why.
        return CallOutcome(spec, CallStatus.FAILED, part, counted, crash or "no log")
    if crash is None and counted.complete and not counted.errors:
        target = final_path(out_dir, spec)
        if wav_part.is_file():
            os.replace(wav_part, target.with_suffix(".wav"))
        os.replace(part, target)
        failed_path(out_dir, spec).unlink(missing_ok=True)
        _fsync_dir(out_dir)
        return CallOutcome(spec, CallStatus.RAN, target, counted)
    target = failed_path(out_dir, spec)
    wav_part.unlink(missing_ok=True)
    os.replace(part, target)
    message = crash or (counted.errors[0] if counted.errors else f"ended: {counted.end_reason}")
    return CallOutcome(spec, CallStatus.FAILED, target, counted, message)


def _run_line_call(
    spec: CallSpec,
    scenario: Scenario,
    options: RunOptions,
    out_dir: Path,
    part: Path,
    wav_part: Path,
) -> CallOutcome:
    config = call_config(spec, scenario, options.disfluency_style)
    counted = CallTally()
    recorder: Recorder | None = None
    caller: _Caller | None = None
    crash: str | None = None
    try:
        info = agent_info(scenario, options)
        caller = _make_user(scenario, spec, options)
        recorder = Recorder(part, _header(spec, config, info, options, caller))
        _run_on_line(spec, scenario, options, caller, [recorder, counted.add], wav_part)
    except Exception as exc:
        crash = f"{type(exc).__name__}: {exc}"
    except BaseException:
        if recorder is not None:
            recorder.close()
        part.unlink(missing_ok=True)
        wav_part.unlink(missing_ok=True)
        raise
    finally:
        if recorder is not None:
            recorder.close()
        if caller is not None:
            with contextlib.suppress(Exception):
                caller.close()
    return _file(spec, out_dir, part, wav_part, recorder, counted, crash)


# ---- the batch --------------------------------------------------------------------


def run_batch(
    specs: Sequence[CallSpec],
    scenarios: Mapping[str, Scenario],
    options: RunOptions,
    out_dir: Path,
    *,
    jobs: int = 1,
) -> Iterator[CallOutcome]:
    """Yield one outcome per spec: skipped (already finished) ones first, then as calls end.

    Raises :class:`BatchMismatch` before running anything if a finished log in
    ``out_dir`` disagrees with the plan. With ``jobs > 1`` calls run in that many
    worker processes; outcomes then arrive in completion order."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    todo: list[CallSpec] = []
    done: list[CallOutcome] = []
    for spec in specs:
        counted = finished_tally(out_dir, spec, options)
        if counted is None:
            todo.append(spec)
        else:
            done.append(CallOutcome(spec, CallStatus.SKIPPED, final_path(out_dir, spec), counted))
    yield from done
    if jobs <= 1 or len(todo) <= 1:
        for spec in todo:
            yield run_call(spec, scenarios[spec.scenario], options, out_dir)
        return
    yield from _run_parallel(todo, scenarios, options, out_dir, jobs)


def _run_parallel(
    todo: Sequence[CallSpec],
    scenarios: Mapping[str, Scenario],
    options: RunOptions,
    out_dir: Path,
    jobs: int,
) -> Iterator[CallOutcome]:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    # spawn: workers start clean (no inherited threads or open files).
    context = multiprocessing.get_context("spawn")
    pool = ProcessPoolExecutor(max_workers=jobs, mp_context=context)
    try:
        futures = [
            pool.submit(run_call, spec, scenarios[spec.scenario], options, out_dir) for spec in todo
        ]
        for future in as_completed(futures):
            yield future.result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
