"""The HTML report's per-call timeline and audio (issue 30), on logs known by construction.

The hand-made black-box log (tests/support/black_box_log.py: a cut that stopped 0.25 s
later, a false yield, a turn the agent talked on through) with a two-channel WAV
written beside it (a tone on the agent's channel exactly over its words, another on
the caller's over its turns): the marks read back from the SVG's x coordinates sit at
the logged times, the agent's sound drawn is where the tone is, each audio element is
the file's own frames of its stretch, the page cap holds, a lagged call is flagged,
and hostile logs give a page with no live markup. Fast: no line, no model.
"""

from __future__ import annotations

import io
import json
import math
import wave
from pathlib import Path

import numpy as np
import pytest

from replay.errors import LoadError
from replay.load import load_log
from replay.model import Trial
from replay.report.call_audio import AudioBudget, agent_sound, clips, stretches
from replay.report.call_timeline import call_timeline
from replay.report.trials import render_html
from replay.timeline.lanes import (
    STRIP_W,
    Interval,
    LaneSpan,
    Mark,
    MarkKind,
    Timeline,
    column,
    layout_strip,
    strips,
    t_of,
    x_of,
)
from sessions.log.models import (
    AgentTurnEnd,
    AgentTurnStart,
    AgentWords,
    AgentYield,
    Backchannel,
    EndEvent,
    Event,
    FrameLag,
    Interruption,
    LineEvent,
    UserTurn,
    WordTiming,
)
from sessions.log.reader import read_session
from tests.replay.report_page import network_references, read_page
from tests.support.black_box_log import black_box_events, black_box_header
from tests.support.logs import write_log

RATE = 16000
PX_S = 0.01
"""Tolerance of a time read back from the SVG (x is written to 0.01 of 1200 units)."""


# ---- the shared layout ------------------------------------------------------------------


def test_strips_and_x_are_inverse_and_cover_the_call() -> None:
    assert strips(125.0) == [(0.0, 60.0), (60.0, 120.0), (120.0, 180.0)]
    assert strips(60.0) == [(0.0, 60.0)]
    assert strips(float("nan")) == [(0.0, 60.0)]
    for t in (0.0, 12.345, 59.99):
        assert abs(t_of(x_of(t, 0.0, 60.0), 0.0, 60.0) - t) < PX_S
    assert x_of(-5.0, 0.0, 60.0) == 0.0 and x_of(99.0, 0.0, 60.0) == STRIP_W


def test_layout_places_each_thing_in_its_row_and_strip_only() -> None:
    tl = Timeline(
        spans=[
            LaneSpan("agent", 1.0, 5.0, "speech", "hello", 0),
            LaneSpan("caller", 4.0, 6.0, "speech", "wait", 0),
            LaneSpan("agent", 70.0, 72.0, "speech", "later", 1),
        ],
        marks=[
            Mark(4.0, MarkKind.CUT, "cut"),
            Mark(4.3, MarkKind.STOP, "stop"),
            Mark(71.0, MarkKind.PAUSE, "·"),
        ],
        intervals=[Interval("yield", 4.0, 4.3, "stopped"), Interval("dead-air", 30.0, 40.0)],
    )
    first = layout_strip(tl, 0.0, 60.0)
    kinds = [(s.row, s.kind) for s in first]
    assert ("caller", "overlap") in kinds and ("gaps", "dead-air") in kinds
    assert ("marks", "pause") not in kinds  # at 71 s: the next strip's
    overlap = next(s for s in first if s.kind == "overlap")
    assert (overlap.t, overlap.t_end) == (4.0, 5.0)
    assert abs(overlap.w - x_of(5.0, 0, 60) + x_of(4.0, 0, 60)) < 1e-6
    cut = next(s for s in first if s.kind == "cut")
    assert (cut.row, cut.w) == ("agent", 0.0) and abs(t_of(cut.x, 0, 60) - 4.0) < PX_S
    # Bars are drawn first, marks last (on top).
    assert [s.w > 0 for s in first] == sorted((s.w > 0 for s in first), reverse=True)
    second = layout_strip(tl, 60.0, 120.0)
    assert {s.kind for s in second} == {"speech", "pause"}


# ---- a black-box call with its recording ---------------------------------------------------


def _tone(n: int, hz: float, level: float = 0.25) -> np.ndarray:
    return level * np.sin(2 * math.pi * hz * np.arange(n) / RATE)


