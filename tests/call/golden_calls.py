"""Golden calls: a small, fixed list of seeded calls on the virtual clock whose session
logs must not move when the call engine, the far ends or the event types are refactored
(issue 31, "Behaviour does not move"). ``tests/call/test_golden_logs.py`` byte-compares
each call's normalised log with ``tests/fixtures/golden/<name>.jsonl``.

The calls (:data:`CALLS`), each seeded and stepped on the virtual clock:

- simulated agents (the scripted agent on the text clock, the scripted caller) under the
  rule at several (α, β, γ), β = 1 and γ = 1 among them (cuts and backchannels), a scripted
  agent that talks over a cut and takes a backchannel as a turn, manual commands on a
  schedule (a cut-in key, a backchannel key, dial and auto changes mid-call, typed text),
  and the live ``--adapt`` recalibration;
- every policy mode of the engine: the rule acting, τ-Voice in shadow beside the rule,
  τ-Voice acting (its polled schedule), and delayed actions (a decision whose action comes
  ``delay_s`` later: τ-Voice's latency, and the rule's decisions held back on purpose);
- a scripted line far end (``tests/support/sim_agent.py``'s :class:`SimAgentLine`) on the
  virtual clock, as ``tests/remote/test_remote_loop.py`` builds it: an agent that yields to
  a barge-in and one that talks on, with the agent's ears (real espeak-ng audio, real
  Silero VAD, real faster-whisper ``tiny.en``), heard inline as on every virtual-clock line
  call (``AgentEars(inline=True)``), so the transcripts come in a fixed order.

τ-Voice talks to the loopback OpenAI server (``tests/support/openai_server.py``) over real
HTTP. Its answers are a function of the prompt alone (:func:`classifier_answer`), never of
the order in which the two classifiers' requests arrive. Its measured wall-clock latency
is the one thing pinned: :class:`PinnedLatency` reports :data:`TAU_LATENCY_S` instead,
because on the virtual clock that latency is the delay before the caller acts
(``delay_s``), so a busy machine would otherwise move the action by frames.

What is normalised (:func:`normalise`), and nothing else: in the header line only,
``session_id`` (a fresh uuid per call), ``started_at``, ``t0_unix`` and ``t0_monotonic``
(wall-clock instants of t = 0) and ``cutin_version`` (the package version and git commit)
are replaced by ``"<normalised>"``; the header is re-serialised compactly with its keys in
the order written. Every event line is compared byte for byte as the recorder wrote it.
"""

from __future__ import annotations

import dataclasses
import json
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from controls.tendencies import Tendencies
from prompts import tau_voice as tau_prompts
from sessions.agents.base import Message
from sessions.agents.scripted import ScriptedAgent
from sessions.call.adapt import RuleAdapter
from sessions.call.commands import (
    BackchannelNow,
    CallerSoundNow,
    Command,
    InterruptNow,
    SetAutos,
    SetTendencies,
    SubmitText,
)
from sessions.call.config import CallConfig
from sessions.call.policy import PolicyContext, PolicyDecision, RulesPolicy, TurnTakingPolicy
from sessions.call.recorder import Recorder, make_header
from sessions.call.setup.line_call import RemoteSpec, build_line_call
from sessions.call.setup.simulated_call import simulated_call
from sessions.callers.users import ScriptedUser
from sessions.llm_client import LLMClient, LLMConfig
from sessions.log.models import AgentInfo
from sessions.policies import PolicyError
from sessions.policies.tau_voice import TauVoicePolicy, TauVoiceResult
from sessions.policies.tau_voice_loop import TauVoiceLoopPolicy
from sessions.scenarios import Scenario, load_scenario
from tests.support.openai_server import OpenAIServer, RecordedRequest, Reply
from tests.support.sim_agent import SimAgent, SimAgentLine

