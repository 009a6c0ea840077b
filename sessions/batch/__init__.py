"""Headless batches (`cutin simulate`): one plan, one runner, several executors.

- ``plan``: scenarios × conditions × runs as :class:`CallSpec` s (pure), the options
  every call runs with, and :class:`BatchPlan`, the whole batch as the runner takes it.
- ``tally``: what a finished call did, and the end-of-batch table per condition.
- ``filing``: a call's ``.part`` → final name or ``.failed``, resume (what a folder
  already holds), and the header check that keeps two batches out of one folder.
- ``call``: one call built from its plan, run or driven by another clock, and filed.
- ``board``: what is running, for a progress display.
- ``pump``: the real-time pump (with this machine's capacity for line calls and the
  agents lent one call at a time).
- ``runner``: :func:`~sessions.batch.runner.run.run_batch`, the one entry, which picks
  the executor (serial, process pool, Ray, the pump).
- ``cluster``: the Ray driver and its workers (the only package that imports ``ray``,
  inside its functions).

This file imports nothing, so a submodule is imported alone.
"""