def _write_recording(log: Path, events: list[Event]) -> Path:
    """Agent tone exactly over its words, caller tones over its turns and backchannels;
    t = 0 is sample 0."""
    session = read_session(log)
    end = max(e.t for e in events) + 1.0
    agent = np.zeros(int(end * RATE))
    caller = np.zeros(int(end * RATE))
    for e in session.events:
        for w in getattr(e, "words", None) or []:
            a, b = int(w.start * RATE), int(w.end * RATE)
            agent[a:b] = _tone(b - a, 440.0)
        if isinstance(e, UserTurn) and e.end_t is not None:
            a, b = int(e.t * RATE), int(e.end_t * RATE)
            caller[a:b] = _tone(b - a, 220.0)
        if isinstance(e, Backchannel):
            a, b = int(e.t * RATE), int((e.t + 0.45) * RATE)
            caller[a:b] = _tone(b - a, 330.0)
    both = np.stack([agent, caller], axis=1)
    wav = log.with_suffix(".wav")
    with wave.open(str(wav), "wb") as w:
        w.setnchannels(2)
        w.setsampwidth(2)
        w.setframerate(RATE)
        w.writeframes((both * 32767).round().astype("<i2").tobytes())
    return wav


@pytest.fixture
def call(tmp_path: Path) -> tuple[Path, Trial]:
    events = black_box_events()
    log = write_log(tmp_path / "remote01.jsonl", events, black_box_header())
    _write_recording(log, events)
    trial = load_log(log)
    assert isinstance(trial, Trial)
    return log, trial


def test_marks_sit_at_the_logged_times(call: tuple[Path, Trial]) -> None:
    log, trial = call
    page = read_page(render_html([trial]))
    assert len(page.strips) == 1 and page.strips[0].t0 == 0.0
    session = read_session(log)
    cuts = [e.cut_t for e in session.of(AgentTurnEnd) if e.interrupted and e.cut_t is not None]
    assert len(cuts) == 2 and len(page.of("cut")) == 2
    for want, got in zip(sorted(cuts), page.of("cut"), strict=True):
        assert abs(got - want) < PX_S
    yields = session.of(AgentYield)
    stops = [y.stop_t or -1.0 for y in yields if y.after == "interruption" and y.yielded]
    false = [y.stop_t or -1.0 for y in yields if y.after == "backchannel" and y.yielded]
    talked = [y.onset_t + y.talk_over_s for y in yields if not y.yielded]
    for kind, want_list in (("stop", stops), ("false-yield", false), ("talked-on", talked)):
        placed = page.of(kind)
        assert len(placed) == len(want_list) == 1, kind
        assert abs(placed[0] - want_list[0]) < PX_S, kind
    bcs = [e.t for e in session.of(Backchannel)]
    assert [round(t, 2) for t in page.of("backchannel")] == [round(t, 2) for t in bcs]
    assert len(page.of("interruption")) == len(session.of(Interruption))
    # Hover titles carry the details: the stop's latency from the log.
    stop = next(m for m in page.marks if m.kind == "stop")
    assert "0.25 s" in stop.title
    assert network_references(render_html([trial])) == []


def test_the_agent_sound_drawn_is_where_the_recording_has_it(call: tuple[Path, Trial]) -> None:
    log, trial = call
    sound = agent_sound(log.with_suffix(".wav"))
    words = [(w.start, w.end) for t in trial.turns if t.speaker == "agent" for w in t.words]
    assert sound
    for a, b in words:  # every word is inside a drawn stretch of sound
        mid = (a + b) / 2
        assert any(lo <= mid <= hi for lo, hi in sound), (a, b)
    for lo, hi in sound:  # and no stretch starts or ends far from a word
        assert any(abs(lo - a) < 0.06 for a, _ in words), lo
        assert any(abs(hi - b) < 0.1 for _, b in words), hi
    tl = call_timeline(trial, sound)
    assert [(i.start, i.end) for i in tl.intervals if i.kind == "agent-sound"] == sound


