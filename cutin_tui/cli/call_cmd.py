"""`cutin call`: a live call (placeholder until the call screen lands)."""

from __future__ import annotations

import argparse

from cutin_tui.cli.args import tendency

DESCRIPTION = "Open a live call against an agent. Offline by default: scripted agent, typed input."


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("--alpha", type=tendency("alpha"), default=0.5, help="disfluency tendency 0..1")
    p.add_argument("--beta", type=tendency("beta"), default=0.0, help="interruption tendency 0..1")
    p.add_argument("--gamma", type=tendency("gamma"), default=0.0, help="backchannel tendency 0..1")


def run(args: argparse.Namespace) -> int:
    from cutin_tui.app import CutinApp

    app = CutinApp()
    app.run()
    return 0
