"""`cutin check`: expectations over a run folder, a verdict a CI can gate on.

:mod:`replay.check.expectations` reads them (the grammar is
:mod:`sessions.scenarios.expect`), :mod:`replay.check.measures` says what each measure
is counted over (shared with a comparison of two runs), :mod:`replay.check.evaluate`
decides PASS / FAIL / NOT ENOUGH DATA, :mod:`replay.check.junit` and
:mod:`replay.check.markdown` render the result; :mod:`replay.check.load` is the only
module that reads files. docs/ci.md.
"""
