"""The rule engine: pure, deterministic, stdlib only. No I/O, no clocks.

Everything a live call decides on its own lives here: disfluency injection, the
short-pause turn-taking rule, the question/request detector and the pause detector.
"""

from controls.disfluency import (
    DEFAULT_PROFILE,
    PROFILES,
    DisfluencyProfile,
    DisfluencyResult,
    Insertion,
    InsertionKind,
    inject_disfluency,
    is_protected,
    remove_insertions,
    stem,
)
from controls.pauses import PauseDetector, PauseEvent, PauseEventKind
from controls.questions import REQUEST_OPENERS, question_or_request
from controls.tendencies import Tendencies, TendencyError
from controls.turn_taking import (
    INTERRUPT_MIN_WORDS,
    Action,
    Check,
    Decision,
    Situation,
    backchannel_spacing_words,
    decide,
    interruption_patience_seconds,
)

__all__ = [
    "DEFAULT_PROFILE",
    "INTERRUPT_MIN_WORDS",
    "PROFILES",
    "REQUEST_OPENERS",
    "Action",
    "Check",
    "Decision",
    "DisfluencyProfile",
    "DisfluencyResult",
    "Insertion",
    "InsertionKind",
    "PauseDetector",
    "PauseEvent",
    "PauseEventKind",
    "Situation",
    "Tendencies",
    "TendencyError",
    "backchannel_spacing_words",
    "decide",
    "inject_disfluency",
    "interruption_patience_seconds",
    "is_protected",
    "question_or_request",
    "remove_insertions",
    "stem",
]
