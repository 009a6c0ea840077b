"""The overlap and disfluency gallery: example files, a headless runner, timelines.

Each entry (``data/*.toml``, or a clinician's own file) names one type of overlap
or disfluency, explains it in plain words and carries a short call that shows it.
:func:`run_entry` plays the call through the real call loop on the virtual clock;
:func:`check_expectations` says whether it showed what it names; the timeline
module turns the events into a two-lane drawing for the terminal and the handout.
"""

from replay.gallery.expect import check_expectations, rule_actions
from replay.gallery.loader import (
    Gallery,
    load_entry,
    load_gallery,
    parse_entry,
    shipped_entries,
    sort_entries,
)
from replay.gallery.model import (
    MADE_BY_TEXT,
    ActionSpec,
    DisfluencySpec,
    Expect,
    GalleryEntry,
    GalleryError,
)
from replay.gallery.runner import (
    GalleryRun,
    ScheduledAction,
    config_of,
    make_loop,
    place_actions,
    run_entry,
)
from replay.gallery.timeline import (
    Cell,
    LaneSpan,
    Mark,
    MarkKind,
    Timeline,
    TimelineBuilder,
    TranscriptLine,
    build_timeline,
    focus_window,
    follow_window,
    lane_cells,
    mark_cells,
    ticks,
)

__all__ = [
    "MADE_BY_TEXT",
    "ActionSpec",
    "Cell",
    "DisfluencySpec",
    "Expect",
    "Gallery",
    "GalleryEntry",
    "GalleryError",
    "GalleryRun",
    "LaneSpan",
    "Mark",
    "MarkKind",
    "ScheduledAction",
    "Timeline",
    "TimelineBuilder",
    "TranscriptLine",
    "build_timeline",
    "check_expectations",
    "config_of",
    "focus_window",
    "follow_window",
    "lane_cells",
    "load_entry",
    "load_gallery",
    "make_loop",
    "mark_cells",
    "parse_entry",
    "place_actions",
    "rule_actions",
    "run_entry",
    "shipped_entries",
    "sort_entries",
    "ticks",
]
