"""Pilot tests of the live call screen, on the virtual clock (same call every run)."""

from __future__ import annotations

from pathlib import Path

from textual.binding import Binding
from textual.widgets import Input

from cutin_tui.screens.app import CutinApp
from cutin_tui.screens.call import CallScreen
from cutin_tui.screens.home import HomeScreen
from cutin_tui.views.call_view import AgentEntry, UserEntry
from cutin_tui.views.live_counts import count_events
from cutin_tui.widgets import CountersPanel, DecisionLine, DialsBar, DialsPanel, TranscriptView
from cutin_tui.widgets.counters import counter_lines
from cutin_tui.widgets.dials import dial_lines
from sessions.log import Backchannel, EndEvent, Interruption, Opportunity, read_session
from sessions.log.models import UserTurn
from sessions.scenarios import load_scenario
from tests.tui.helpers import (
    SIZE,
    advance,
    advance_until_my_turn,
    call_screen,
    type_text,
    virtual_call,
)


def _dials_text(screen: CallScreen) -> str:
    panel = screen.query_one(DialsPanel)
    return "\n".join(line for line, _ in dial_lines(panel.state))


def _agent_entries(screen: CallScreen) -> list[AgentEntry]:
    return [e for e in screen.view.entries if isinstance(e, AgentEntry)]


def _user_entries(screen: CallScreen) -> list[UserEntry]:
    return [e for e in screen.view.entries if isinstance(e, UserEntry)]


async def test_dial_keys_step_the_selected_dial_while_typing() -> None:
    app, driver = virtual_call(alpha=0.5, beta=0.0, gamma=0.5)
    async with app.run_test(size=SIZE) as pilot:
        screen = call_screen(app)
        assert isinstance(app.focused, Input)
        await type_text(pilot, "hel")
        await pilot.press("f7", "ctrl+up", "ctrl+up", "shift+up")
        assert screen.tendencies.beta == 0.3
        assert "▸β interruption 0.30 ███░░░░░░░" in _dials_text(screen)
        assert "patience 7.45 s" in _dials_text(screen)
        await pilot.press("f6", "ctrl+down")
        assert screen.tendencies.alpha == 0.4
        await pilot.press("f8", *["ctrl+up"] * 8)
        assert screen.tendencies.gamma == 1.0  # clamped at 1
        # The keys did not type into the box, and the loop got the new dials.
        assert app.screen.query_one(Input).value == "hel"
        await advance(pilot, driver, 0.1)
        assert (driver.loop.tendencies.alpha, driver.loop.tendencies.beta) == (0.4, 0.3)
        assert driver.loop.tendencies.gamma == 1.0


