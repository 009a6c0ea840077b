"""The live call screen.

The call runs in its driver (its own thread in the app); this screen only
drains the driver's event queue on a timer (every ~30 ms, one batch per tick),
folds the batch into a :class:`~cutin_tui.views.call_view.CallView` and redraws the
widgets that changed. Keys become loop commands. Call keys are function keys
and ctrl/shift chords the input box does not use, so they work while typing.
"""

from __future__ import annotations

from textual import events, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Header, Input
from textual.worker import Worker, WorkerState

from controls.tendencies import Tendencies
from cutin_tui.calls.call_driver import CallDriver
from cutin_tui.screens.commands import PaletteEntry, ScreenActions
from cutin_tui.views.call_view import CallView, realized_by_dial
from cutin_tui.views.line_view import LineView, parse_audio_format
from cutin_tui.views.timeline_layout import LINE_LEGEND
from cutin_tui.widgets import (
    CountersPanel,
    DecisionLine,
    DialsBar,
    DialsPanel,
    DialsState,
    LineStatus,
    TimelineStrip,
    TranscriptView,
)
from cutin_tui.widgets.dials import DIALS, MEANING, SYMBOL, DialsView, dial_value
from sessions.call.commands import (
    BackchannelNow,
    CallerSoundNow,
    InterruptNow,
    SetAutos,
    SetTendencies,
    SubmitText,
)
from sessions.hostile.safe_files import clean_text, terminal_line
from sessions.lines.base import LineError
from sessions.log.models import ErrorEvent, Event, LineEvent

PUMP_S = 0.03
"""How often the screen drains the call's events (one redraw per batch)."""
DIAL_STEP = 0.1
LINE_TOASTS = 3
"""Distinct line errors that pop up as toasts in one call (the rest: transcript only)."""
COMPACT_BELOW = (110, 34)
"""Terminals narrower or shorter than this get the compact layout (e.g. 80×24)."""

_AUTOS = Binding.Group("autos", compact=True)
_PICK = Binding.Group("α β γ", compact=True)
_STEP = Binding.Group("step", compact=True)

PLACEHOLDER = "type what you say · Enter sends · F2 cuts the agent off with it"
ENDED_PLACEHOLDER = "call ended · ctrl+q leaves"


