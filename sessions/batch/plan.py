"""Planning a headless batch (`cutin simulate`): scenarios × conditions × runs.

Pure: no files, no clocks. The plan is a list of :class:`CallSpec`, one per call,
each with a file name and a seed that depend only on the base seed, the scenario,
the condition and the run, so a rerun of the same command plans the same calls
and can skip the ones already on disk. A :class:`~sessions.plan.CallPlan` says how
every call is run (its agent, caller, policy, speech: the one plan type of a call; each
call's scenario, dials, seed, rate and log are its spec's), and :class:`BatchPlan` is
the whole batch as :func:`sessions.batch.runner.run.run_batch` takes it: the calls, where they
are filed, and which executor runs them.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sessions.plan import CallPlan
    from sessions.scenarios.model import Scenario
    from sessions.settings import Settings

RATE_JITTER_DEFAULT = 0.05
"""Each run speaks up to ±5 % faster or slower than the base rate."""

_SEED_SPACE = 2**31 - 1

BATCH_USERS = ("scripted", "llm")
"""Who calls in a batch (``CallPlan(user="scripted")``, ``--user``): nobody types."""


class BatchPlanError(ValueError):
    """A batch that cannot be planned (no scenarios, no runs, clashing names)."""


def _num(x: float) -> str:
    """A dial value as it appears in labels and file names: 0, 0.3, 1."""
    return f"{x:g}"


@dataclass(frozen=True, slots=True, order=True)
class Condition:
    """One point of the α × β × γ grid."""

    alpha: float
    beta: float
    gamma: float

    @property
    def label(self) -> str:
        return f"a{_num(self.alpha)}_b{_num(self.beta)}_g{_num(self.gamma)}"

    def as_dict(self) -> dict[str, float]:
        return {"alpha": self.alpha, "beta": self.beta, "gamma": self.gamma}


@dataclass(frozen=True, slots=True)
class CallSpec:
    """One call of a batch: what to run and where its log goes."""

    scenario: str
    """The scenario's name (its ``name`` field, not the path it was loaded from)."""
    condition: Condition
    run: int
    """1-based run index within (scenario, condition)."""
    seed: int
    words_per_minute: float
    batch: str
    """The batch's name (recorded in every header)."""
    base_seed: int = 0
    """The batch's ``--seed``: with the scenario and run it names the session, which
    the audit pairs across conditions."""
    paired: bool = False
    """Planned with ``paired``: every condition of a session has the same call seed."""

    @property
    def stem(self) -> str:
        return f"{self.scenario}__{self.condition.label}__run{self.run:02d}"

    @property
    def file_name(self) -> str:
        return f"{self.stem}.jsonl"

    def batch_info(self) -> dict[str, object]:
        """What goes into ``header.batch``."""
        return {
            "batch": self.batch,
            "condition": self.condition.as_dict(),
            "run": self.run,
            "seed": self.base_seed,
            "paired": self.paired,
        }


def conditions(
    alphas: Sequence[float], betas: Sequence[float], gammas: Sequence[float]
) -> list[Condition]:
    """The grid, in the order given (β varies slower than γ), duplicates dropped."""
    out: dict[str, Condition] = {}
    for a in alphas:
        for b in betas:
            for g in gammas:
                c = Condition(float(a), float(b), float(g))
                out.setdefault(c.label, c)
    return list(out.values())


def derive_seed(base: int, scenario: str, condition: Condition | None, run: int) -> int:
    """A stable seed (same on every machine and Python) for one call.

    ``condition=None`` leaves the condition out, so every condition of a run shares
    the same speech timings (paired comparison)."""
    label = condition.label if condition is not None else "*"
    key = f"cutin.batch/1|{base}|{scenario}|{label}|{run}".encode()
    return int.from_bytes(hashlib.sha256(key).digest()[:8], "big") % _SEED_SPACE


def speaking_rate(base_wpm: float, jitter: float, seed: int) -> float:
    """The run's speaking rate: ``base_wpm`` moved by up to ±``jitter`` (a fraction)."""
    if jitter <= 0:
        return base_wpm
    u = random.Random(seed ^ 0x5EED).uniform(-1.0, 1.0)
    return round(base_wpm * (1.0 + jitter * u), 1)


