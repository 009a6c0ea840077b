"""The one :class:`~sessions.plan.CallPlan` a command's arguments ask for, built once at
the edge: `cutin call` a call's plan, `cutin simulate` the plan every call of its batch
shares (each call's scenario, dials, seed, rate and log are filled in per call). What
runs the call reads the plan, never the arguments.

A flag whose ``dest`` is in :data:`SAME_NAMES` is the plan's field of that name; the
caller's ``--style`` is ``disfluency_style``; the rest a command names itself."""

from __future__ import annotations

import argparse
from typing import Any

from sessions.plan import CallPlan

SAME_NAMES: tuple[str, ...] = (
    "agent",
    "base_url",
    "model",
    "agent_prompt",
    "agent_profile",
    "policy",
    "shadow",
    "user",
    "suggest",
    "speech",
    "input",
    "push_to_talk",
    "vad",
    "listen",
    "adapt",
    "auto_interrupt",
    "auto_backchannel",
    "max_seconds",
)
"""Flags that mean the plan's field of the same name in every command that has them.
Not here, each command's own: ``--scenario``, ``--alpha/--beta/--gamma``, ``--seed``,
``--wpm``, ``--sessions-dir`` (a batch's are per call or a folder of folders), ``--stt``
(the settings' model fills in) and the devices (resolved first)."""


def plan_from_args(args: argparse.Namespace, **own: Any) -> CallPlan:
    """The plan the arguments ask for: every :data:`SAME_NAMES` flag the command has, its
    ``--style``, then the fields the command gives itself (``own`` wins)."""
    fields: dict[str, Any] = {
        name: getattr(args, name) for name in SAME_NAMES if hasattr(args, name)
    }
    fields["disfluency_style"] = args.style
    fields.update(own)
    return CallPlan(**fields)
