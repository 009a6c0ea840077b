"""`cutin simulate --agent`, repeatable, and `--jobs` on a line: the agents a batch dials
and how many real-time calls this machine may run at once.

``--agent twilio:ws://h:8765/ --agent twilio:ws://h:8766/`` or one
``--agent 'twilio:ws://h:{8765..8772}/'`` (a range, expanded here) names several agents
that each take one call at a time; every call takes a free one.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence
from typing import Any

from cutin_tui.cli import CliError

RANGE = re.compile(r"\{(\d{1,5})\.\.(\d{1,5})\}")
MAX_AGENTS = 256


def expand(value: str) -> list[str]:
    """``{A..B}`` in ``value`` expanded to one value per number (ascending, at most 256)."""
    found = RANGE.search(value)
    if found is None:
        return [value]
    if RANGE.search(value, found.end()) is not None:
        raise argparse.ArgumentTypeError(f"{value!r}: one {{A..B}} range at most")
    lo, hi = int(found.group(1)), int(found.group(2))
    if lo > hi or hi - lo + 1 > MAX_AGENTS:
        raise argparse.ArgumentTypeError(
            f"{value!r}: a range {{A..B}} needs A <= B and at most {MAX_AGENTS} values"
        )
    head, tail = value[: found.start()], value[found.end() :]
    return [f"{head}{n}{tail}" for n in range(lo, hi + 1)]


class AgentsAction(argparse.Action):
    """Each ``--agent`` (ranges expanded, each checked) appends to ``agents``; ``agent``
    is the first, which names the kind every call of the batch is planned with."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        from cutin_tui.cli.call_cmd import agent_choice

        assert isinstance(values, str)
        try:
            new = [agent_choice(v) for v in expand(values)]
        except argparse.ArgumentTypeError as exc:
            raise argparse.ArgumentError(self, str(exc)) from None
        agents = [*(getattr(namespace, "agents", None) or []), *new]
        namespace.agents = agents
        setattr(namespace, self.dest, agents[0])


def check_agents(args: argparse.Namespace) -> list[str]:
    """The agents to dial (several: all lines of one kind, each given once)."""
    from sessions.plan import agent_kind, on_line

    agents: list[str] = list(getattr(args, "agents", None) or [args.agent])
    if len(agents) == 1:
        return agents
    if not all(on_line(a) for a in agents):
        raise CliError("several --agent values: each must be a line (twilio:ws://...)")
    kinds = {agent_kind(a) for a in agents}
    if len(kinds) > 1:
        raise CliError(f"several --agent values must be of one kind, got {', '.join(kinds)}")
    if len(set(agents)) < len(agents):
        raise CliError("an --agent is given twice: each agent takes one call at a time")
    return agents


def check_capacity(args: argparse.Namespace, agents: list[str]) -> int:
    """How many line calls run at once; refuses more than this machine paces (--force)."""
    import sys

    from sessions.batch.pump import LINE_CALL_CPU, max_line_jobs, usable_cores

    jobs: int = args.jobs if len(agents) == 1 else min(args.jobs, len(agents))
    if len(agents) > 1 and args.jobs > len(agents):
        print(
            f"cutin simulate: {len(agents)} agents take one call each: "
            f"at most {len(agents)} calls at once",
            file=sys.stderr,
        )
    limit = max_line_jobs()
    if jobs > limit and not args.force:
        raise CliError(
            f"--jobs {jobs}: this machine ({usable_cores()} cores, about {LINE_CALL_CPU:g} "
            f"core per call) paces at most {limit} real-time calls at once, and a call that "
            "falls behind its frames has untrusted timings; lower --jobs, or --force "
            "(docs/capacity.md)"
        )
    return jobs
