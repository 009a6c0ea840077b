"""One call of a batch, built from its plan and filed by how it ended.

:func:`run_call` runs a call to its end in this thread (the virtual clock; a black-box
agent in real time); :func:`start_call` and :func:`finish_call` are the two halves of a
call that another clock drives (a :class:`~sessions.call.engine.realtime.RealtimePump`):
built with its line dialled and its log open, then closed and filed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from sessions.batch.filing import (
    CallOutcome,
    call_plan,
    file_call,
    part_path,
    recording_part,
)
from sessions.batch.plan import CallSpec
from sessions.batch.tally import CallTally
from sessions.plan import CallPlan
from sessions.plan.build import LINE_CALL_SECONDS, BuiltCall, build_call
from sessions.scenarios.model import Scenario

if TYPE_CHECKING:
    from sessions.call.engine.realtime import PumpedCall
    from sessions.settings import Settings

INTERRUPTED = "interrupted"
"""Why a call that a stop hung up was filed as failed."""


def why(exc: BaseException) -> str:
    """An exception as a call's failure message."""
    return f"{type(exc).__name__}: {exc}"


def run_call(
    spec: CallSpec,
    scenario: Scenario,
    options: CallPlan,
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
        crash = why(exc)
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
    return file_call(spec, out_dir, part, wav_part, recorder, counted, crash)


@dataclass(eq=False)
class LiveCall:
    """A call built and running on another clock, with what it has done so far."""

    spec: CallSpec
    agent: str
    built: BuiltCall
    counted: CallTally
    seconds: float
    """When it is hung up at the latest."""
    pumped: PumpedCall | None = None


def start_call(
    spec: CallSpec,
    agent: str,
    scenarios: Mapping[str, Scenario],
    options: CallPlan,
    out_dir: Path,
    settings: Settings | None,
) -> LiveCall | CallOutcome:
    """Build one call dialling ``agent`` (its line dialled, its log open), or its failure
    filed."""
    part = part_path(out_dir, spec)
    part.unlink(missing_ok=True)  # a crash's leftover; never appended to
    counted = CallTally()
    dialling = options.model_copy(update={"agent": agent})
    plan = call_plan(spec, scenarios[spec.scenario], dialling, out_dir)
    try:
        built = build_call(plan, settings)
    except Exception as exc:
        return file_call(
            spec, out_dir, part, recording_part(out_dir, spec), None, counted, why(exc)
        )
    if built.recorder is not None:
        built.loop.listeners.append(built.recorder)
    built.loop.listeners.append(counted.add)
    return LiveCall(spec, agent, built, counted, plan.max_seconds or LINE_CALL_SECONDS)


def finish_call(
    live: LiveCall, out_dir: Path, error: BaseException | None, *, interrupted: bool = False
) -> CallOutcome:
    """Close the call's parts and log, then file it by how it ended."""
    built = live.built
    try:
        built.loop.voice.close()
    finally:
        built.close()
    crash = INTERRUPTED if interrupted else (why(error) if error is not None else None)
    spec = live.spec
    return file_call(
        spec,
        out_dir,
        part_path(out_dir, spec),
        recording_part(out_dir, spec),
        built.recorder,
        live.counted,
        crash,
    )
