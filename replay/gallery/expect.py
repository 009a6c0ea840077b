"""Does a run show what its entry names? Checks ``expect`` (and ``made_by``) on the events."""

from __future__ import annotations

from replay.gallery.model import Expect, GalleryEntry
from replay.gallery.runner import GalleryRun
from sessions.log.models import (
    AgentTurnEnd,
    AgentWords,
    Backchannel,
    Interruption,
    Opportunity,
    UserTurn,
)


def _turn_end(run: GalleryRun, turn: int) -> AgentTurnEnd | None:
    return next((e for e in run.events if isinstance(e, AgentTurnEnd) and e.turn == turn), None)


def _last_word_end(run: GalleryRun, turn: int) -> float | None:
    ends = [
        w.end for e in run.events if isinstance(e, AgentWords) and e.turn == turn for w in e.words
    ]
    return max(ends) if ends else None


def rule_actions(run: GalleryRun) -> list[Opportunity]:
    """Opportunities at which the rule decided to act (and the loop carried it out)."""
    return [
        e
        for e in run.events
        if isinstance(e, Opportunity) and e.executed and e.decision != "NOTHING"
    ]


def _check_made_by(entry: GalleryEntry, run: GalleryRun, fail: list[str]) -> None:
    fired = rule_actions(run)
    if entry.made_by == "rule" and not fired:
        fail.append("made_by = 'rule' but the rule never acted in this run")
    if entry.made_by != "rule" and fired:
        what = ", ".join(f"{o.decision} at {o.t:.2f} s" for o in fired)
        fail.append(f"made_by = {entry.made_by!r} but the rule also acted ({what})")
    users = [e for e in run.events if isinstance(e, UserTurn)]
    d = entry.disfluency
    if d is None:
        return
    if entry.made_by == "injection":
        mine = [u for u in users if u.original == d.original]
        if not mine:
            fail.append("the caller never says disfluency.original")
        elif not any(i.kind == d.insertion_kind for i in mine[0].insertions):
            kinds = [str(i.kind) for i in mine[0].insertions] or ["no"]
            fail.append(
                f"injection gave {', '.join(kinds)} insertions, not {d.insertion_kind!r}, in "
                f"{mine[0].rendered!r}"
            )
    elif entry.made_by == "written":
        said = d.spoken or d.rendered
        if not any(u.rendered == said and not u.insertions for u in users):
            fail.append("the caller never says the written line unchanged")


def check_expectations(entry: GalleryEntry, run: GalleryRun) -> list[str]:
    """What the run failed to show; empty when it shows everything ``expect`` names."""
    x = entry.expect
    fail: list[str] = []
    _check_made_by(entry, run, fail)
    ints = [e for e in run.events if isinstance(e, Interruption)]
    bcs = [e for e in run.events if isinstance(e, Backchannel)]
    users = [e for e in run.events if isinstance(e, UserTurn)]
    if x.interruptions is not None and len(ints) != x.interruptions:
        fail.append(f"expected {x.interruptions} interruption(s), got {len(ints)}")
    if x.backchannels is not None and len(bcs) != x.backchannels:
        fail.append(f"expected {x.backchannels} backchannel(s), got {len(bcs)}")
    if x.backchannel_token is not None and (not bcs or bcs[0].token != x.backchannel_token):
        got = bcs[0].token if bcs else "no backchannel"
        fail.append(f"expected backchannel {x.backchannel_token!r}, got {got!r}")
    first = ints[0] if ints else None
    cut_turn = _turn_end(run, first.turn) if first is not None else None
    needs_interruption = (
        x.agent_yields_within_s,
        x.agent_keeps_floor,
        x.talk_over_min_s,
        x.talk_over_max_s,
        x.caller_lead_s,
    )
    if first is None or cut_turn is None:
        if any(v is not None for v in needs_interruption):
            fail.append("expected an interrupted agent turn, but nothing interrupted the agent")
    else:
        _check_interrupted(x, first, cut_turn, run, fail)
    if x.agent_stops_at_backchannel is not None:
        end = _turn_end(run, bcs[0].turn) if bcs else None
        stopped = bool(
            end is not None and end.interrupted and end.unspoken and abs(end.t - bcs[0].t) < 0.05
        )
        if stopped != x.agent_stops_at_backchannel:
            fail.append(
                "expected the agent to stop at the backchannel"
                if x.agent_stops_at_backchannel
                else "expected the agent to keep talking through the backchannel"
            )
    if x.agent_words_before_cut is not None:
        cut = _words_before_cut(run, first)
        if cut != x.agent_words_before_cut:
            fail.append(f"expected the cut after {x.agent_words_before_cut} words, got {cut}")
    overlap = run.timeline.overlap_seconds()
    if x.overlap_min_s is not None and overlap < x.overlap_min_s:
        fail.append(f"expected ≥ {x.overlap_min_s} s of overlap, got {overlap} s")
    if x.overlap_max_s is not None and overlap > x.overlap_max_s:
        fail.append(f"expected ≤ {x.overlap_max_s} s of overlap, got {overlap} s")
    if x.insertion_kinds is not None:
        kinds = sorted({i.kind for u in users for i in u.insertions})
        if kinds != sorted(set(x.insertion_kinds)):
            fail.append(f"expected insertion kinds {sorted(set(x.insertion_kinds))}, got {kinds}")
    if x.rendered_contains is not None and not any(
        x.rendered_contains in u.rendered for u in users
    ):
        fail.append(f"no caller turn contains {x.rendered_contains!r}")
    return fail


def _words_before_cut(run: GalleryRun, first: Interruption | None) -> int | None:
    if first is not None and first.cut_word is not None:
        return first.cut_word
    for e in run.events:
        if isinstance(e, AgentTurnEnd) and e.interrupted and e.cut_word is not None:
            return e.cut_word
    return None


def _check_interrupted(
    x: Expect, first: Interruption, end: AgentTurnEnd, run: GalleryRun, fail: list[str]
) -> None:
    talk_over = end.talk_over_s or 0.0
    if x.agent_yields_within_s is not None:
        waited = round(end.t - first.t, 4)
        if talk_over > 0 or waited > x.agent_yields_within_s:
            fail.append(
                f"expected the agent to stop within {x.agent_yields_within_s} s of the "
                f"interruption; it stopped after {waited} s (talk-over {talk_over} s)"
            )
    if x.agent_keeps_floor is not None:
        kept = not end.unspoken and end.spoken == end.text
        if kept != x.agent_keeps_floor:
            fail.append(
                "expected the agent to finish its turn over the caller"
                if x.agent_keeps_floor
                else "expected the agent to give up the floor"
            )
    if x.talk_over_min_s is not None and talk_over < x.talk_over_min_s:
        fail.append(f"expected talk-over ≥ {x.talk_over_min_s} s, got {talk_over} s")
    if x.talk_over_max_s is not None and talk_over > x.talk_over_max_s:
        fail.append(f"expected talk-over ≤ {x.talk_over_max_s} s, got {talk_over} s")
    if x.caller_lead_s is not None:
        last = _last_word_end(run, first.turn)
        lead = None if last is None else round(last - first.t, 4)
        lo, hi = x.caller_lead_s
        if lead is None or not lo <= lead <= hi:
            fail.append(
                f"expected the caller to start {lo}–{hi} s before the agent's last word ends, "
                f"got {lead} s"
            )
