"""Path → trials: one entry point for everything replay can open (a cutin session log,
a folder of them, a τ2-bench results file, dir layout or simulation, a verdict sidecar).

A role package of its own, above the formats it reads (:mod:`replay.cutin_log`,
:mod:`replay.tau2`) and below what works on the trials (the audit, ``cutin check``, the
replay screen), so that the top of :mod:`replay` (the model, its errors) imports none of
its children. The code is in :mod:`.paths`; this package names what it offers.
"""

from __future__ import annotations

from replay.load.paths import (
    EXPECTED,
    PREVIEW_BYTES,
    PREVIEW_LINES,
    load_batch,
    load_log,
    load_log_preview,
    load_one,
    load_path,
    load_paths,
    preflight,
    recent_sessions,
    session_files,
)

__all__ = [
    "EXPECTED",
    "PREVIEW_BYTES",
    "PREVIEW_LINES",
    "load_batch",
    "load_log",
    "load_log_preview",
    "load_one",
    "load_path",
    "load_paths",
    "preflight",
    "recent_sessions",
    "session_files",
]
