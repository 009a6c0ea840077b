"""Keypad steps (``{ dtmf = "1#" }`` among ``user.turns``) and the agents that hear them.

A scripted caller presses a step's keys as DTMF on a line that carries it (SIP, RFC
4733: the line's ``send_dtmf``). Against any other agent the keys could not reach it,
and a call that skipped them would go on as a different call (an IVR menu never left),
so such a call is refused before anything opens: :func:`check_keypad`, one line naming
the scenario, the step and the fix (``cutin simulate`` and the call builder ask it;
the command line exits 2, no log is written). Stdlib and the registry only.
"""

from __future__ import annotations

from sessions.lines.registry import transport_for
from sessions.scenarios.model import Scenario, ScenarioError

DTMF_AGENT = "sip:USER@HOST"
"""How ``--agent`` names a line that carries DTMF, for the refusal's fix."""


def hears_keys(agent: str) -> bool:
    """Whether the ``--agent`` value names a line that sends the caller's keys."""
    transport = transport_for(agent)
    return transport is not None and transport.dtmf


def check_keypad(scenario: Scenario, agent: str, caller: str) -> None:
    """:class:`ScenarioError` when the scenario's scripted caller (``caller`` is the
    plan's ``scripted``) would press keys and ``agent`` cannot hear them. The tester and
    the LLM caller never say the scenario's turns, so their calls are not refused."""
    steps = scenario.user.keypad_steps
    if caller != "scripted" or not steps or hears_keys(agent):
        return
    index, step = steps[0]
    transport = transport_for(agent)
    if transport is not None:
        who = f"a {transport.kind} line"  # the kind, never the URL (it may hold a token)
    else:
        who = f"the {agent} agent" if agent in ("scripted", "openai") else "this agent"
    where = scenario.source or scenario.name
    more = f" (and {len(steps) - 1} more keypad step(s))" if len(steps) > 1 else ""
    raise ScenarioError(
        f"{where}: field 'user.turns.{index}': the caller presses keys (dtmf = "
        f"{step.dtmf!r}){more}, but {who} carries no DTMF; keypad steps need "
        f"--agent {DTMF_AGENT}"
    )