NORMALISED = "<normalised>"
HEADER_WALL_CLOCK = ("session_id", "started_at", "t0_unix", "t0_monotonic", "cutin_version")
"""The header fields that differ run to run for the same seed; :func:`normalise`."""
TAU_LATENCY_S = 0.25
"""τ-Voice's reported consultation latency (its action comes this much later)."""
RULE_DELAY_S = 0.3
"""How long :class:`DelayedRules` holds each decision back."""
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "golden"


# ---- policies ---------------------------------------------------------------------------


class PinnedLatency(TauVoicePolicy):
    """τ-Voice's classifiers, asked for real, with the consultation's latency reported as
    :data:`TAU_LATENCY_S` instead of the wall time it took."""

    def consult(self, agent_so_far: str, history: Sequence[Message]) -> TauVoiceResult:
        try:
            result = super().consult(agent_so_far, history)
        except PolicyError as exc:
            if isinstance(exc.result, TauVoiceResult):
                exc.result = dataclasses.replace(exc.result, latency_s=TAU_LATENCY_S)
            raise
        return dataclasses.replace(result, latency_s=TAU_LATENCY_S)


class DelayedRules(RulesPolicy):
    """The rule, whose every decision takes :data:`RULE_DELAY_S` to act on (the engine's
    delayed-action path, as for an LLM policy, with a known delay)."""

    name = "rules"

    def at_pause(self, ctx: PolicyContext) -> PolicyDecision | None:
        decision = super().at_pause(ctx)
        if decision is None:
            return None
        return dataclasses.replace(decision, delay_s=RULE_DELAY_S)


_INTERRUPT_HEAD = tau_prompts.interruption_prompt("\x00").split("\x00")[0]
_BACKCHANNEL_HEAD = tau_prompts.backchannel_prompt("\x00").split("\x00")[0]


def classifier_answer(prompt: str) -> str:
    """The loopback LLM's answer to a τ-Voice classifier, from the prompt alone: the
    interruption classifier says YES once the agent's ongoing turn has 25 words, the
    backchannel one from 8 words on; any other prompt gets NO."""
    ongoing = ""
    for line in prompt.splitlines():
        if line.endswith(tau_prompts.INCOMPLETE_SUFFIX):
            ongoing = line[: -len(tau_prompts.INCOMPLETE_SUFFIX)]
    words = len(ongoing.split()) - 1 if ongoing else 0  # less the "ASSISTANT:" role
    if prompt.startswith(_INTERRUPT_HEAD):
        return "YES" if words >= 25 else "NO"
    if prompt.startswith(_BACKCHANNEL_HEAD):
        return "YES" if words >= 8 else "NO"
    return "NO"


def _respond(request: RecordedRequest) -> Reply:
    return Reply(classifier_answer(request.text))


def tau_voice(server: OpenAIServer, *, shadow: bool) -> TauVoiceLoopPolicy:
    llm = LLMConfig(model="golden-classifier", base_url=server.base_url, api_key="not-needed")
    return TauVoiceLoopPolicy(PinnedLatency(LLMClient(llm), seed=0), shadow=shadow)


# ---- the calls --------------------------------------------------------------------------

PolicyMaker = Callable[[OpenAIServer | None], TurnTakingPolicy]


@dataclass(frozen=True)
class GoldenCall:
    name: str
    """The fixture's file name (without ``.jsonl``)."""
    far_end: str
    """``simulated`` (scripted agent, text clock) or ``line`` (SimAgentLine)."""
    scenario: str
    tendencies: tuple[float, float, float]
    seed: int
    seconds: float
    """The virtual-clock limit of the run."""
    schedule: tuple[tuple[float, Command], ...] = ()
    policy: PolicyMaker | None = None
    shadow: PolicyMaker | None = None
    adapt: bool = False
    agent: SimAgent | None = None
    """The line far end's agent (``line`` only)."""
    yields_when_interrupted: bool = True
    treats_backchannel_as_turn: bool = False
    llm: bool = False
    """The call consults τ-Voice: the loopback LLM server runs beside it."""


