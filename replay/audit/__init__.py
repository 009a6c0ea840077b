"""``cutin audit``: realized disfluency and turn-taking per condition, with tests.

:mod:`.load` (paths → conversations), :mod:`.sessions` (one conversation per call:
cutin logs, τ2 trials, plain text), :mod:`.counter` (the independent disfluency
counter), :mod:`.agent_measures` (a black-box agent's side), :mod:`.tau2` and
:mod:`.effects` (τ2 runs), :mod:`.human` (the human anchors), :mod:`.stats` (the
tests, pure numbers), :mod:`.report` (conversations → rows) and :mod:`.render`
(rows → tables or JSON). Importing this package imports none of them.
"""
