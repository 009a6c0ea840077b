"""Which τ2-bench wrote a file: the layout, the data-model generation, unknown fields.

τ2 results carry no version number of their own (a dir layout's ``results.json`` may
hold a ``format_version``; ``info.git_commit`` names the writer's commit). τ2 writes
every field of its pydantic models, ``null`` included, so the *keys* of a simulation
say which data model wrote it. Each generation added fields; the newest one whose
marker key is present is the file's generation:

===  ====================  ==========================================================
gen  marker key            what it added
===  ====================  ==========================================================
1    (none)                text runs: ``messages``, ``reward_info``
2    ``mode``              communication mode; full-duplex ``ticks`` (τ-Voice)
3    ``review``            LLM review of agent and user errors, ``user_only_review``
4    ``hallucination_check``  user-simulator hallucination check and retries
5    ``effect_timeline``   timed audio effects, ``speech_environment`` per run
===  ====================  ==========================================================

Fields in none of these models are *unknown*: they are kept on the trial (its
``header``, and ``tau2.unknown_fields`` in report JSON) and named once in a warning.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

GENERATIONS: tuple[tuple[int, str | None], ...] = (
    (1, None),
    (2, "mode"),
    (3, "review"),
    (4, "hallucination_check"),
    (5, "effect_timeline"),
)

SIMULATION_FIELDS = frozenset(
    {
        "id",
        "task_id",
        "timestamp",
        "start_time",
        "end_time",
        "duration",
        "termination_reason",
        "agent_cost",
        "user_cost",
        "agent_usage",
        "reward_info",
        "messages",
        "ticks",
        "trial",
        "seed",
        "mode",
        "speech_environment",
        "review",
        "user_only_review",
        "info",
        "auth_classification",
        "hallucination_retries_used",
        "hallucination_check",
        "provider_session_id",
        "policy",
        "effect_timeline",
    }
)
"""Every key a τ2 ``SimulationRun`` has had."""

RESULTS_FIELDS = frozenset(
    {"timestamp", "info", "tasks", "simulations", "simulation_index", "format_version"}
)
"""Every top-level key of a τ2 ``Results`` file (monolithic or a dir's results.json)."""

WRAPPER_FIELDS = frozenset({"simulation_run", "task", "info"})
"""A trajectory record wrapping one run: the run, and the task and info it ran under."""

LAYOUTS = ("monolithic", "dir", "simulation", "simulation_run")


@dataclass(frozen=True, slots=True)
class Tau2Version:
    """What could be told about the writer of one τ2 simulation."""

    layout: str
    """monolithic | dir | simulation | simulation_run."""
    generation: int
    format_version: str | None = None
    git_commit: str | None = None

    @property
    def label(self) -> str:
        """One line for people: ``τ2 gen 5 · dir · format 2 · git a2c0247``."""
        parts = [f"τ2 gen {self.generation}", self.layout]
        if self.format_version:
            parts.append(f"format {self.format_version}")
        if self.git_commit:
            parts.append(f"git {self.git_commit[:7]}")
        return " · ".join(parts)

    def as_dict(self) -> dict[str, Any]:
        return {
            "layout": self.layout,
            "generation": self.generation,
            "format_version": self.format_version,
            "git_commit": self.git_commit,
            "label": self.label,
        }


def generation(sim: Mapping[str, Any]) -> int:
    """The newest data-model generation whose marker key the simulation has."""
    found = 1
    for gen, key in GENERATIONS:
        if key is not None and key in sim:
            found = gen
    return found


def detect(
    sim: Mapping[str, Any], layout: str, meta: Mapping[str, Any] | None = None
) -> Tau2Version:
    """The version of one simulation, read with the results object around it."""
    info = meta.get("info") if isinstance(meta, Mapping) else None
    commit = info.get("git_commit") if isinstance(info, Mapping) else None
    fmt = meta.get("format_version") if isinstance(meta, Mapping) else None
    return Tau2Version(
        layout=layout,
        generation=generation(sim),
        format_version=str(fmt) if fmt is not None else None,
        git_commit=str(commit) if isinstance(commit, str) and commit else None,
    )


def unknown_keys(data: Mapping[str, Any], known: Iterable[str]) -> list[str]:
    """Keys of ``data`` outside ``known`` (internal ``_``-keys excluded), in file order."""
    allowed = set(known)
    return [k for k in data if k not in allowed and not str(k).startswith("_")]


def unknown_warning(source: str, where: str, keys: Iterable[str]) -> str | None:
    """The one warning naming unknown fields of ``where`` in ``source`` (None: none)."""
    names = sorted(set(keys))
    if not names:
        return None
    return f"{source}: τ2 {where} fields cutin does not know, kept as they are: " + ", ".join(names)


__all__ = [
    "GENERATIONS",
    "LAYOUTS",
    "RESULTS_FIELDS",
    "SIMULATION_FIELDS",
    "WRAPPER_FIELDS",
    "Tau2Version",
    "detect",
    "generation",
    "unknown_keys",
    "unknown_warning",
]