class CallScreen(Screen[None]):
    """A live call against the driver's agent."""

    COMMANDS = {ScreenActions}
    BINDINGS = [
        Binding("f2", "interrupt", "Cut in", id="call.interrupt",
                tooltip="Cut the agent at the current word and say the typed text "
                        "(or one of the scenario's interruption lines when the box is empty)"),
        Binding("f3", "backchannel", "Mm-hmm", id="call.backchannel",
                tooltip="Say a listener token (mm-hmm, yeah, ...) now without taking the floor"),
        Binding("ctrl+t", "caller_sound('vocal_tic')", "Tic", id="call.vocal_tic", show=False,
                tooltip="On a line: a vocal tic now (a short cough, no words); the agent should "
                        "neither stop nor answer (τ-Voice's S_VT)"),
        Binding("ctrl+o", "caller_sound('non_directed')", "Aside", id="call.side_talk",
                show=False,
                tooltip="On a line: side talk not meant for the agent, 12 dB quieter; the agent "
                        "should neither stop nor answer (τ-Voice's S_ND)"),
        Binding("ctrl+g", "dtmf", "DTMF", id="call.dtmf", show=False,
                tooltip="On a SIP line: send the typed digits (0-9 * # A-D) as keypad tones "
                        "(RFC 4733), e.g. to an IVR menu"),
        Binding("f4", "toggle_auto_interrupt", "Auto-interrupt", id="call.toggle_auto_interrupt",
                tooltip="Switch automatic interruptions at short pauses on or off", group=_AUTOS),
        Binding("f5", "toggle_auto_backchannel", "Auto-backchannel",
                id="call.toggle_auto_backchannel", group=_AUTOS,
                tooltip="Switch automatic backchannels at short pauses on or off"),
        Binding("f12", "toggle_adapt", "Adapt", id="call.toggle_adapt", group=_AUTOS,
                tooltip="Switch --adapt on or off: the rule's thresholds calibrated to this "
                        "agent's rhythm (on the turns heard so far), or the paper's constants"),
        Binding("f6", "select_dial('alpha')", "α", id="call.select_alpha", group=_PICK,
                tooltip="Select α (disfluency of what you type) for ctrl+↑/↓"),
        Binding("f7", "select_dial('beta')", "β", id="call.select_beta", group=_PICK,
                tooltip="Select β (interruption tendency) for ctrl+↑/↓"),
        Binding("f8", "select_dial('gamma')", "γ", id="call.select_gamma", group=_PICK,
                tooltip="Select γ (backchannel tendency) for ctrl+↑/↓"),
        Binding("ctrl+up,shift+up", f"step_dial({DIAL_STEP})", "Dial +", id="call.dial_up",
                key_display="^↑", group=_STEP, tooltip=f"Raise the selected dial by {DIAL_STEP}"),
        Binding("ctrl+down,shift+down", f"step_dial({-DIAL_STEP})", "Dial −",
                id="call.dial_down", key_display="^↓", group=_STEP,
                tooltip=f"Lower the selected dial by {DIAL_STEP}"),
        Binding("f9", "suggest", "Suggest", id="call.suggest",
                tooltip="Ask the LLM user simulator for a reply (goal and persona from the "
                        "scenario); it lands in the box to edit or send"),
        Binding("f11", "toggle_talk", "Talk", id="call.talk",
                tooltip="Push-to-talk (--input mic --push-to-talk): press to start speaking "
                        "into the microphone, press again when done"),
        Binding("f10", "end_call", "Hang up", id="call.end",
                tooltip="End the call; the screen stays so you can read it (ctrl+q leaves)"),
        Binding("escape", "leave", "Back", id="call.leave",
                tooltip="Leave the ended call's screen"),
    ]  # fmt: skip
    PALETTE_TITLES = {
        "call.interrupt": "Interrupt the agent now",
        "call.backchannel": "Backchannel now (mm-hmm)",
        "call.vocal_tic": "Vocal tic now (a cough; a line only)",
        "call.side_talk": "Side talk now (not meant for the agent; a line only)",
        "call.dtmf": "Send the typed digits as DTMF (a SIP line only)",
        "call.toggle_auto_interrupt": "Toggle auto-interrupt",
        "call.toggle_auto_backchannel": "Toggle auto-backchannel",
        "call.toggle_adapt": "Toggle adapt (thresholds calibrated to the agent's rhythm)",
        "call.select_alpha": "Select dial α (disfluency)",
        "call.select_beta": "Select dial β (interruption)",
        "call.select_gamma": "Select dial γ (backchannel)",
        "call.dial_up": "Raise the selected dial",
        "call.dial_down": "Lower the selected dial",
        "call.suggest": "Suggest a reply (LLM user simulator)",
        "call.talk": "Push-to-talk: start/stop speaking into the microphone",
        "call.end": "Hang up (end the call)",
        "call.leave": "Leave the call screen",
    }
    """Palette names of the bindings above (every call.* binding has one)."""

    def __init__(self, driver: CallDriver, *, leave_exits: bool = True) -> None:
        super().__init__()
        self.driver = driver
        self.leave_exits = leave_exits
        self.view = CallView()
        config = driver.config
        self.tendencies: Tendencies = config.tendencies
        self.auto_interrupt = config.auto_interrupt
        self.auto_backchannel = config.auto_backchannel
        adapter = driver.loop.adapter
        self.adapt: bool | None = None if adapter is None else adapter.enabled
        """None: this call offers no adapt (its loop was built without an adapter)."""
        self.selected = "beta"
        self._ended_shown = False
        self._toasted: set[str] = set()
        line = driver.line
        if line is not None:
            self.view.line = LineView(
                name=line.name,
                target=terminal_line(line.target),
                audio=parse_audio_format(line.audio_format),
                state=str(line.state),
            )

    # ---- layout -------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Header()
        yield DialsBar(self._dials_state(), id="dials-bar")
        yield LineStatus(id="line-status")
        with Horizontal(id="call-top"):
            yield TranscriptView(id="transcript")
            yield DialsPanel(self._dials_state(), id="dials")
        yield TimelineStrip(id="timeline")
        yield DecisionLine(id="decision")
        yield CountersPanel(id="counters")
        yield Input(placeholder=PLACEHOLDER, id="say")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        scenario = self.driver.scenario
        self.title = "cutin · call"
        self.sub_title = scenario.name
        self.view.note(f"{scenario.title}. You are the caller. Goal: {scenario.user.goal}")
        self.view.note(
            "Type and press Enter to speak. F2 interrupts, F3 backchannels, "
            "F4/F5 switch the autos, F12 adapt, F6–F8 pick α/β/γ and ctrl+↑/↓ step it."
        )
        if self.view.line is not None:
            self.query_one(TimelineStrip).border_subtitle = LINE_LEGEND
            self.view.note(
                "The agent is on a line and decides for itself when to stop: an interruption "
                "makes you start speaking over it; ▌cut marks your onset, ■stop where its "
                "audio actually stopped."
            )
        self.query_one(Input).focus()
        self.driver.start()
        self.pump()
        self.set_interval(PUMP_S, self.pump)

    def on_unmount(self) -> None:
        self.driver.stop()

    # ---- events from the call ---------------------------------------------------

    def pump(self) -> None:
        """Drain the call's events and redraw what they changed."""
        events = self.driver.drain()
        now = self.driver.now()
        view = self.view
        if events:
            view.apply(events)
        changed = view.take_changed()
        if changed:
            self.query_one(TranscriptView).update_entries(view.entries, changed)
        if events:
            self.query_one(DecisionLine).show(view.decision)
            self.query_one(CountersPanel).show(view.counts)
            self._toast_line_errors(events)
        if view.line is not None and (events or view.ended is not None):
            self._follow_line_state()
            self.query_one(LineStatus).show(view.line)
        self.query_one(TimelineStrip).show(view.timeline, now, changed=bool(events))
        self._redraw_dials(now)
        if view.ended is not None and not self._ended_shown:
            self._show_ended()

    def _follow_line_state(self) -> None:
        """Once the call is over no more line events come (the loop has stopped reading
        them), so the line's own state says how it ended: closed when cutin hung up."""
        shown, line = self.view.line, self.driver.line
        if shown is None or line is None or self.view.ended is None:
            return
        state = str(line.state)
        if shown.state in ("connecting", "open") and state in ("closed", "failed"):
            shown.state = state

    def _toast_line_errors(self, events: list[Event]) -> None:
        """A line's error or failure also pops up (once per message, a few per call; a
        chatty agent's errors stay in the transcript and the status line's count)."""
        for event in events:
            if isinstance(event, LineEvent) and event.kind == "failed":
                failed = True  # the one that ends the call always pops up
            elif isinstance(event, ErrorEvent) and event.where == "line":
                failed = False
            else:
                continue
            text = event.detail if isinstance(event, LineEvent) else event.message
            if text in self._toasted or (not failed and len(self._toasted) > LINE_TOASTS):
                continue
            self._toasted.add(text)
            message = clean_text(text)
            if not failed and len(self._toasted) > LINE_TOASTS:
                message = "more errors from the line: see the transcript"
            self.notify(message, title="line to the agent", severity="error", markup=False)

    def _show_ended(self) -> None:
        self._ended_shown = True
        path = self.driver.log_path
        if path is not None:
            self.view.note(f"log: {path}", "end")
            self.query_one(TranscriptView).update_entries(
                self.view.entries, self.view.take_changed()
            )
        box = self.query_one(Input)
        box.placeholder = ENDED_PLACEHOLDER
        self.refresh_bindings()

    def _dials_state(self, now: float = 0.0) -> DialsState:
        return DialsState(
            self.tendencies,
            self.selected,
            self.auto_interrupt,
            self.auto_backchannel,
            self.view.status(now),
            realized_by_dial(self.view),
            adapt=self.adapt,
            adapted=self.view.adapted,
        )

    # ---- the tester's input -----------------------------------------------------

    def on_input_submitted(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        event.input.clear()
        if not text or self.view.ended is not None:
            return
        if not self.view.floor_free(self.driver.now()):
            self.view.note_queued(text)
        self.driver.submit(SubmitText(text))
        self.pump()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        ended = self.view.ended is not None
        if action == "leave":
            return ended
        if action == "toggle_talk":
            return self.driver.push_to_talk and not ended
        if action == "toggle_adapt":
            return self.adapt is not None and not ended
        if action == "suggest":
            # Only offered (and shown in the footer) when an LLM endpoint is configured.
            return self.driver.simulator is not None and not ended
        if action in ("interrupt", "backchannel", "end_call"):
            return None if ended else True  # shown greyed out once the call is over
        return True

    def action_interrupt(self) -> None:
        """Cut the agent now with the typed text (or a scenario line)."""
        box = self.query_one(Input)
        text = box.value.strip()
        if not self.view.agent_speaking and not text:
            self.notify("The agent is not speaking: nothing to interrupt.", timeout=3)
            return
        box.clear()
        self.driver.submit(InterruptNow(text))

    def action_backchannel(self) -> None:
        """Say a backchannel token now."""
        if not self.view.agent_speaking:
            self.notify("The agent is not speaking: a backchannel needs a speaker.", timeout=3)
            return
        self.driver.submit(BackchannelNow())

    def action_caller_sound(self, kind: str) -> None:
        """A vocal tic or side talk now (a call to a black-box agent on a line)."""
        if self.view.line is None:
            self.notify("Vocal tics and side talk are measured on a line only.", timeout=3)
            return
        self.driver.submit(CallerSoundNow(kind))

    def action_dtmf(self) -> None:
        """Send the typed digits as DTMF on a line that carries it (SIP)."""
        line = self.driver.line
        send = getattr(line, "send_dtmf", None)
        if send is None:
            self.notify("DTMF needs a SIP line (--agent sip:USER@HOST).", timeout=4)
            return
        box = self.query_one(Input)
        try:
            send(box.value)
        except LineError as exc:
            self.notify(str(exc), timeout=4)
            return
        box.clear()

    def action_toggle_talk(self) -> None:
        """Push-to-talk: the microphone's words go to the call between two presses."""
        if not self.driver.push_to_talk:
            self.notify("Push-to-talk needs --input mic --push-to-talk.", timeout=4)
            return
        talking = self.driver.toggle_talk()
        self.notify("Talking — press F11 when done." if talking else "Sent.", timeout=2)

    class Suggested(Message):
        """A suggested caller reply arrived from the simulator worker."""

        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    def action_suggest(self) -> None:
        """Fill the box with the simulator's suggestion (runs off the UI thread)."""
        if self.driver.simulator is None:
            self.notify(
                "Suggestions need an LLM endpoint: start with --suggest and --base-url URL "
                "(or OPENAI_API_KEY).",
                timeout=5,
            )
            return
        self.notify("Asking the user simulator…", timeout=2)
        self._suggest()

    @work(thread=True, exclusive=True, exit_on_error=False, group="suggest")
    def _suggest(self) -> None:
        self.post_message(self.Suggested(self.driver.suggest_reply()))

    def on_call_screen_suggested(self, message: Suggested) -> None:
        box = self.query_one(Input)
        box.value = message.text
        box.cursor_position = len(message.text)
        box.focus()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """One place for background failures: a notification, never a crash."""
        if event.state is WorkerState.ERROR and event.worker.error is not None:
            self.notify(str(event.worker.error), title="suggestion failed", severity="error")

    def action_toggle_auto_interrupt(self) -> None:
        self.auto_interrupt = not self.auto_interrupt
        self.driver.submit(SetAutos(interrupt=self.auto_interrupt))
        self._redraw_dials()

    def action_toggle_auto_backchannel(self) -> None:
        self.auto_backchannel = not self.auto_backchannel
        self.driver.submit(SetAutos(backchannel=self.auto_backchannel))
        self._redraw_dials()

    def action_toggle_adapt(self) -> None:
        """Thresholds calibrated to the agent's rhythm, or the paper's constants."""
        self.adapt = not self.adapt
        self.driver.submit(SetAutos(adapt=self.adapt))
        self._redraw_dials()

    def action_select_dial(self, name: str) -> None:
        if name in DIALS:
            self.selected = name
            self._redraw_dials()

    def action_step_dial(self, delta: float) -> None:
        value = dial_value(self.tendencies, self.selected)
        self.action_set_dial(self.selected, value + delta)

    def action_set_dial(self, name: str, value: float) -> None:
        """Set one dial (clamped to 0..1, two decimals) and send it to the call."""
        if name not in DIALS:
            return
        value = round(min(1.0, max(0.0, value)), 2)
        values = {d: dial_value(self.tendencies, d) for d in DIALS}
        values[name] = value
        self.tendencies = Tendencies(values["alpha"], values["beta"], values["gamma"])
        self.selected = name
        self.driver.submit(SetTendencies(self.tendencies))
        self._redraw_dials()

    def action_end_call(self) -> None:
        """Hang up; the screen stays to be read."""
        self.driver.stop("hangup")
        self.pump()

    def action_leave(self) -> None:
        self.driver.stop("hangup")
        if self.leave_exits:
            self.app.exit(0)
        else:
            self.app.pop_screen()

    def _redraw_dials(self, now: float | None = None) -> None:
        state = self._dials_state(self.driver.now() if now is None else now)
        for panel in self.query(DialsView):  # the panel and, on small terminals, the bar
            panel.show(state)

    def on_resize(self, event: events.Resize) -> None:
        compact = event.size.width < COMPACT_BELOW[0] or event.size.height < COMPACT_BELOW[1]
        self.set_class(compact, "-compact")
        self.query_one(Input).compact = compact
        # At 80 columns every call key fits only without the palette hint (ctrl+p still works).
        self.query_one(Footer).show_command_palette = not compact

    # ---- command palette --------------------------------------------------------

    def palette_entries(self) -> list[PaletteEntry]:
        """Every call action by name (the palette's source)."""
        out: list[PaletteEntry] = []
        for binding in self.BINDINGS:
            if isinstance(binding, Binding) and binding.id in self.PALETTE_TITLES:
                key = binding.key_display or binding.key.split(",")[0].upper()
                title = self.PALETTE_TITLES[binding.id]
                out.append((f"{title} ({key})", binding.tooltip, binding.action))
        for name in DIALS:
            for tenth in range(11):
                value = tenth / 10
                out.append(
                    (
                        f"Set {SYMBOL[name]} ({MEANING[name]}) to {value:.1f}",
                        f"Change the {MEANING[name]} tendency for the rest of the call",
                        f"set_dial('{name}', {value})",
                    )
                )
        return out
