"""The live call loop: agent -> speech clock -> pause detector -> rule -> executor -> log.

No Textual here. The loop runs on a virtual clock (tests, batch runs) or in real
time on its own thread (the app), and reports everything as session-log events to
its listeners; the app feeds commands in through a thread-safe queue.
"""

from sessions.call.commands import (
    BackchannelNow,
    CallerSpeechStart,
    CallerUtterance,
    Command,
    EndCall,
    InterruptNow,
    SetAutos,
    SetTendencies,
    SubmitText,
)
from sessions.call.config import CallConfig
from sessions.call.loop import CallLoop, CallState
from sessions.call.policy import PolicyContext, PolicyDecision, RulesPolicy, TurnTakingPolicy
from sessions.call.recorder import Recorder, session_path
from sessions.call.users import ScriptedUser, UserProvider

__all__ = [
    "BackchannelNow",
    "CallConfig",
    "CallLoop",
    "CallState",
    "CallerSpeechStart",
    "CallerUtterance",
    "Command",
    "EndCall",
    "InterruptNow",
    "PolicyContext",
    "PolicyDecision",
    "Recorder",
    "RulesPolicy",
    "ScriptedUser",
    "SetAutos",
    "SetTendencies",
    "SubmitText",
    "TurnTakingPolicy",
    "UserProvider",
    "session_path",
]
