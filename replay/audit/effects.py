"""The audit's effects table: τ2 speech effects configured versus realized, per condition.

A τ2 voice run samples a speech environment (``speech_environment``: which effects
are on, at what rate per minute) and records what it did (``effect_timeline``, or
the per-tick ``source_effects`` / ``speech_effects``). For each condition and effect
type the table gives:

* ``trials``: conversations of the condition that carry any effect information;
* ``configured_on``: how many had the effect switched on in their environment
  (``None`` when no environment says: an effect seen only in the ticks);
* ``configured_per_min``: the mean configured rate over those (bursts, speech
  inserts) where the environment gives one;
* ``realized``: events that happened, and ``realized_per_min`` over the minutes of
  the trials that had the effect on (all trials when nothing says it was on).

Effect types: the timeline's own names (``burst_noise``, ``out_of_turn_speech``,
``background_noise``, ``frame_drop``, ``telephony``, ``spell_out``) or, from ticks,
``burst_noise``, ``vocal_tic``, ``non_directed_speech``, ``muffling``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from replay.audit.cells import condition_label
from replay.audit.sessions import condition_of

if TYPE_CHECKING:
    from rich.table import Table

    from replay.audit.sessions import Conversation

# Which configured switch (and rate) stands behind each realized effect type.
CONFIG_OF: dict[str, tuple[tuple[str, ...], str | None]] = {
    "burst_noise": (("burst_noise",), "burst_noise_per_min"),
    "out_of_turn_speech": (("vocal_tics", "non_directed_phrases"), "speech_inserts_per_min"),
    "vocal_tic": (("vocal_tics",), "speech_inserts_per_min"),
    "non_directed_speech": (("non_directed_phrases",), "speech_inserts_per_min"),
    "muffling": (("muffling",), None),
    "frame_drop": (("frame_drops",), None),
    "background_noise": (("background_noise",), None),
    "telephony": (("telephony",), None),
}


def _switched_on(configured: Mapping[str, Any], effect: str) -> bool | None:
    switches, _ = CONFIG_OF.get(effect, ((), None))
    known = [configured[s] for s in switches if s in configured]
    if not known:
        return None
    return any(bool(v) for v in known)


def effects_rows(conversations: Sequence[Conversation], by: Sequence[str]) -> list[dict[str, Any]]:
    """One row per condition and effect type (module docstring), conditions in first-seen
    order, effect types by name."""
    groups: dict[str, tuple[dict[str, Any], list[Conversation]]] = {}
    for conv in conversations:
        if not isinstance(conv.header.get("effects"), Mapping):
            continue
        cond = condition_of(conv, by)
        key = json.dumps(cond, sort_keys=True, default=str)
        groups.setdefault(key, (cond, []))[1].append(conv)
    rows: list[dict[str, Any]] = []
    for cond, convs in groups.values():
        infos = [conv.header["effects"] for conv in convs]
        kinds = sorted(
            {k for i in infos for k in i.get("realized", {})}
            | {k for i in infos for k in CONFIG_OF if _switched_on(i.get("configured", {}), k)}
        )
        for kind in kinds:
            on = [_switched_on(i.get("configured", {}), kind) for i in infos]
            said = [x for x in on if x is not None]
            chosen = [i for i, x in zip(infos, on, strict=True) if x] or (infos if not said else [])
            _, rate_key = CONFIG_OF.get(kind, ((), None))
            rates = [
                float(i["configured"][rate_key])
                for i in chosen
                if rate_key and isinstance(i.get("configured", {}).get(rate_key), int | float)
            ]
            minutes = sum(float(i.get("minutes") or 0.0) for i in chosen)
            realized = sum(int(i.get("realized", {}).get(kind, 0)) for i in infos)
            rows.append(
                {
                    "condition": cond,
                    "effect": kind,
                    "trials": len(infos),
                    "configured_on": sum(said) if said else None,
                    "configured_per_min": sum(rates) / len(rates) if rates else None,
                    "realized": realized,
                    "minutes": minutes,
                    "realized_per_min": realized / minutes if minutes > 0 else None,
                }
            )
    return rows


def effects_table(rows: Sequence[dict[str, Any]]) -> Table:
    """The rows as a rich table (imported lazily: rich is the CLI's)."""
    from rich import box
    from rich.table import Table

    table = Table(
        title="τ2 speech effects: configured vs realized",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
    )
    table.add_column("condition", overflow="fold", ratio=1)
    table.add_column("effect", overflow="fold")
    for name in ("trials", "on", "conf./min", "realized", "min", "real./min"):
        table.add_column(name, justify="right", no_wrap=True)

    def num(v: float | None) -> str:
        return "—" if v is None else f"{v:.2f}"

    for r in rows:
        table.add_row(
            condition_label(r["condition"]),
            r["effect"],
            str(r["trials"]),
            "—" if r["configured_on"] is None else str(r["configured_on"]),
            num(r["configured_per_min"]),
            str(r["realized"]),
            num(r["minutes"]),
            num(r["realized_per_min"]),
        )
    return table


__all__ = ["CONFIG_OF", "effects_rows", "effects_table"]
