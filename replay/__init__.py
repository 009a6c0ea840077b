"""Everything after a call: loading and importing logs (cutin sessions, τ2-bench
results), the in-memory turn model, τ-Voice interaction metrics, judges and reports.

The top (this package's own modules: :mod:`.model`, :mod:`.errors`, :mod:`.plural`)
imports none of its sub-packages; they import it.

Entry points: :func:`replay.load.load_paths` (paths → trials),
:func:`replay.load.recent_sessions`, :mod:`replay.judges.rules`,
:mod:`replay.judges.llm`, :mod:`replay.report.trials`. Importing this package imports
none of them (and never ``textual`` or ``openai``).
"""
