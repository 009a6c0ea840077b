"""Reports of calls as people read them: :mod:`.trials` (``cutin report``: JSON,
Markdown, HTML), :mod:`.wording` (the words of a turn, shared with the TUI's
transcript), :mod:`.agent_render` and :mod:`.black_box` (a black-box agent's
measures in one call's report, and its cuts), :mod:`.handout` (the overlap gallery as
a printable page). Counted words (``2 calls``) are :mod:`replay.plural`'s.
Importing this package imports none of them.
"""
