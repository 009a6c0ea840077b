"""The live call: one engine (:class:`CallEngine`: frames -> pause detector -> policies ->
acts -> log) driving a far end (a simulated agent, or a black-box agent on a line).

No Textual here. The engine runs on a virtual clock (tests, batch runs) or in real
time on its own thread (the app), and reports everything as session-log events to
its listeners; the app feeds commands in through a thread-safe queue.
"""

from sessions.call.calls import SimulatedCall, simulated_call
from sessions.call.commands import (
    BackchannelNow,
    CallerSoundNow,
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
from sessions.call.engine.engine import CallEngine
from sessions.call.far_ends.simulated_caller import CallState
from sessions.call.policy import PolicyContext, PolicyDecision, RulesPolicy, TurnTakingPolicy
from sessions.call.recorder import Recorder, session_path
from sessions.call.users import ScriptedUser, UserProvider

__all__ = [
    "BackchannelNow",
    "CallConfig",
    "CallEngine",
    "CallState",
    "CallerSoundNow",
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
    "SimulatedCall",
    "SubmitText",
    "TurnTakingPolicy",
    "UserProvider",
    "session_path",
    "simulated_call",
]
