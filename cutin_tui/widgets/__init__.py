"""Widgets of the live call screen."""

from cutin_tui.widgets.counters import CountersPanel
from cutin_tui.widgets.decision import DecisionLine
from cutin_tui.widgets.dials import DialsBar, DialsPanel, DialsState
from cutin_tui.widgets.line_status import LineStatus
from cutin_tui.widgets.timeline import TimelineStrip
from cutin_tui.widgets.transcript import TranscriptView

__all__ = [
    "CountersPanel",
    "DecisionLine",
    "DialsBar",
    "DialsPanel",
    "DialsState",
    "LineStatus",
    "TimelineStrip",
    "TranscriptView",
]
