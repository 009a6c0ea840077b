"""The call screen's fold of a black-box call's events (no Textual, no audio): the line's
status, both points of a cut turn, false yields, yield notes, the end reason."""

from __future__ import annotations

from cutin_tui.views.call_view import AgentEntry, CallView, NoteEntry
from cutin_tui.views.line_view import LineView, parse_audio_format
from cutin_tui.widgets.line_status import line_status_text
from replay.report.black_box import split_cut
from sessions.log.models import LineEvent
from tests.support.black_box_log import black_box_events


def _view() -> CallView:
    view = CallView()
    view.apply(black_box_events())
    return view


def _agents(view: CallView) -> list[AgentEntry]:
    return [e for e in view.entries if isinstance(e, AgentEntry)]


def test_the_line_status_follows_the_line_events() -> None:
    line = LineView(name="twilio", target="ws://127.0.0.1:8765/", state="connecting")
    assert line_status_text(line) == "line ◌ connecting · twilio ws://127.0.0.1:8765/"
    line.apply(LineEvent(t=0.0, kind="open"))
    line.apply(LineEvent(t=0.0, kind="format", data={"encoding": "audio/x-mulaw", "rate": 8000}))
    assert line_status_text(line) == "line ● open · twilio ws://127.0.0.1:8765/ · μ-law 8 kHz"
    line.apply(LineEvent(t=3.0, kind="error", detail="bad frame"))
    line.apply(LineEvent(t=4.0, kind="failed", detail="dropped\nwithout a close frame"))
    assert line_status_text(line) == (
        "line ✕ failed: dropped␤without a close frame · twilio ws://127.0.0.1:8765/"
        " · μ-law 8 kHz · 1 error"
    )
    assert parse_audio_format("audio/pcm;rate=24000") == "PCM16 24 kHz"


def test_a_black_box_call_folds_into_both_points_and_notes() -> None:
    view = _view()
    assert view.line is not None and view.line.state == "closed"
    assert line_status_text(view.line) == (
        "line ○ closed by agent · μ-law 8 kHz · 1 clear · yielded 1/2, 0.25 s · false yields 1/1"
    )
    first, second, third = _agents(view)
    assert first.black_box and first.yielded and first.cut_word == 14
    split = split_cut(first.starts, 14, first.stop_t)
    assert first.words[split.cut : split.stop] == ["on"]
    assert first.stop_latency_s == 0.25
    assert second.false_yields and second.false_yields[0][1] == 0.31
    assert third.yielded is False and third.stop_t is None
    notes = [e.text for e in view.entries if isinstance(e, NoteEntry)]
    assert "agent stopped 0.25 s after you began (talk-over 0.2 s)" in notes
    assert "false yield: agent stopped 0.31 s after your backchannel" in notes
    assert "agent did not yield within 2.0 s (talk-over 0.7 s)" in notes
    assert notes[-1].endswith(": the agent hung up")
    assert view.timeline.stops == sorted(view.timeline.stops) and len(view.timeline.stops) == 2


def test_a_simulated_call_is_not_marked_as_black_box() -> None:
    from tests.tui_replay.logs import demo_events

    view = CallView()
    view.apply(demo_events())
    assert view.line is None
    assert not any(e.black_box for e in _agents(view))


async def test_the_transcript_draws_both_points_without_audio() -> None:
    """The hand-made call drawn by the transcript widget alone (fast: no espeak, no STT)."""
    from textual.app import App, ComposeResult

    from cutin_tui.widgets import TranscriptView

    class _Transcript(App[None]):
        CSS_PATH = "../../cutin_tui/styles/call.tcss"

        def compose(self) -> ComposeResult:
            yield TranscriptView(id="transcript")

    view = _view()
    app = _Transcript()
    async with app.run_test(size=(100, 30)) as pilot:
        widget = app.query_one(TranscriptView)
        widget.update_entries(view.entries, set(range(len(view.entries))))
        await pilot.pause()
        text = " ".join(" ".join(widget.plain_lines()).split())  # unwrapped
        assert "we have ▌cut on ■stop+0.25s" in text
        assert "Monday ■false-yield+0.31s" in text
        assert "in the email we ▌cut sent you" in text and "with ▶talked-on" in text
        # The word said over the tester has the talk-over look, the others do not.
        segments = [seg for strip in widget._lines for seg in strip]
        talk_over = widget.get_component_rich_style("transcript--talk-over", partial=True)
        assert next(seg for seg in segments if seg.text == "on").style == talk_over
        before = next(seg for seg in segments if "the address we have" in seg.text)
        assert before.style != talk_over
