"""The overlap gallery: each type explained, drawn on two lanes, and playable live.

Left: the types, grouped (overlaps, typical disfluencies, stuttering-like ones).
Right: the selected type's explanation, how it is written, the two-lane drawing of
its example and what happened. ``space`` plays the example live through the call
loop (text clock; sound when espeak-ng and an audio device are there), drawing the
lanes as it goes and showing the rule's checks at each short pause.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

from rich.markup import escape
from rich.text import Text
from textual import on
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Footer, Header, OptionList, Static
from textual.widgets.option_list import Option

from cutin_tui.widgets.lanes import LEGEND, LanesView
from replay.gallery.expect import check_expectations
from replay.gallery.explain import (
    deciding_opportunity,
    decision_headline,
    decision_lines,
    describe_action,
    marked_tokens,
    what_happened,
    window_for,
)
from replay.gallery.live import LivePlay, LiveSound
from replay.gallery.loader import Gallery
from replay.gallery.model import GalleryEntry
from replay.gallery.runner import GalleryRun, run_entry, timeline_builder
from replay.gallery.timeline import Timeline, TimelineBuilder, follow_window
from sessions.log.models import EndEvent, Event, Opportunity

GROUPS = (
    ("overlap", "OVERLAPS — two voices at once"),
    ("typical", "DISFLUENCIES — typical"),
    ("stuttering", "STUTTERING-LIKE — not typical"),
)
INSERTION_STYLE = {
    "filler": "bold black on #f2c572",
    "repetition": "bold black on #8fc1f0",
    "pause": "bold black on #c8c8c8",
    "written": "bold black on #e6a6d3",
}


class LiveEvent(Message):
    """A call-loop event from the play thread, handed to the screen."""

    def __init__(self, event: Event, play: int) -> None:
        super().__init__()
        self.event = event
        self.play = play
        """Which play it belongs to (a stopped play's late events are ignored)."""


class PlayProblem(Message):
    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text


class OverlapsScreen(Screen[None]):
    """The gallery. ``speed`` scales the live clock; with ``sound`` the first play at
    speed 1 opens espeak-ng and the audio device (falling back to the text clock)."""

    DEFAULT_CSS = """
    OverlapsScreen #gallery-body { height: 1fr; }
    OverlapsScreen #gallery-list { width: 38; height: 1fr; border: round $primary-darken-2; }
    OverlapsScreen #gallery-detail { width: 1fr; height: 1fr; padding: 0 1; }
    OverlapsScreen #entry-title { text-style: bold; color: $text; margin-top: 1; }
    OverlapsScreen #entry-badges { color: $text-muted; }
    OverlapsScreen #entry-explanation { margin: 1 0 0 0; }
    OverlapsScreen #entry-written { margin: 1 0 0 0; }
    OverlapsScreen #entry-lanes { border: round $primary-darken-2; height: 6; margin-top: 1; }
    OverlapsScreen #entry-happened { color: $text-muted; }
    OverlapsScreen #entry-checks { border: round $primary-darken-3; height: auto; min-height: 3; }
    OverlapsScreen #entry-status { color: $text-muted; margin-bottom: 1; }
    """

    BINDINGS = [
        Binding("space", "play", "Play", id="overlaps.play", tooltip="Play the example live"),
        Binding("s", "stop", "Stop", id="overlaps.stop", tooltip="Stop playing"),
        Binding(
            "e",
            "export",
            "Export handout",
            id="overlaps.export",
            tooltip="Write every type with its timeline to an HTML handout",
        ),
        Binding("escape", "back", "Back", id="overlaps.back", tooltip="Leave the gallery"),
    ]

    def __init__(
        self,
        gallery: Gallery,
        *,
        speed: float = 1.0,
        sound: bool = False,
        export_path: Path | None = None,
    ) -> None:
        super().__init__()
        self.gallery = gallery
        self.speed = speed
        self.voice: LiveSound | None = None
        self._sound_wanted = sound
        if not sound:
            self.sound_note = "text clock only"
        elif speed != 1.0:
            self.sound_note = "text clock only (sound plays at speed 1)"
        else:
            self.sound_note = "sound: espeak-ng if an audio device opens on the first play"
        self.export_path = export_path or Path("cutin-overlaps-handout.html")
        self._runs: dict[str, GalleryRun] = {}
        self._failures: dict[str, list[str]] = {}
        self._current: GalleryEntry | None = None
        self._live: LivePlay | None = None
        self._builder: TimelineBuilder | None = None
        self._last_decision: Opportunity | None = None
        self._ticker: Timer | None = None
        self._window = (0.0, 1.0)
        self._play = 0
        self._stopped = False
        self.last_play_events: list[Event] = []
        """Events of the most recent live play (for tests and the status line)."""

    # ---- layout ---------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="gallery-body"):
            yield OptionList(*self._options(), id="gallery-list")
            with VerticalScroll(id="gallery-detail"):
                yield Static(id="entry-title")
                yield Static(id="entry-badges")
                yield Static(id="entry-explanation")
                yield Static(id="entry-written")
                yield LanesView(id="entry-lanes")
                yield Static(id="entry-happened")
                yield Static(id="entry-checks")
                yield Static(id="entry-status")
        yield Footer()

    def _options(self) -> list[Option | None]:
        out: list[Option | None] = []
        for key, heading in GROUPS:
            mine = [e for e in self.gallery.entries if e.group == key]
            if not mine:
                continue
            if out:
                out.append(None)
            out.append(Option(Text(heading, style="bold"), id=f"heading-{key}", disabled=True))
            out.extend(Option(f"  {e.title}", id=e.id) for e in mine)
        return out

    def on_mount(self) -> None:
        self.sub_title = "overlap and disfluency gallery"
        self.query_one("#entry-lanes", LanesView).border_subtitle = LEGEND
        self.query_one("#entry-checks", Static).border_title = "last decision"
        menu = self.query_one("#gallery-list", OptionList)
        menu.focus()
        for index in range(menu.option_count):
            if not menu.get_option_at_index(index).disabled:
                menu.highlighted = index
                break
        for problem in self.gallery.errors:
            self.notify(problem, title="gallery file not loaded", severity="error", timeout=15)

    # ---- selection ------------------------------------------------------------

    @on(OptionList.OptionHighlighted, "#gallery-list")
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        entry_id = event.option.id
        if entry_id is None or entry_id.startswith("heading-"):
            return
        self.show_entry(self.gallery.get(entry_id))

    @on(OptionList.OptionSelected, "#gallery-list")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        self.action_play()

    def run_of(self, entry: GalleryEntry) -> GalleryRun:
        """The example's virtual-clock run (computed once)."""
        if entry.id not in self._runs:
            run = run_entry(entry)
            self._runs[entry.id] = run
            self._failures[entry.id] = check_expectations(entry, run)
        return self._runs[entry.id]

    def show_entry(self, entry: GalleryEntry) -> None:
        self._stop_live()
        self._play += 1  # whatever the last play still reports is not for this entry
        self._builder = None
        self._current = entry
        try:
            run = self.run_of(entry)
        except Exception as exc:  # a clinician's file can fail at run time: say where
            self.query_one("#entry-title", Static).update(escape(entry.title))
            self.query_one("#entry-status", Static).update(
                Text(f"This example cannot run: {exc}", style="bold red")
            )
            return
        self.query_one("#entry-title", Static).update(escape(entry.title))
        self.query_one("#entry-badges", Static).update(self._badges(entry))
        self.query_one("#entry-explanation", Static).update(escape(entry.explanation))
        self.query_one("#entry-written", Static).update(self._written(entry, run))
        self._draw(run.timeline, window_for(entry, run))
        self.query_one("#entry-happened", Static).update(self._happened(entry, run))
        self._show_checks(deciding_opportunity(run), "the decision that acted")
        self._status("ready")

    def _badges(self, entry: GalleryEntry) -> Text:
        text = Text()
        if entry.stuttering_like:
            text.append(" stuttering-like, not typical ", style="bold black on #e0a040")
            text.append("  ")
        text.append(entry.made_by_text, style="italic")
        if entry.also_called:
            text.append(f"  ·  also called: {entry.also_called}")
        failures = self._failures.get(entry.id)
        if failures:
            text.append(
                "\n⚠ this example did not show what it names: " + "; ".join(failures),
                style="bold red",
            )
        return text

    def _written(self, entry: GalleryEntry, run: GalleryRun) -> Text:
        text = Text()
        text.append("How it is written: ", style="bold")
        text.append(entry.how_written)
        if entry.disfluency is not None:
            text.append("\nMeant:      ", style="bold")
            text.append(f"“{entry.disfluency.original}”")
            text.append("\nTranscript: ", style="bold")
            text.append("“")
            for i, (tok, kind) in enumerate(marked_tokens(entry, run)):
                if i:
                    text.append(" ")
                text.append(tok, style=INSERTION_STYLE.get(kind or "", ""))
            text.append("”")
        return text

    def _happened(self, entry: GalleryEntry, run: GalleryRun) -> Text:
        lines = what_happened(entry, run)
        lines += [describe_action(a) for a in run.actions]
        return Text("\n".join(lines))

    def _draw(
        self, timeline: Timeline, window: tuple[float, float], until: float | None = None
    ) -> None:
        lanes = self.query_one("#entry-lanes", LanesView)
        lanes.show(timeline, window, until)
        t0, t1 = window
        lanes.border_title = f"timeline {t0:.1f}–{t1:.1f} s"

    def _status(self, state: str) -> None:
        keys = "space play · s stop · e export handout · esc back"
        self.query_one("#entry-status", Static).update(
            Text(f"{state} · speed {self.speed:g}× · {self.sound_note}\n{keys}")
        )

    def _show_checks(self, op: Opportunity | None, title: str = "last decision") -> None:
        box = self.query_one("#entry-checks", Static)
        box.border_title = title
        if op is None:
            box.update(
                Text(
                    "cutin's rule does not act in this example (it checks every short pause; "
                    "play to watch it).",
                    style="italic",
                )
            )
            return
        text = Text(decision_headline(op), style="bold")
        for line in decision_lines(op):
            text.append("\n  ")
            text.append(f"{line.rule:<12}", style="dim")
            text.append(line.plain(), style="green" if line.passed else "red")
        box.update(text)

    # ---- live play -------------------------------------------------------------

    def action_play(self) -> None:
        entry = self._current
        if entry is None:
            return
        self._stop_live()
        self._play += 1
        self._stopped = False
        self._open_sound()
        run = self.run_of(entry)
        self._builder = timeline_builder(run.config)
        self._window = window_for(entry, run)
        self.last_play_events = []
        self._last_decision = None
        self._show_checks(None, "last decision")
        self._live = LivePlay(
            run,
            on_event=partial(self._from_play_thread, self._play),
            on_error=self._problem_from_play_thread,
            speed=self.speed,
            voice=self.voice,
        )
        self._live.start()
        self._ticker = self.set_interval(1 / 20, self._tick)
        self._status("playing")

    def _open_sound(self) -> None:
        if not self._sound_wanted or self.speed != 1.0:
            return
        self._sound_wanted = False  # one try: a missing device is not retried every play
        from replay.gallery.sound import open_voice

        self.voice, self.sound_note = open_voice()

    def _from_play_thread(self, play: int, event: Event) -> None:
        self.post_message(LiveEvent(event, play))

    def _problem_from_play_thread(self, text: str) -> None:
        self.post_message(PlayProblem(text))

    def _tick(self) -> None:
        live, builder = self._live, self._builder
        if live is None or builder is None:
            return
        now = live.now()
        self._draw(builder.timeline(), follow_window(self._window, now), until=now)
        if live.finished.is_set():
            self._finish_play()
        else:
            self._status(f"playing {now:5.1f} s")

    @on(LiveEvent)
    def _live_event(self, message: LiveEvent) -> None:
        if self._builder is None or message.play != self._play:
            return
        ev = message.event
        self.last_play_events.append(ev)
        self._builder.feed(ev)
        if isinstance(ev, Opportunity) and ev.mode == "auto":
            self._last_decision = ev
            self._show_checks(ev, "last decision (live)")
        if isinstance(ev, EndEvent):
            self._finish_play()

    @on(PlayProblem)
    def _play_problem(self, message: PlayProblem) -> None:
        self.notify(message.text, severity="warning")

    def _finish_play(self) -> None:
        if self._ticker is not None:
            self._ticker.stop()
            self._ticker = None
        if self._builder is not None:
            self._draw(self._builder.timeline(), self._window)
        acted = next(
            (
                e
                for e in self.last_play_events
                if isinstance(e, Opportunity) and e.executed and e.decision != "NOTHING"
            ),
            None,
        )
        if acted is not None:
            self._show_checks(acted, "the decision that acted")
        self._status("stopped" if self._stopped else "played")

    def _stop_live(self) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None
        if self._ticker is not None:
            self._ticker.stop()
            self._ticker = None

    def action_stop(self) -> None:
        if self._live is not None and self._live.playing:
            self._stopped = True
            self._stop_live()
            self._status("stopped")

    @property
    def playing(self) -> bool:
        return self._live is not None and self._live.playing

    # ---- export and leaving -------------------------------------------------------

    def action_export(self) -> None:
        from replay.report.handout import render_handout
        from sessions.version import version_string

        runs = [self.run_of(e) for e in self.gallery.entries]
        html = render_handout(runs, failures=self._failures, version=version_string())
        try:
            self.export_path.write_text(html, encoding="utf-8")
        except OSError as exc:
            self.notify(str(exc), title="handout not written", severity="error")
            return
        self.notify(f"handout written: {self.export_path.resolve()}", title="exported")

    def action_back(self) -> None:
        self._stop_live()
        if len(self.app.screen_stack) > 2:
            self.app.pop_screen()
        else:
            self.app.exit()

    def on_unmount(self) -> None:
        self._stop_live()
        if self.voice is not None:
            self.voice.shutdown()


class OverlapsApp(App[int]):
    """`cutin overlaps` on its own: just the gallery."""

    TITLE = "cutin"
    BINDINGS = [Binding("ctrl+q", "quit", "Quit", id="app.quit", priority=True)]

    def __init__(self, screen: OverlapsScreen) -> None:
        super().__init__()
        self._gallery_screen = screen

    def on_mount(self) -> None:
        self.push_screen(self._gallery_screen)


def open_overlaps_screen(app: App[object]) -> None:
    """Open the gallery on top of the current screen (from the home screen).

    Sound as with `cutin overlaps`: espeak-ng on the first play when a device opens."""
    from replay.gallery import load_gallery

    app.push_screen(OverlapsScreen(load_gallery(), sound=True))
