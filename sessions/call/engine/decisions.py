"""Every way a call decides, for any far end: the acting policy at short pauses, the
shadow beside it (logged, never executed), polling policies' per-frame look (τ-Voice),
and decisions whose action comes later (an LLM policy's latency, ``delay_s``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from controls.pauses import PauseEvent
from controls.turn_taking import Action, Situation
from sessions.call.context import AgentTurn, Heard
from sessions.call.policy import PolicyContext, PolicyDecision, RulesPolicy, TurnTakingPolicy
from sessions.log.models import Opportunity

if TYPE_CHECKING:
    from sessions.call.engine.engine import CallEngine


@dataclass
class _Pending:
    """An action decided now but executed later (an LLM policy's latency)."""

    at: float
    decision: PolicyDecision
    turn: int


class Decisions:
    """The policies of one call and the opportunities they are given."""

    def __init__(
        self,
        engine: CallEngine[Any],
        policy: TurnTakingPolicy | None,
        shadow: TurnTakingPolicy | None,
    ) -> None:
        self.engine = engine
        self.policy: TurnTakingPolicy = policy or RulesPolicy()
        self.shadow = shadow
        self._pending: _Pending | None = None
        self._opportunities = 0

    def _situation(self, turn: AgentTurn, t: float) -> tuple[Situation, Heard]:
        heard = self.engine.far.heard(t)
        onset = turn.onset if turn.onset is not None else t
        situation = Situation(
            agent_speaking_seconds=round(t - onset, 4),
            agent_words=heard.words,
            agent_text=heard.text,
            agent_turn_index=turn.index,
            interrupted_this_turn=turn.interrupted,
            backchannels_this_turn=turn.backchannels,
            words_at_last_backchannel=turn.words_at_last_backchannel,
        )
        return situation, heard

    def _context(self, turn: AgentTurn, t: float, **more: object) -> tuple[PolicyContext, Heard]:
        e = self.engine
        situation, heard = self._situation(turn, t)
        ctx = PolicyContext(
            t=t,
            situation=situation,
            tendencies=e._effective_tendencies(),
            history=list(e.history),
            turn_onset=turn.onset if turn.onset is not None else t,
            virtual=e.virtual,
            rule_params=e._rule_params(t),
            **more,  # type: ignore[arg-type]
        )
        return ctx, heard

    def _will_act(self, decision: PolicyDecision) -> bool:
        return (
            decision.action is not Action.NOTHING
            and self._pending is None
            and self.engine.far.ready_to_act()
        )

    def _act(self, decision: PolicyDecision, t: float, turn: int) -> None:
        if decision.delay_s > 0:
            self._pending = _Pending(t + decision.delay_s, decision, turn)
        else:
            self.execute(decision, t, trigger="auto", turn=turn)

    def at_pause(self, ev: PauseEvent) -> None:
        """A short pause while the caller is silent: an opportunity."""
        far = self.engine.far
        turn = far.turn
        assert turn is not None
        far.before_decision(ev)
        ctx, heard = self._context(turn, ev.t, pause_index=ev.index)
        index = self._opportunities
        self._opportunities += 1
        decision = self.policy.at_pause(ctx)
        if decision is not None:
            will_act = self._will_act(decision)
            self._log(
                index,
                ev.t,
                ev,
                turn,
                decision,
                self.policy.name,
                "auto",
                ctx,
                heard,
                executed=will_act,
            )
            if will_act:
                self._act(decision, ev.t, turn.index)
        # The shadow sees the same moment (ctx is a snapshot) but runs after the acting
        # policy, so a slow shadow (an LLM) never delays what the caller actually does.
        if self.shadow is not None:
            shadow = self.shadow.at_pause(ctx)
            if shadow is not None:
                self._log(
                    index,
                    ev.t,
                    ev,
                    turn,
                    shadow,
                    self.shadow.name,
                    "shadow",
                    ctx,
                    heard,
                    executed=False,
                )

    def poll(self, t: float) -> None:
        """Give polling policies (τ-Voice's fixed schedule) their per-frame look."""
        far = self.engine.far
        turn = far.turn
        if turn is None or turn.onset is None:
            return
        t = round(t, 6)
        for policy, mode in ((self.shadow, "shadow"), (self.policy, "auto")):
            if policy is None or not getattr(policy, "polls", True):
                continue
            ctx, heard = self._context(turn, t, user_busy=far.caller_busy(t))
            decision = policy.at_frame(ctx)
            if decision is None:
                continue
            index = self._opportunities
            self._opportunities += 1
            will_act = mode == "auto" and self._will_act(decision)
            self._log(
                index, t, None, turn, decision, policy.name, mode, ctx, heard, executed=will_act
            )
            if will_act:
                self._act(decision, t, turn.index)
            if far.turn is not turn:
                return

    def run_due(self, t: float) -> None:
        """Execute a delayed decision once its time has come."""
        if self._pending is not None and t >= self._pending.at:
            pending, self._pending = self._pending, None
            self.execute(pending.decision, t, trigger="auto", turn=pending.turn)

    def execute(self, decision: PolicyDecision, t: float, *, trigger: str, turn: int) -> None:
        far = self.engine.far
        current = far.turn
        if current is None or current.index != turn:
            return  # the turn it was decided for is over
        if decision.action is Action.INTERRUPT:
            self.engine.interrupt(t, decision, trigger=trigger)
        elif decision.action is Action.BACKCHANNEL:
            far.backchannel(t, trigger=trigger, token=decision.token)

    def _log(
        self,
        index: int,
        t: float,
        ev: PauseEvent | None,
        turn: AgentTurn,
        decision: PolicyDecision,
        policy: str,
        mode: str,
        ctx: PolicyContext,
        heard: Heard,
        *,
        executed: bool,
    ) -> None:
        e = self.engine
        e.emit(
            Opportunity(
                t=round(t, 6),
                index=index,
                pause_index=ev.index if ev is not None else None,
                turn=turn.index,
                decision=str(decision.action),
                checks=[c.as_dict() for c in decision.checks],
                executed=executed,
                mode=mode,
                policy=policy,
                situation={**ctx.situation.as_dict(), **heard.detail},
                llm=decision.llm,
                autos={"interrupt": e.auto_interrupt, "backchannel": e.auto_backchannel},
            )
        )