def _acting_tau(server: OpenAIServer | None) -> TurnTakingPolicy:
    assert server is not None
    return tau_voice(server, shadow=False)


def _shadow_tau(server: OpenAIServer | None) -> TurnTakingPolicy:
    assert server is not None
    return tau_voice(server, shadow=True)


def _delayed_rules(server: OpenAIServer | None) -> TurnTakingPolicy:
    return DelayedRules()


CALLS: tuple[GoldenCall, ...] = (
    GoldenCall("sim-rules-quiet", "simulated", "clinic-triage", (1.0, 0.0, 0.0), 1, 45),
    GoldenCall("sim-rules-beta1", "simulated", "retail-order-change", (0.0, 1.0, 0.0), 2, 600),
    GoldenCall("sim-rules-gamma1", "simulated", "airline-rebooking", (0.0, 0.0, 1.0), 3, 50),
    GoldenCall("sim-rules-mixed", "simulated", "clinic-triage", (0.5, 0.7, 0.5), 4, 600),
    GoldenCall(
        "sim-rules-stubborn-agent",
        "simulated",
        "retail-order-change",
        (0.0, 1.0, 1.0),
        5,
        600,
        yields_when_interrupted=False,
        treats_backchannel_as_turn=True,
    ),
    GoldenCall(
        "sim-manual-commands",
        "simulated",
        "retail-order-change",
        (0.3, 0.0, 0.0),
        6,
        600,
        schedule=(
            (3.0, InterruptNow("Sorry, quick question first.")),
            (14.0, BackchannelNow("yeah")),
            (16.0, BackchannelNow()),
            (20.0, SetTendencies(Tendencies(0.3, 1.0, 0.0))),
            (40.0, SetTendencies(Tendencies(0.3, 0.0, 1.0))),
            (55.0, SetAutos(backchannel=False)),
            (70.0, SetAutos(backchannel=True, interrupt=False)),
            (75.0, SubmitText("Also, can you email me the receipt?")),
        ),
    ),
    GoldenCall(
        "sim-rules-adapt", "simulated", "retail-order-change", (0.0, 0.7, 0.5), 3, 600, adapt=True
    ),
    GoldenCall(
        "sim-delayed-rules",
        "simulated",
        "airline-rebooking",
        (0.0, 1.0, 1.0),
        7,
        600,
        policy=_delayed_rules,
    ),
    GoldenCall(
        "sim-tau-voice-shadow",
        "simulated",
        "retail-order-change",
        (0.0, 0.5, 0.5),
        8,
        600,
        shadow=_shadow_tau,
        llm=True,
    ),
    GoldenCall(
        "sim-tau-voice-acting",
        "simulated",
        "clinic-triage",
        (0.0, 0.0, 0.0),
        9,
        45,
        policy=_acting_tau,
        llm=True,
    ),
    GoldenCall(
        "line-yields",
        "line",
        "retail-order-change",
        (0.0, 1.0, 1.0),
        3,
        10.5,
        agent=SimAgent(yields=True),
        schedule=((3.0, CallerSoundNow("vocal_tic")),),
    ),
    GoldenCall(
        "line-talks-on",
        "line",
        "retail-order-change",
        (0.0, 1.0, 0.0),
        3,
        7.0,
        agent=SimAgent(yields=False),
    ),
)
BY_NAME = {c.name: c for c in CALLS}


def _scenario(call: GoldenCall) -> Scenario:
    sc = load_scenario(call.scenario)
    if call.yields_when_interrupted and not call.treats_backchannel_as_turn:
        return sc
    sc = sc.model_copy(deep=True)
    sc.agent.yields_when_interrupted = call.yields_when_interrupted
    sc.agent.treats_backchannel_as_turn = call.treats_backchannel_as_turn
    return sc


def _name(policy: TurnTakingPolicy | None, default: str | None) -> str | None:
    return default if policy is None else policy.name


