"""``cutin audit``: realized disfluency and turn-taking per condition, with tests.

:mod:`.load` (paths → conversations), :mod:`.sessions` (one conversation per call:
cutin logs, τ2 trials, plain text), :mod:`.counter` (the independent disfluency
counter), :mod:`.agent_measures` (a black-box agent's side), :mod:`.tau2` and
:mod:`.effects` (τ2 runs), :mod:`.human` (the human anchors), :mod:`.stats` (the
tests, pure numbers), :mod:`.report` (conversations → rows), :mod:`.cells` (a
condition's label and how a number, an interval or a share reads: below both the
calculations and the renderers) and :mod:`.render`, :mod:`.render_notes`,
:mod:`.render_agent` (rows → tables or JSON). Importing this package imports none of
them.
"""