def test_each_audio_is_its_stretch_of_both_channels(call: tuple[Path, Trial]) -> None:
    log, trial = call
    page = read_page(render_html([trial]))
    want = stretches(trial)
    # The cut, the false yield and the talked-on turn: three turns to listen to.
    assert len(want) == len(page.audios) == 3
    with wave.open(str(log.with_suffix(".wav")), "rb") as w:
        frames = w.readframes(w.getnframes())
    for s, audio in zip(want, page.audios, strict=True):
        assert (audio.start, audio.end) == (s.start, s.end)
        assert audio.channels == 2
        assert abs(audio.seconds - (s.end - s.start)) <= 1 / RATE + 1e-9
        with wave.open(io.BytesIO(audio.wav), "rb") as w:
            got = w.readframes(w.getnframes())
        first = int(s.start * RATE) * 4
        assert got == frames[first : first + len(got)]  # the file's own frames
        # The stretch holds the moment: the caller's tone is in it (it came in or
        # backchannelled), and so is the agent's.
        pcm = np.frombuffer(got, dtype="<i2").reshape(-1, 2)
        assert np.abs(pcm[:, 0]).max() > 4000 and np.abs(pcm[:, 1]).max() > 4000


def test_the_page_audio_cap_leaves_a_note(call: tuple[Path, Trial]) -> None:
    _, trial = call
    budget = AudioBudget(left=250_000)  # about 3.9 s of two 16 kHz channels: one stretch
    found, note = clips(trial, budget)
    assert note == ""
    assert [c.uri is not None for c in found] == [True, False, False]
    assert budget.skipped == 2 and "cap" in found[1].note
    page = render_html([trial])
    assert page.count("<audio") == 3  # the real 8 MB cap holds all three


def test_no_recording_says_so(tmp_path: Path) -> None:
    log = write_log(tmp_path / "remote01.jsonl", black_box_events(), black_box_header())
    trial = load_log(log)
    assert isinstance(trial, Trial)
    text = render_html([trial])
    assert "<audio" not in text and "no recording beside the log" in text
    assert len(read_page(text).strips) == 1


def test_a_broken_recording_is_one_line(tmp_path: Path) -> None:
    log = write_log(tmp_path / "remote01.jsonl", black_box_events(), black_box_header())
    log.with_suffix(".wav").write_bytes(b"RIFF\x00\x00\x00\x00WAVEjunk" + b"\x1b[2J" * 50)
    trial = load_log(log)
    assert isinstance(trial, Trial)
    text = render_html([trial])
    assert "<audio" not in text and "not a readable WAV" in text and "\x1b" not in text


def _with_lag(p99_s: float) -> list[Event]:
    events = black_box_events()
    end = events[-1]
    assert isinstance(end, EndEvent)
    lag = FrameLag(p50_s=0.001, p99_s=p99_s, max_s=p99_s, frames=500, late_frames=9)
    return [*events[:-1], EndEvent(t=end.t, reason=end.reason, frame_lag=lag)]


def test_a_lagged_call_is_flagged_beside_its_timings(tmp_path: Path) -> None:
    lagged = load_log(write_log(tmp_path / "a.jsonl", _with_lag(0.14), black_box_header()))
    kept_up = load_log(write_log(tmp_path / "b.jsonl", _with_lag(0.004), black_box_header()))
    assert isinstance(lagged, Trial) and isinstance(kept_up, Trial)
    text = render_html([lagged])
    assert "lagged call: frames were processed 140 ms late" in text
    assert text.index("lagged call") < text.index("Agent under test")
    assert "frames were processed" not in render_html([kept_up])


# ---- hostile logs --------------------------------------------------------------------------

HOSTILE = (
    "</script><script>alert(1)</script>",
    '<svg onload="alert(1)">',
    '"><img src=x onerror=alert(1)>',
    "\x1b[31mred\x1b]0;title\x07",
    "NaN",
    "-inf",
    "1e999",
    "javascript:alert(1)",
)


def _hostile_log(tmp_path: Path) -> Path:
    evil = " ".join(HOSTILE)
    huge = "A" * 400_000
    log = write_log(tmp_path / "x.jsonl", black_box_events(), black_box_header())
    lines = log.read_text(encoding="utf-8").splitlines()
    out: list[str] = []
    for line in lines:
        record = json.loads(line)
        for key in ("text", "spoken", "rendered", "original", "token", "heard", "detail"):
            if isinstance(record.get(key), str):
                record[key] = f"{evil} {huge if key == 'rendered' else ''}"
        for w in record.get("words") or []:
            w["word"] = HOSTILE[len(out) % len(HOSTILE)]
        out.append(json.dumps(record))
    # A newer cutin's event carrying markup (kept as unknown, never shown raw).
    out.append('{"t": 3.0, "type": "vendor.x", "turn": 0, "data": {"s": "<svg onload=1>"}}')
    path = tmp_path / "hostile.jsonl"
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    path.with_suffix(".wav").write_bytes(b"\x1b[31m<script>" * 100)
    return path


