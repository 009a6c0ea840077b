"""The one entry to a batch: :func:`~sessions.batch.runner.run.run_batch` picks the executor.

- ``executors``: serial, process pool and Ray, behind one :class:`Executor` interface (the
  real-time pump is :mod:`sessions.batch.pump`).
- ``run``: :func:`run_batch`, choosing the executor in one place from the plan.

A child of ``sessions.batch`` so the parts it chooses between (the pump, the Ray driver in
``sessions.batch.cluster``) never import the chooser (tests/test_package_cycles.py).
"""
