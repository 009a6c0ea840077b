"""τ2's speech environment (what was configured) and its effects (what happened).

* ``speech_environment`` (per simulation): the sampled voice environment: complexity,
  indoor/outdoor, the background noise file, burst noise files, telephony, and the
  source / speech / channel effect configs with their rates. Kept as
  ``trial.meta["speech_environment"]``; :func:`configured` reads the dials from it.
* ``effect_timeline.events`` (per simulation): each effect with ``effect_type``
  (background_noise, burst_noise, out_of_turn_speech, telephony, frame_drop,
  spell_out), ``start_ms``/``end_ms`` on the call's clock, ``participant`` and
  ``params``. Each becomes an ``effect`` inline event on the turn where it starts
  (the latest turn started at or before it; the first turn when it precedes all).
* Full-duplex ticks without a timeline: the per-tick ``source_effects`` /
  ``speech_effects`` *while the user speaks* (muffling, a cough inside a sentence)
  become ``effect`` events too; the out-of-turn ones are already events of their own
  kinds (``vocal_tic``, ``non_directed_speech``, ``burst_noise``).

:func:`realized` counts what happened per effect type, from the timeline when there
is one (it is complete), else from the ticks.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from replay.model import EffectEvent, InlineEvent, OutOfTurnEffect, Trial, Turn, UserSound
from replay.tau2.tick_turns import turn_at
from replay.tau2.ticks import effect_spans

EFFECT = EffectEvent.type
TICK_EFFECT_KINDS = ("vocal_tic", "non_directed_speech", "burst_noise")


def _host(turns: list[Turn], t: float) -> Turn | None:
    return turn_at(turns, None, t) or (turns[0] if turns else None)


def _params_label(params: Any) -> str:
    if not isinstance(params, Mapping):
        return ""
    for key in ("text", "file", "noise_file"):
        value = params.get(key)
        if isinstance(value, str) and value:
            return value.rsplit("/", 1)[-1]
    shown = [f"{k} {v}" for k, v in params.items() if isinstance(v, int | float | str)]
    return ", ".join(shown[:3])


def _timeline_events(sim: Mapping[str, Any]) -> list[Mapping[str, Any]] | None:
    timeline = sim.get("effect_timeline")
    if not isinstance(timeline, Mapping) or not isinstance(timeline.get("events"), list):
        return None
    return [e for e in timeline["events"] if isinstance(e, Mapping) and e.get("effect_type")]


def attach_effects(trial: Trial, sim: Mapping[str, Any]) -> None:
    """Put the simulation's environment on ``trial.meta`` and its effects on its turns."""
    env = sim.get("speech_environment")
    if isinstance(env, Mapping):
        trial.meta["speech_environment"] = dict(env)
    events = _timeline_events(sim)
    if events is not None:
        trial.meta["effect_timeline"] = len(events)
        for e in events:
            start = e.get("start_ms")
            end = e.get("end_ms")
            t = float(start) / 1000 if isinstance(start, int | float) else 0.0
            kind = str(e["effect_type"])
            label = " ".join(x for x in (kind, _params_label(e.get("params"))) if x)
            data = {
                "effect_type": kind,
                "participant": e.get("participant"),
                "start_s": t,
                "end_s": float(end) / 1000 if isinstance(end, int | float) else None,
                "params": e.get("params"),
                "from": "effect_timeline",
            }
            host = _host(trial.turns, t)
            if host is not None:
                host.events.append(InlineEvent(t, EffectEvent(), label, data))
    elif trial.ticks is not None:
        tl = trial.ticks
        for span in effect_spans(tl):
            if not tl.user_speech[span.start_tick]:
                continue  # out of turn: already its own event kind
            host = _host(trial.turns, span.start_s)
            if host is None:
                continue
            what = span.effect.text or (span.effect.file or "").rsplit("/", 1)[-1]
            label = f"{span.kind} {what}".strip()
            data = {
                "effect_type": span.kind,
                "participant": "user",
                "start_s": span.start_s,
                "end_s": span.end_tick * tl.tick_s,
                "tick": span.start_tick,
                "from": "ticks",
            }
            host.events.append(InlineEvent(span.start_s, EffectEvent(), label, data))
    for turn in trial.turns:
        turn.events.sort(key=lambda ev: ev.t)


def realized(trial: Trial) -> dict[str, int]:
    """Effects that happened, per type: the timeline's, else the ticks' (in and out of turn)."""
    counts: Counter[str] = Counter()
    has_timeline = "effect_timeline" in trial.meta
    for turn in trial.turns:
        for e in turn.events:
            src = e.source
            if isinstance(src, EffectEvent):
                if (e.data.get("from") == "effect_timeline") == has_timeline:
                    counts[str(e.data.get("effect_type"))] += 1
            elif (
                isinstance(src, UserSound | OutOfTurnEffect)
                and src.effect in TICK_EFFECT_KINDS
                and not has_timeline
            ):
                counts[src.effect] += 1
    return dict(sorted(counts.items()))


def configured(env: Mapping[str, Any] | None) -> dict[str, Any]:
    """The effect dials of a ``speech_environment``: which effects were on, at what rate."""
    if not isinstance(env, Mapping):
        return {}
    src = env.get("source_effects_config")
    speech = env.get("speech_effects_config")
    channel = env.get("channel_effects_config")
    src = src if isinstance(src, Mapping) else {}
    speech = speech if isinstance(speech, Mapping) else {}
    channel = channel if isinstance(channel, Mapping) else {}
    out: dict[str, Any] = {
        "complexity": env.get("complexity"),
        "environment": env.get("environment"),
        "background_noise": bool(env.get("background_noise_file"))
        and src.get("enable_background_noise", True) is not False,
        "burst_noise": src.get("enable_burst_noise"),
        "burst_noise_per_min": src.get("burst_noise_events_per_minute"),
        "vocal_tics": speech.get("enable_vocal_tics"),
        "non_directed_phrases": speech.get("enable_non_directed_phrases"),
        "speech_inserts_per_min": speech.get("speech_insert_events_per_minute"),
        "muffling": speech.get("enable_dynamic_muffling"),
        "frame_drops": channel.get("enable_frame_drops"),
        "frame_drop_rate": channel.get("frame_drop_rate"),
        "telephony": env.get("telephony_enabled"),
    }
    return {k: v for k, v in out.items() if v is not None}


def environment_label(env: Mapping[str, Any] | None) -> str:
    """One line for a report or the replay header, e.g. ``regular · outdoor · noise
    busy_street.wav · bursts 2.0/min · inserts 1.5/min · telephony``."""
    c = configured(env)
    if not c:
        return ""
    parts = [str(c[k]) for k in ("complexity", "environment") if c.get(k)]
    if c.get("background_noise") and isinstance(env, Mapping):
        parts.append(f"noise {str(env.get('background_noise_file')).rsplit('/', 1)[-1]}")
    if c.get("burst_noise"):
        rate = c.get("burst_noise_per_min")
        parts.append(f"bursts {rate:g}/min" if isinstance(rate, int | float) else "bursts")
    if c.get("vocal_tics") or c.get("non_directed_phrases"):
        rate = c.get("speech_inserts_per_min")
        parts.append(f"inserts {rate:g}/min" if isinstance(rate, int | float) else "inserts")
    if c.get("muffling"):
        parts.append("muffling")
    if c.get("frame_drops"):
        parts.append("frame drops")
    if c.get("telephony"):
        parts.append("telephony")
    return " · ".join(parts)


__all__ = ["EFFECT", "attach_effects", "configured", "environment_label", "realized"]
