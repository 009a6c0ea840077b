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
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

from controls.tendencies import Tendencies
from sessions.batch import CallSpec, CallTally, tally
from sessions.log.models import Header
from sessions.log.reader import LogError, read_session
from sessions.plan import CallPlan, agent_kind, on_line
from sessions.plan.build import BuiltCall, build_call
from sessions.scenarios.model import Scenario

if TYPE_CHECKING:
    from sessions.batch_live import BatchBoard
    from sessions.call.recorder import Recorder
    from sessions.settings import Settings

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


def profile_name(scenario: Scenario, options: RunOptions) -> str | None:
    """The agent profile a call of ``scenario`` runs with (as the header records it)."""
    return options.agent_profile or scenario.agent.profile


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
        ("agent", header.agent.kind, agent_kind(options.agent)),
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


def call_plan(spec: CallSpec, scenario: Scenario, options: RunOptions, out_dir: Path) -> CallPlan:
    """The plan of one call of the batch: logged to ``<stem>.jsonl.part``, its audio (a
    voice call) to ``<stem>.wav.part``, on the virtual clock unless on a line."""
    c = spec.condition
    profile = profile_name(scenario, options)
    batch: dict[str, object] = {**spec.batch_info(), "user": options.user}
    if profile is not None:
        batch["agent_profile"] = profile
    if options.adapt:
        batch["adapt"] = True
    return CallPlan(
        scenario=spec.scenario,
        tendencies=Tendencies(c.alpha, c.beta, c.gamma),
        seed=spec.seed,
        disfluency_style=options.disfluency_style,
        words_per_minute=spec.words_per_minute,
        adapt=options.adapt,
        agent=options.agent,
        base_url=options.base_url,
        model=options.model,
        agent_profile=profile,
        policy=options.policy,
        shadow=options.shadow,
        user=options.user,
        speech=options.speech,
        virtual=None,
        max_seconds=options.max_seconds,
        # The call's seed goes to the endpoint too, so a seeded server repeats itself.
        llm_seed=spec.seed,
        log_path=part_path(out_dir, spec),
        audio_path=recording_part(out_dir, spec),
        batch=batch,
        scenario_model=scenario,
    )


def _fsync_dir(path: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def recording_part(out_dir: Path, spec: CallSpec) -> Path:
    """Where a voice call's audio is written while it runs (renamed with its log)."""
    return final_path(out_dir, spec).with_suffix(".wav" + PART_SUFFIX)


def run_call(
    spec: CallSpec,
    scenario: Scenario,
    options: RunOptions,
    out_dir: Path,
    settings: Settings | None = None,
) -> CallOutcome:
    """Run one call on the virtual clock (a black-box agent: in real time) and file its
    log by how it ended."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    part = part_path(out_dir, spec)
    part.unlink(missing_ok=True)  # a crash's leftover; never appended to
    wav_part = recording_part(out_dir, spec)
    counted = CallTally()
    built: BuiltCall | None = None
    crash: str | None = None
    # Everything from the moment a .part file can exist sits inside the try, so a Ctrl-C
    # at any point leaves nothing half-done behind that could look like a result.
    try:
        built = build_call(call_plan(spec, scenario, options, out_dir), settings)
        if built.recorder is not None:
            built.loop.listeners.append(built.recorder)
        built.loop.listeners.append(counted.add)
        built.run_headless()
    except Exception as exc:
        crash = f"{type(exc).__name__}: {exc}"
    except BaseException:
        if built is not None:
            built.close()
        part.unlink(missing_ok=True)
        wav_part.unlink(missing_ok=True)
        raise
    finally:
        if built is not None:
            built.close()
    recorder = built.recorder if built is not None else None
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
    return file_parts(spec, out_dir, counted, crash)


def file_parts(spec: CallSpec, out_dir: Path, counted: CallTally, crash: str | None) -> CallOutcome:
    """File the call's ``.part`` log (and ``.wav.part`` audio, if any) in ``out_dir``: to
    the final name when it ended cleanly, else as ``.failed``. Also used for a call run
    on another machine whose bytes the driver wrote here (:mod:`sessions.cluster`)."""
    part, wav_part = part_path(out_dir, spec), recording_part(out_dir, spec)
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


# ---- the batch --------------------------------------------------------------------


def pending_calls(
    specs: Sequence[CallSpec], options: RunOptions, out_dir: Path
) -> tuple[list[CallSpec], list[CallOutcome]]:
    """The calls still to run, and those an earlier run filed (as skipped outcomes): a
    rerun into the same folder resumes."""
    todo: list[CallSpec] = []
    done: list[CallOutcome] = []
    for spec in specs:
        counted = finished_tally(out_dir, spec, options)
        if counted is None:
            todo.append(spec)
        else:
            done.append(CallOutcome(spec, CallStatus.SKIPPED, final_path(out_dir, spec), counted))
    return todo, done


def run_batch(
    specs: Sequence[CallSpec],
    scenarios: Mapping[str, Scenario],
    options: RunOptions,
    out_dir: Path,
    *,
    jobs: int = 1,
    settings: Settings | None = None,
    agents: Sequence[str] = (),
    board: BatchBoard | None = None,
) -> Iterator[CallOutcome]:
    """Yield one outcome per spec: skipped (already finished) ones first, then as calls end.

    Raises :class:`BatchMismatch` before running anything if a finished log in
    ``out_dir`` disagrees with the plan. On the virtual clock, ``jobs > 1`` calls run in
    that many worker processes; calls on a line run in real time, ``jobs`` at once in
    this process on one pump, dialling ``agents`` (default: ``options.agent``; several
    are each lent to one call at a time, :mod:`sessions.batch_live`). Outcomes then
    arrive in completion order. ``board`` shows what is running (a progress display)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    todo, done = pending_calls(specs, options, out_dir)
    yield from done
    if on_line(options.agent):
        from sessions.batch_live import run_live

        yield from run_live(
            todo,
            scenarios,
            options,
            out_dir,
            jobs=jobs,
            agents=agents,
            settings=settings,
            board=board,
        )
        return
    if jobs <= 1 or len(todo) <= 1:
        for spec in todo:
            if board is not None:
                board._started(spec.stem, None)
            yield run_call(spec, scenarios[spec.scenario], options, out_dir, settings)
            if board is not None:
                board._ended(spec.stem)
        return
    yield from _run_parallel(todo, scenarios, options, out_dir, jobs, settings, board)


def _run_parallel(
    todo: Sequence[CallSpec],
    scenarios: Mapping[str, Scenario],
    options: RunOptions,
    out_dir: Path,
    jobs: int,
    settings: Settings | None,
    board: BatchBoard | None = None,
) -> Iterator[CallOutcome]:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    # spawn: workers start clean (no inherited threads or open files).
    context = multiprocessing.get_context("spawn")
    pool = ProcessPoolExecutor(max_workers=jobs, mp_context=context)
    # The workers take the calls in the order submitted, one each: the board shows the
    # first ``jobs`` running, then the next as each ends.
    waiting = list(todo)
    try:
        futures = {
            pool.submit(run_call, spec, scenarios[spec.scenario], options, out_dir, settings): spec
            for spec in todo
        }
        if board is not None:
            for spec in waiting[:jobs]:
                board._started(spec.stem, None)
            del waiting[:jobs]
        for future in as_completed(futures):
            if board is not None:
                board._ended(futures[future].stem)
                if waiting:
                    board._started(waiting.pop(0).stem, None)
            yield future.result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