def _close(policy: object) -> None:
    close = getattr(policy, "close", None)
    if callable(close):
        close()


def _run_simulated(
    call: GoldenCall,
    config: CallConfig,
    folder: Path,
    policy: TurnTakingPolicy | None,
    shadow: TurnTakingPolicy | None,
) -> Path:
    sc = config.scenario
    header = make_header(
        config,
        session_id="golden",
        agent=AgentInfo(kind="scripted", name=sc.agent.name),
        policy=_name(policy, "rules") or "rules",
        shadow=_name(shadow, None),
    )
    recorder = Recorder(folder / f"{call.name}.jsonl", header)
    loop = simulated_call(
        config,
        ScriptedAgent(sc),
        user=ScriptedUser(sc),
        listeners=[recorder],
        policy=policy,
        shadow=shadow,
        adapter=RuleAdapter() if call.adapt else None,
    )
    for at, command in call.schedule:
        loop.schedule(at, command)
    try:
        loop.run_virtual(max_seconds=call.seconds)
    finally:
        recorder.close()
    return recorder.path


def _run_line(
    call: GoldenCall,
    config: CallConfig,
    folder: Path,
    policy: TurnTakingPolicy | None,
    shadow: TurnTakingPolicy | None,
) -> Path:
    assert call.agent is not None
    spec = RemoteSpec(agent="twilio:ws://127.0.0.1:9/", cache_dir=folder / "cache")
    header = make_header(
        config,
        session_id="golden",
        agent=spec.agent_info(SimAgentLine.name),
        speech=spec.speech_info(),
        policy=_name(policy, "rules") or "rules",
        shadow=_name(shadow, None),
    )
    recorder = Recorder(folder / f"{call.name}.jsonl", header)
    line = SimAgentLine(call.agent)
    line.open()
    loop = build_line_call(
        spec,
        config,
        user=ScriptedUser(config.scenario),
        line=line,
        virtual=True,
        policy=policy,
        shadow=shadow,
    )
    loop.listeners.append(recorder)
    for at, command in call.schedule:
        loop.schedule(at, command)
    try:
        loop.run_virtual(call.seconds)
    finally:
        loop.voice.close()
        recorder.close()
    return recorder.path


def run_golden(call: GoldenCall | str) -> bytes:
    """Run one golden call on the virtual clock; its session log, normalised."""
    call = BY_NAME[call] if isinstance(call, str) else call
    a, b, g = call.tendencies
    config = CallConfig(scenario=_scenario(call), tendencies=Tendencies(a, b, g), seed=call.seed)
    server = OpenAIServer() if call.llm else None
    policy = shadow = None
    with tempfile.TemporaryDirectory(prefix="cutin-golden-") as tmp:
        try:
            if server is not None:
                server.responder = _respond
                server.start()
            policy = call.policy(server) if call.policy is not None else None
            shadow = call.shadow(server) if call.shadow is not None else None
            run = _run_line if call.far_end == "line" else _run_simulated
            path = run(call, config, Path(tmp), policy, shadow)
            raw = path.read_bytes()
        finally:
            _close(policy)
            _close(shadow)
            if server is not None:
                server.close()
    return normalise(raw)


def normalise(raw: bytes) -> bytes:
    """The log with the header's wall-clock fields (:data:`HEADER_WALL_CLOCK`) replaced by
    ``"<normalised>"``; every other byte as written."""
    first, sep, rest = raw.partition(b"\n")
    header: dict[str, Any] = json.loads(first)
    if header.get("type") != "header":
        raise ValueError("a session log starts with its header")
    for key in HEADER_WALL_CLOCK:
        if key in header:
            header[key] = NORMALISED
    line = json.dumps(header, ensure_ascii=False, separators=(",", ":"))
    return line.encode("utf-8") + sep + rest


def fixture_path(name: str) -> Path:
    return FIXTURES / f"{name}.jsonl"
