"""Filing a batch's calls in its folder, the same for every executor.

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
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

from controls.tendencies import Tendencies
from sessions.batch.plan import CallSpec
from sessions.batch.tally import CallTally, tally
from sessions.log.models import Header
from sessions.log.reader import LogError, read_session
from sessions.plan import CallPlan, agent_kind
from sessions.scenarios.model import Scenario

if TYPE_CHECKING:
    from sessions.call.recorder import Recorder

PART_SUFFIX = ".part"
FAILED_SUFFIX = ".failed"


class BatchMismatch(RuntimeError):
    """A finished log in the batch folder was made with different settings."""


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


def profile_name(scenario: Scenario, options: CallPlan) -> str | None:
    """The agent profile a call of ``scenario`` runs with (as the header records it)."""
    return options.agent_profile or scenario.agent.profile


def _header_mismatch(header: Header, spec: CallSpec, options: CallPlan) -> str | None:
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


def finished_tally(out_dir: Path, spec: CallSpec, options: CallPlan) -> CallTally | None:
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


def call_plan(spec: CallSpec, scenario: Scenario, options: CallPlan, out_dir: Path) -> CallPlan:
    """The plan of one call of the batch: the batch's plan (``options``) with the call's
    scenario, dials, seed and rate, logged to ``<stem>.jsonl.part``, its audio (a voice
    call) to ``<stem>.wav.part``, on the virtual clock unless on a line."""
    c = spec.condition
    profile = profile_name(scenario, options)
    batch: dict[str, object] = {**spec.batch_info(), "user": options.user}
    if profile is not None:
        batch["agent_profile"] = profile
    if options.adapt:
        batch["adapt"] = True
    return options.model_copy(
        update={
            "scenario": spec.scenario,
            "tendencies": Tendencies(c.alpha, c.beta, c.gamma),
            "seed": spec.seed,
            "words_per_minute": spec.words_per_minute,
            "agent_profile": profile,
            "virtual": None,
            # The call's seed goes to the endpoint too, so a seeded server repeats itself.
            "llm_seed": spec.seed,
            "log_path": part_path(out_dir, spec),
            "audio_path": recording_part(out_dir, spec),
            "batch": batch,
            "scenario_model": scenario,
        }
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


def file_call(
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
    on another machine whose bytes the driver wrote here (:mod:`sessions.batch.cluster`)."""
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
    specs: Sequence[CallSpec], options: CallPlan, out_dir: Path
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