def test_a_real_nan_is_refused_in_one_line(tmp_path: Path) -> None:
    path = _hostile_log(tmp_path)
    with path.open("a", encoding="utf-8") as f:
        f.write('{"t": 3.0, "type": "vendor.x", "turn": 0, "data": {"v": NaN}}\n')
    with pytest.raises(LoadError, match="NaN is not a number") as caught:
        load_log(path)
    assert "\n" not in str(caught.value) and "\x1b" not in str(caught.value)


def test_hostile_logs_give_a_page_with_no_live_markup(tmp_path: Path) -> None:
    trial = load_log(_hostile_log(tmp_path))
    assert isinstance(trial, Trial)
    text = render_html([trial])
    page = read_page(text)
    assert "script" not in page.tags and "img" not in page.tags
    assert not [a for a in page.attributes if a[1].startswith("on")]
    # The log's text adds no markup: every tag and attribute name on the page is one the
    # same call's page has without the hostile text.
    clean_log = write_log(tmp_path / "clean.jsonl", black_box_events(), black_box_header())
    clean_trial = load_log(clean_log)
    assert isinstance(clean_trial, Trial)
    clean = read_page(render_html([clean_trial]))
    assert page.tags <= clean.tags, page.tags - clean.tags
    names = {(tag, k) for tag, k, _ in page.attributes}
    assert names <= {(tag, k) for tag, k, _ in clean.attributes}
    assert "\x1b" not in text and "\x07" not in text
    assert "&lt;/script&gt;" in text  # shown as text
    assert not [v for _, k, v in page.attributes if v.lower().startswith("javascript:")]
    assert network_references(text) == []
    assert page.strips and "nan" not in " ".join(f"{s.t0} {s.t1}" for s in page.strips).lower()
    for tag, name, value in page.attributes:
        if name in ("data-t", "data-t-end", "data-t0", "data-t1", "data-x", "data-start"):
            assert math.isfinite(float(value)), (tag, name, value)
    assert len(text) < 3_000_000  # a 400 kB text is not repeated into every title


def test_the_terminal_lanes_draw_the_same_call_from_the_same_layout(
    call: tuple[Path, Trial],
) -> None:
    from cutin_tui.widgets.lanes import LABEL, render_lanes

    _, trial = call
    tl = call_timeline(trial)
    cols = 200
    rows = render_lanes(tl, 0.0, 20.0, LABEL + cols).plain.split("\n")
    drawn = [i for i, ch in enumerate(rows[0][LABEL:]) if ch == "✕"]
    # The columns the terminal draws the cuts in hold the times the SVG puts them at.
    page = read_page(render_html([trial]))
    assert drawn == [column(t, 0.0, 20.0, cols) for t in page.of("cut")]
    assert len(drawn) == 2


def test_no_response_and_dead_air_are_drawn_where_they_were(tmp_path: Path) -> None:
    # The agent speaks 0.5–2.0 s, the caller 2.5–3.5 s, then nothing: the line reports a
    # no_response at 8.5 s (5 s after the caller's end); the call ends at 10 s.
    words = [
        WordTiming(word=w, start=0.5 + 0.5 * i, end=0.9 + 0.5 * i)
        for i, w in enumerate(["one", "two", "three"])
    ]
    events: list[Event] = [
        AgentTurnStart(t=0.5, turn=0),
        AgentWords(t=2.0, turn=0, words=words),
        AgentTurnEnd(t=2.0, turn=0, text="one two three", spoken="one two three"),
        UserTurn(t=2.5, turn=0, source="scenario", original="hi", rendered="hi", end_t=3.5),
        LineEvent(
            t=8.5,
            kind="no_response",
            data={"caller_end_t": 3.5, "after": "turn", "window_s": 5.0, "waited_s": 5.0},
        ),
        EndEvent(t=10.0, reason="hangup"),
    ]
    trial = load_log(write_log(tmp_path / "quiet.jsonl", events, black_box_header()))
    assert isinstance(trial, Trial)
    page = read_page(render_html([trial]))
    assert [round(t, 2) for t in page.of("no-response")] == [8.5]
    text = render_html([trial])
    assert 'class="dead-air" ' in text and 'data-t="3.500" data-t-end="10.000"' in text
    assert 'class="no-response" ' in text and 'data-t="3.500" data-t-end="8.500"' in text