async def test_interrupt_key_cuts_the_agent_with_the_typed_text(tmp_path: Path) -> None:
    app, driver = virtual_call(beta=0.0, gamma=0.0, sessions_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        screen = call_screen(app)
        await advance(pilot, driver, 3.0)
        assert screen.view.agent_speaking
        await type_text(pilot, "wait a second")
        await pilot.press("f2")
        await advance(pilot, driver, 3.2)
        agent = _agent_entries(screen)[0]
        assert agent.done and agent.interrupted and agent.cut_word is not None
        assert agent.unspoken  # the rest of the turn, shown dimmed
        lines = "\n".join(screen.query_one(TranscriptView).plain_lines())
        assert "▌cut" in lines
        you = _user_entries(screen)[-1]
        assert (you.original, you.source) == ("wait a second", "interruption")
        assert app.screen.query_one(Input).value == ""
        counters = "\n".join(counter_lines(screen.view.counts))
        assert "interruptions   1 (auto 0, manual 1)  1.00 per turn  0/0 opp. = –" in counters
    log = read_session(driver.log_path or "")
    (cut,) = log.of(Interruption)
    assert cut.trigger == "manual" and cut.text == "wait a second"
    assert cut.cut_word == agent.cut_word


async def test_interrupt_key_with_empty_box_says_a_scenario_line() -> None:
    app, driver = virtual_call(beta=0.0, gamma=0.0)
    async with app.run_test(size=SIZE) as pilot:
        screen = call_screen(app)
        await advance(pilot, driver, 2.5)
        await pilot.press("f2")
        await advance(pilot, driver, 2.6)
        you = _user_entries(screen)[-1]
        lines = load_scenario("retail-order-change").user.interruptions
        assert you.source == "interruption" and you.original in lines


async def test_interrupt_key_with_nobody_speaking_does_nothing() -> None:
    app, driver = virtual_call(beta=0.0, gamma=0.0)
    async with app.run_test(size=SIZE) as pilot:
        screen = call_screen(app)
        await advance(pilot, driver, 30.0)  # the first turn is over; the agent waits
        assert not screen.view.agent_speaking
        await pilot.press("f2", "f3")
        await advance(pilot, driver, 31.0)
        assert screen.view.counts.interruptions == 0
        assert screen.view.counts.backchannels == 0


async def test_backchannel_key_adds_a_token_to_the_agent_turn(tmp_path: Path) -> None:
    app, driver = virtual_call(beta=0.0, gamma=0.0, sessions_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        screen = call_screen(app)
        await advance(pilot, driver, 4.0)
        await pilot.press("f3")
        await advance(pilot, driver, 4.1)
        agent = _agent_entries(screen)[0]
        assert len(agent.backchannels) == 1 and not agent.done
        token = agent.backchannels[0][1]
        assert f"⟨{token}⟩" in "\n".join(screen.query_one(TranscriptView).plain_lines())
        assert screen.view.counts.backchannels_manual == 1
    (bc,) = read_session(driver.log_path or "").of(Backchannel)
    assert bc.trigger == "manual" and bc.token == token


async def test_typed_turn_shows_original_and_rendered_text() -> None:
    app, driver = virtual_call(alpha=1.0, beta=0.0, gamma=0.0)
    async with app.run_test(size=SIZE) as pilot:
        screen = call_screen(app)
        await advance(pilot, driver, 25.0)  # the agent asked for the order number
        text = "yes it is 48213 and I am in a hurry"
        await type_text(pilot, text)
        await pilot.press("enter")
        await advance(pilot, driver, 25.1)
        you = _user_entries(screen)[-1]
        assert you.original == text and you.source == "typed"
        assert you.rendered != you.original  # α = 1: disfluencies were added
        lines = "\n".join(screen.query_one(TranscriptView).plain_lines())
        assert f"“{text}”" in lines.replace("\n       ", " ")
        assert "said:" in lines


async def test_text_sent_while_the_agent_speaks_waits_for_its_turn_end() -> None:
    app, driver = virtual_call(beta=0.0, gamma=0.0)
    async with app.run_test(size=SIZE) as pilot:
        screen = call_screen(app)
        await advance(pilot, driver, 2.0)
        await type_text(pilot, "my order is 48213")
        await pilot.press("enter")
        assert any("waits for the agent" in line for line in _plain(screen))
        await advance(pilot, driver, 5.0)
        assert not _user_entries(screen)  # still the agent's floor
        await advance(pilot, driver, 30.0)
        assert _user_entries(screen)[0].original == "my order is 48213"
        assert not any("waits for the agent" in line for line in _plain(screen))


def _plain(screen: CallScreen) -> list[str]:
    return screen.query_one(TranscriptView).plain_lines()


async def test_auto_interrupt_toggle_stops_and_restarts_automatic_cuts(tmp_path: Path) -> None:
    app, driver = virtual_call(beta=1.0, gamma=0.0, sessions_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        screen = call_screen(app)
        await pilot.press("f4")
        assert "auto-interrupt    off" in _dials_text(screen)
        await advance(pilot, driver, 12.0)
        assert screen.view.counts.interruptions == 0
        decision = screen.query_one(DecisionLine).decision
        assert decision is not None and decision.autos == {
            "interrupt": False,
            "backchannel": True,
        }
        await pilot.press("f4")
        await advance(pilot, driver, 20.0)
        assert screen.view.counts.interruptions_auto == 1
    opportunities = read_session(driver.log_path or "").of(Opportunity)
    assert any(o.decision == "INTERRUPT" and o.executed for o in opportunities)


async def test_counters_equal_the_log_after_a_whole_call(tmp_path: Path) -> None:
    app, driver = virtual_call(beta=0.0, gamma=0.7, sessions_dir=tmp_path)
    replies = ["12 Birch Lane", "yes please", "no thanks"]
    async with app.run_test(size=SIZE) as pilot:
        screen = call_screen(app)
        await advance(pilot, driver, 6.0)
        await type_text(pilot, "it is 48213")
        await pilot.press("f2")  # a manual interruption; the backchannels are automatic
        for reply in replies:
            await advance_until_my_turn(pilot, driver)
            await type_text(pilot, reply)
            await pilot.press("enter")
        await advance_until_my_turn(pilot, driver)
        await pilot.press("f10")
        await pilot.pause()
        assert screen.view.ended == "hangup"
        shown = screen.query_one(CountersPanel).counts
        panel = counter_lines(shown)
    log = read_session(driver.log_path or "")
    assert log.of(EndEvent)
    assert panel == counter_lines(count_events(log.events))
    # And against plain counting of the log's lines.
    assert shown.interruptions == len(log.of(Interruption)) > 0
    assert shown.backchannels == len(log.of(Backchannel)) > 0
    assert shown.opportunities == len(log.of(Opportunity))
    assert [u.original for u in log.of(UserTurn) if u.source == "typed"] == replies
    assert [i.text for i in log.of(Interruption)] == ["it is 48213"]


async def test_hang_up_key_ends_the_call_and_logs_it(tmp_path: Path) -> None:
    app, driver = virtual_call(sessions_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        screen = call_screen(app)
        await advance(pilot, driver, 5.0)
        await pilot.press("f10")
        await pilot.pause()
        assert screen.view.ended == "hangup"
        assert app.screen.query_one(Input).placeholder.startswith("call ended")
        # The path is long and wraps; read the transcript as one string.
        assert f"log:{driver.log_path}" in "".join(line.strip() for line in _plain(screen))
        await pilot.press("escape")
        await pilot.pause()
    assert app.return_code == 0
    (end,) = read_session(driver.log_path or "").of(EndEvent)
    assert end.reason == "hangup"


async def test_command_palette_runs_call_actions() -> None:
    app, driver = virtual_call(beta=0.0)
    async with app.run_test(size=SIZE) as pilot:
        screen = call_screen(app)
        actions = {action for _, _, action in screen.palette_entries()}
        for binding in CallScreen.BINDINGS:
            assert isinstance(binding, Binding)
            assert binding.id in CallScreen.PALETTE_TITLES
            assert binding.action in actions
        await pilot.press("ctrl+p")
        await type_text(pilot, "interruption to 0.7")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await pilot.pause(0.1)
        assert screen.tendencies.beta == 0.7
        await advance(pilot, driver, 0.1)
        assert driver.loop.tendencies.beta == 0.7


def test_every_binding_has_an_id_and_a_tooltip() -> None:
    for owner in (CallScreen, HomeScreen, CutinApp):
        own = [b for b in owner.BINDINGS if isinstance(b, Binding)]
        assert own, owner
        for binding in own:
            assert binding.id and binding.tooltip, (owner.__name__, binding.key)


async def test_decision_line_names_every_check() -> None:
    app, driver = virtual_call(beta=1.0, gamma=0.0)
    async with app.run_test(size=SIZE) as pilot:
        screen = call_screen(app)
        await advance(pilot, driver, 6.0)
        rendered = screen.query_one(DecisionLine).render().plain
        assert "INTERRUPT · taken" in rendered
        assert "✓ β 1 > 0" in rendered and "✓ words 12 ≥ 12" in rendered
        assert "✗ 1st agent turn" in rendered  # the backchannel rule's reason


async def test_small_terminal_gets_the_compact_layout() -> None:
    app, driver = virtual_call(beta=1.0)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = call_screen(app)
        await advance(pilot, driver, 12.0)
        assert screen.has_class("-compact")
        assert not screen.query_one(DialsPanel).display
        bar = screen.query_one(DialsBar)
        assert bar.display and bar.region.height == 1
        assert "▸β 1.00" in bar.render().plain
        transcript = screen.query_one(TranscriptView)
        assert transcript.region.height >= 5  # room left for the words
        assert transcript.scroll_y == transcript.max_scroll_y > 0  # follows the newest line
        await pilot.resize_terminal(120, 40)
        await pilot.pause()
        assert not screen.has_class("-compact")
        assert screen.query_one(DialsPanel).display


async def test_push_to_talk_key_is_offered_only_on_a_push_to_talk_call() -> None:
    app, driver = virtual_call()
    async with app.run_test(size=SIZE) as pilot:
        screen = call_screen(app)
        assert screen.check_action("toggle_talk", ()) is False  # typed call: hidden
        await pilot.press("f11")  # harmless: nothing to toggle
        await pilot.pause()
        assert not driver.push_to_talk