def plan_batch(
    scenarios: Sequence[str],
    grid: Sequence[Condition],
    *,
    runs: int,
    seed: int = 0,
    batch: str = "batch",
    words_per_minute: float = 165.0,
    rate_jitter: float = RATE_JITTER_DEFAULT,
    paired: bool = False,
) -> list[CallSpec]:
    """Every call of the batch, run-major: all of run 1, then all of run 2, ...

    Run-major order means a batch stopped half way still covers every condition."""
    if not scenarios:
        raise BatchPlanError("no scenarios to run")
    if len(set(scenarios)) != len(scenarios):
        dupes = sorted({s for s in scenarios if list(scenarios).count(s) > 1})
        raise BatchPlanError(f"scenario named twice: {', '.join(dupes)}")
    if not grid:
        raise BatchPlanError("no conditions to run")
    if runs < 1:
        raise BatchPlanError(f"--runs must be at least 1, got {runs}")
    if not 0.0 <= rate_jitter < 0.5:
        raise BatchPlanError(f"speaking-rate jitter must be in [0, 0.5), got {rate_jitter}")
    specs: list[CallSpec] = []
    for run in range(1, runs + 1):
        for scenario in scenarios:
            for condition in grid:
                call_seed = derive_seed(seed, scenario, None if paired else condition, run)
                wpm = speaking_rate(words_per_minute, rate_jitter, call_seed)
                specs.append(
                    CallSpec(scenario, condition, run, call_seed, wpm, batch, seed, paired)
                )
    return specs


# ---- how the calls are run ------------------------------------------------------------


@dataclass
class RayStats:
    """What the bench reads after a Ray run: the actors' CPU time and who ran what."""

    nodes: set[str] = field(default_factory=set)
    slots: int = 0
    actor_cpu_s: float = 0.0
    """CPU seconds of every actor process still alive at the end."""
    call_s: float = 0.0
    """Wall seconds of the calls, as the nodes timed them."""
    first_ready: float | None = None
    """``time.monotonic()`` when the first actor answered (its models loaded)."""


@dataclass(frozen=True)
class RaySetup:
    """The batch runs on a Ray cluster (:mod:`sessions.batch.cluster`)."""

    address: str | None = None
    """HOST:PORT of a running cluster; None: a local Ray (or ``RAY_ADDRESS``)."""
    cpus_per_call: float | None = None
    """CPUs one call reserves on a node (default: by the kind of call)."""
    note: Callable[[str], None] = lambda line: None
    """Told a line per node, per lost node and per rerun call."""
    stats: RayStats | None = None
    """Filled in for the bench."""


@dataclass(frozen=True)
class BatchPlan:
    """A whole batch, as :func:`sessions.batch.runner.run.run_batch` runs it: every executor
    gets the same calls, agents, folder (and so resume) and filing."""

    specs: Sequence[CallSpec]
    scenarios: Mapping[str, Scenario]
    options: CallPlan
    """How every call is run (agent, caller, policy, speech...); each call's scenario,
    dials, seed, rate and log are its spec's (:func:`sessions.batch.filing.call_plan`)."""
    out_dir: Path
    jobs: int = 1
    """Calls at once: worker processes on the virtual clock, calls on one pump on a line."""
    agents: Sequence[str] = ()
    """The agents the calls dial (default ``options.agent``); several are each lent to
    one call at a time."""
    settings: Settings | None = None
    ray: RaySetup | None = None
    """Run the calls on a Ray cluster instead of on this machine."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "out_dir", Path(self.out_dir))
        if self.options.user not in BATCH_USERS:
            raise BatchPlanError(
                f"a batch's caller is {' or '.join(BATCH_USERS)}, not {self.options.user!r}"
            )

    @property
    def dialled(self) -> list[str]:
        """The agents to dial, never empty."""
        return list(self.agents) or [self.options.agent]
