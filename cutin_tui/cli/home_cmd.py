"""`cutin` with no command: the home screen."""

from __future__ import annotations

import argparse
import contextlib


def run_home(args: argparse.Namespace) -> int:
    from cutin_tui.screens.app import CutinApp

    app = CutinApp()
    try:
        app.run()
    finally:
        app.stop_calls()
        with contextlib.suppress(OSError):  # the terminal may be gone (SIGHUP)
            for path in app.call_logs:
                print(f"log: {path}", flush=True)
    return app.return_code or 0
