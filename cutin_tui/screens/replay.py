"""The replay screen: calls and trials on the left, the turn table on the right.

Loading runs in a thread worker that posts each loaded path's trials as they
come, so the list fills while the rest load; a file that cannot be loaded is
named, with the reason, in a panel under the list (and a notification). `cutin
replay` loads its paths up front until one loads (:func:`preflight`), so that
when none can be it says why on stderr without opening the screen; what it loaded
is handed over, not loaded twice. Every worker's failure goes through one handler
(:meth:`ReplayScreen.on_worker_state_changed`).
"""

from __future__ import annotations

import datetime as dt
import gc
import os
import re
import threading
from collections.abc import Sequence
from pathlib import Path

from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Header, OptionList, Static
from textual.worker import Worker, WorkerState

from cutin_tui.screens.replay_audio import RecordingClip, play_clip, turn_clip
from cutin_tui.screens.replay_commands import ReplayCommands
from cutin_tui.views.replay_nav import Position, Predicate, find, is_cut, is_failure
from cutin_tui.views.turn_layout import TurnTable, format_time, judge_groups
from cutin_tui.widgets.trial_list import TrialList
from cutin_tui.widgets.turn_view import TurnHeader, TurnView
from replay.load import load_one
from replay.model import Batch, JudgeVerdict, Trial
from replay.plural import plural
from sessions.hostile.safe_files import clean_text, is_dir, shown_name, terminal_line

LOAD_GROUP = "replay-load"
STYLES = Path(__file__).resolve().parents[1] / "styles" / "replay.tcss"
"""Absolute, so that subclasses defined elsewhere (tests) find it too."""
RECENT_DEFAULT = 50


class TrialsLoaded(Message):
    """One path's trials, from the loader thread."""

    def __init__(self, path: Path, trials: list[Trial], warnings: list[str]) -> None:
        super().__init__()
        self.path = path
        self.trials = trials
        self.warnings = warnings


class TrialPreview(Message):
    """The start of a long log, from the loader thread, to paint while the rest loads."""

    def __init__(self, path: Path, trial: Trial) -> None:
        super().__init__()
        self.path = path
        self.trial = trial


class LoadProblem(Message):
    """A path that could not be loaded; ``text`` names it and says why."""

    def __init__(self, path: Path, text: str) -> None:
        super().__init__()
        self.path = path
        self.text = text


class LoadFinished(Message):
    """The loader went through every path (``looked_in``: the sessions folder, if listed)."""

    def __init__(self, count: int, looked_in: Path | None) -> None:
        super().__init__()
        self.count = count
        self.looked_in = looked_in


class LoadProblems(Static):
    """The paths that could not be loaded, each with its reason, under the list; shown
    only when there is one (a notification alone goes away before it is read)."""

    DEFAULT_CSS = """
    LoadProblems {
        display: none;
        height: auto;
        max-height: 50%;
        overflow-y: auto;
        border: round $error;
        border-title-color: $error;
        color: $text-muted;
        padding: 0 1;
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, markup=False)  # names and reasons come from files
        self.problems: list[str] = []
        self._shown = Text()

    def add(self, text: str, path: Path | None = None) -> None:
        """Name the file (its last part: the panel is narrow) and say why, without the
        list of what was expected (the notification has the whole text)."""
        self.problems.append(text)
        name, reason = _split_problem(text, path)
        if self.problems[1:]:
            self._shown.append("\n")
        self._shown.append("✗ ", "bold red")
        self._shown.append(name, "bold")
        self._shown.append(f"\n  {reason}")
        self.border_title = f"could not load {len(self.problems)}"
        self.update(self._shown)
        self.display = True

    def clear(self) -> None:
        self.problems = []
        self._shown = Text()
        self.update("")
        self.display = False


def _split_problem(text: str, path: Path | None) -> tuple[str, str]:
    """``/x/y.json:1:3: why; expected …`` → (``y.json:1:3``, ``why``)."""
    place, rest = "", text
    if path is not None and text.startswith(str(path)):
        place, rest = str(path), text[len(str(path)) :]
    elif ": " in text:
        place, rest = text.split(": ", 1)
        rest = ": " + rest
    where = re.match(r"(?::\d+)*", rest)
    line = where.group(0) if where else ""
    reason = rest[len(line) :].removeprefix(":").strip().split("; expected ", 1)[0]
    name = Path(place).name or place
    return name + line, reason or "cannot be loaded"


class RulesJudged(Message):
    def __init__(self, trial: Trial, verdicts: list[JudgeVerdict]) -> None:
        super().__init__()
        self.trial = trial
        self.verdicts = verdicts


def _b(key: str, action: str, label: str, tip: str, *, show: bool = True) -> Binding:
    name = action.split("(")[0]
    arg = action[len(name) :].strip("()'\"")
    ident = f"replay.{name}" + (f".{arg}" if arg else "")
    return Binding(key, action, label, show=show, id=ident, tooltip=tip)


class ReplayScreen(Screen[None]):
    """Replay logged calls and τ2 trials turn by turn."""

    CSS_PATH = STYLES
    TITLE = "cutin replay"
    COMMANDS = {ReplayCommands}
    BINDINGS = [
        _b("f", "filter_failures", "Failures", "List only failed calls and trials (again: all)"),
        _b("n", "next_failure", "Next fail", "Next failed turn, then the next failed trial"),
        _b("N", "previous_failure", "Prev fail", "Previous failed turn or trial", show=False),
        _b("c", "next_cut", "Next cut", "Next agent turn the tester cut"),
        _b("C", "previous_cut", "Prev cut", "Previous cut", show=False),
        _b("j", "turn(1)", "Next turn", "Focus the next turn"),
        _b("k", "turn(-1)", "Prev turn", "Focus the previous turn", show=False),
        _b("space", "play_turn", "Play", "Play the focused turn from the call's recording"),
        _b("v", "toggle_columns", "Columns", "Show or hide every judge column"),
        _b("1", "toggle_judge('rules')", "Rules", "Show or hide the rule judge", show=False),
        _b("2", "toggle_judge('llm')", "LLM", "Show or hide the LLM judge", show=False),
        _b("3", "toggle_judge('tau2')", "τ2", "Show or hide τ2 reward/review", show=False),
        _b("r", "write_report", "Report", "Write an HTML report of the listed calls"),
        _b("q", "close", "Back", "Leave the replay"),
        _b("escape", "close", "Back", "Leave the replay", show=False),
    ]

    def __init__(
        self,
        paths: Sequence[Path | str] = (),
        *,
        sessions_dir: Path | None = None,
        recent: int = RECENT_DEFAULT,
        reports_dir: Path | None = None,
        preloaded: Sequence[Batch | str] = (),
    ) -> None:
        super().__init__()
        self.paths = [Path(p) for p in paths]
        self.preloaded = list(preloaded)
        """Results of the first paths, already loaded (:func:`preflight`)."""
        self.sessions_dir = sessions_dir
        self.recent = recent
        self.reports_dir = reports_dir
        self.trials: list[Trial] = []
        self.problems: list[str] = []
        self.hidden: set[str] = set()
        self.loading_done = False
        self._tables: dict[int, TurnTable] = {}
        self._pending_row: int | None = None
        self._preview: Trial | None = None
        """The trial shown while the first long log loads (not listed; replaced)."""
        self._stop_audio = threading.Event()
        self.playback: Worker[None] | None = None
        """The last turn played (its worker)."""

    # ------------------------------------------------------------ layout
    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="replay-body"):
            with Vertical(id="trial-pane"):
                yield TrialList(id="trials")
                yield LoadProblems(id="load-problems")
            view = TurnView(id="turns")
            with Vertical(id="turn-pane"):
                yield TurnHeader(view, id="turn-header")
                yield view
        yield Footer()

    @property
    def trial_list(self) -> TrialList:
        return self.query_one(TrialList)

    @property
    def load_problems(self) -> LoadProblems:
        return self.query_one(LoadProblems)

    @property
    def turn_view(self) -> TurnView:
        return self.query_one(TurnView)

    def on_mount(self) -> None:
        self.sub_title = self._describe_source()
        self.trial_list.loading = True
        self.turn_view.show_message("loading…")
        self.load()

    def on_unmount(self) -> None:
        gc.unfreeze()  # the loaded model may go now (see _settle_memory)
        gc.set_threshold(*_GC_THRESHOLDS)

    def _describe_source(self) -> str:
        # A file name is hostile like the file: its control characters must not reach
        # the terminal through the header (clean_text shows them as Control Pictures).
        from sessions.hostile.safe_files import clean_text

        if self.paths:
            names = ", ".join(clean_text(p.name or str(p)) for p in self.paths[:3])
            return names + (f" and {len(self.paths) - 3} more" if len(self.paths) > 3 else "")
        return f"recent calls in {clean_text(str(self.sessions_dir))}" if self.sessions_dir else ""

    # ------------------------------------------------------------ loading
    @work(thread=True, exclusive=True, exit_on_error=False, group=LOAD_GROUP, name="loading calls")
    def load(self) -> None:
        """Load every path (or the recent logs of the sessions folder), one message each."""
        from replay.load import load_log_preview, recent_sessions

        looked_in: Path | None = None
        paths = self.paths
        if not paths and self.sessions_dir is not None:
            looked_in = self.sessions_dir
            paths = recent_sessions(self.sessions_dir, self.recent)
        known, self.preloaded = self.preloaded, []  # a reload loads everything again
        count = 0
        for n, path in enumerate(paths):
            if count == 0 and n >= len(known):
                # Nothing shown yet: paint the start of a long log first (a two-hour
                # log takes a second or more to read; its first screen, ~50 ms).
                preview = load_log_preview(path)
                if preview is not None:
                    self.post_message(TrialPreview(path, preview))
            batch = known[n] if n < len(known) else load_one(path)
            if isinstance(batch, str):
                self.post_message(LoadProblem(path, batch))
                continue
            count += len(batch.trials)
            self.post_message(TrialsLoaded(path, batch.trials, batch.warnings))
        self.post_message(LoadFinished(count, looked_in))

    def action_reload(self) -> None:
        gc.unfreeze()  # let the previous load's objects be collected again
        self.trials = []
        self.problems = []
        self.load_problems.clear()
        self._tables.clear()
        self.loading_done = False
        self.trial_list.show([], failures_only=self.trial_list.failures_only)
        self.trial_list.loading = True
        self.turn_view.show_message("loading…")
        self.load()

    def on_trial_preview(self, message: TrialPreview) -> None:
        if self.trials or self.loading_done:
            return  # the whole call (or another) is shown already
        self._preview = message.trial
        self.turn_view.show(TurnTable(message.trial), judge_groups([message.trial]))

    def on_trials_loaded(self, message: TrialsLoaded) -> None:
        first = not self.trials
        if first and self._preview is not None:
            self._pending_row = self.turn_view.cursor  # where the reader got to
            self._preview = None
        self.trials.extend(message.trials)
        self.trial_list.loading = False
        self.trial_list.append(message.trials)
        groups = judge_groups(self.trials)
        if groups != self.turn_view.judges and not first:
            self._show_current()
        for warning in message.warnings:
            if warning.startswith("skipped: "):  # a log of a folder that could not be loaded
                self.load_problems.add(terminal_line(warning.removeprefix("skipped: ")))
        if message.warnings:
            shown = "\n".join(message.warnings[:3])
            more = len(message.warnings) - 3
            self.notify(
                clean_text(shown + (f"\n… and {more} more" if more > 0 else "")),
                title=clean_text(f"warnings loading {message.path.name}"),
                severity="warning",
                markup=False,  # file names and texts from files are not markup
            )

    def on_load_problem(self, message: LoadProblem) -> None:
        self.problems.append(message.text)
        self.load_problems.add(terminal_line(message.text), message.path)
        self.notify(
            clean_text(message.text),
            title="could not load",
            severity="error",
            timeout=10,
            markup=False,
        )

    def on_load_finished(self, message: LoadFinished) -> None:
        self.loading_done = True
        self.trial_list.loading = False
        self.call_after_refresh(_settle_memory)
        if self.trials:
            return
        if message.looked_in is not None:
            self.turn_view.show_message(
                f"No calls in {message.looked_in}.\n"
                "Make one with `cutin call`, or open logs and results: cutin replay PATH ..."
            )
        else:
            self.turn_view.show_message(
                "Nothing could be loaded: the files and why are listed under the calls."
            )

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """The one handler for every worker's failure."""
        worker = event.worker
        if event.state == WorkerState.ERROR:
            error = worker.error
            self.notify(
                f"{type(error).__name__}: {error}",
                title=f"{worker.name or 'background task'} failed",
                severity="error",
                timeout=10,
            )
        if worker.group == LOAD_GROUP and event.state in (WorkerState.ERROR, WorkerState.CANCELLED):
            self.trial_list.loading = False
            self.loading_done = True

    # ------------------------------------------------------------ showing a trial
    def table_for(self, trial: Trial) -> TurnTable:
        """The (cached) turn table of ``trial``."""
        table = self._tables.get(id(trial))
        if table is None:
            table = TurnTable(trial)
            self._tables[id(trial)] = table
        return table

    @on(OptionList.OptionHighlighted, "#trials")
    def _trial_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        row, self._pending_row = self._pending_row, None
        self._show_current(row)

    def _show_current(self, row: int | None = None) -> None:
        trial = self.trial_list.current
        view = self.turn_view
        if trial is None:
            view.show_message("No failed calls." if self.trial_list.failures_only else "")
            return
        if row is None:
            row = view.cursor if view.table is not None and view.table.trial is trial else 0
        view.hidden = self.hidden
        view.show(self.table_for(trial), judge_groups(self.trials), row)

    def _go(self, where: Position) -> None:
        position, row = where
        listing = self.trial_list
        if position == listing.position and self.turn_view.table is not None:
            self.turn_view.move_to(row)
            return
        self._pending_row = row
        listing.highlighted = position

    def _jump(self, matches: Predicate, forward: bool, what: str) -> None:
        listing = self.trial_list
        if not listing.shown:
            self.notify(f"no {what} to go to: nothing is listed", severity="warning")
            return
        start = (listing.position, self.turn_view.cursor)
        where = find(
            len(listing.shown),
            lambda n: self.table_for(listing.trial_at(n)),
            start,
            matches,
            forward=forward,
        )
        if where is None:
            self.notify(f"no {what} in the listed calls", severity="information")
            return
        if where == start:
            self.notify(f"this is the only {what}", severity="information")
        self._go(where)

    # ------------------------------------------------------------ actions
    def action_next_failure(self) -> None:
        self._jump(is_failure, True, "failure")

    def action_previous_failure(self) -> None:
        self._jump(is_failure, False, "failure")

    def action_next_cut(self) -> None:
        self._jump(is_cut, True, "cut")

    def action_previous_cut(self) -> None:
        self._jump(is_cut, False, "cut")

    def action_turn(self, step: int) -> None:
        self.turn_view.move_to(self.turn_view.cursor + step)

    def action_filter_failures(self) -> None:
        listing = self.trial_list
        keep = listing.current
        listing.show(self.trials, failures_only=not listing.failures_only, keep=keep)
        if not listing.shown:
            self._show_current()

    def action_toggle_columns(self) -> None:
        groups = set(self.turn_view.judges)
        self.hidden = set() if groups and groups <= self.hidden else groups | self.hidden
        self.turn_view.set_hidden(self.hidden)

    def action_toggle_judge(self, group: str) -> None:
        if group not in self.turn_view.judges:
            self.notify(f"no {group} verdicts in these calls", severity="information")
            return
        self.hidden ^= {group}
        self.turn_view.set_hidden(self.hidden)

    def action_close(self) -> None:
        self._stop_audio.set()
        if len(self.app.screen_stack) > 1:
            self.dismiss()
        else:
            self.app.exit()

    # -- audio
    def action_play_turn(self) -> None:
        view = self.turn_view
        if view.table is None or view.cursor == 0:
            self.notify("focus a turn to play it (j/k or the arrow keys)", severity="information")
            return
        trial = view.table.trial
        clip = turn_clip(trial, trial.turns[view.cursor - 1])
        if isinstance(clip, str):
            self.notify(f"cannot play this turn: {clip}", title="no audio", severity="warning")
            return
        self._stop_audio.set()
        self._stop_audio = threading.Event()
        self.playback = self.play(clip, self._stop_audio)

    @work(thread=True, exclusive=True, exit_on_error=False, group="replay-audio", name="playback")
    def play(self, clip: RecordingClip, stop: threading.Event) -> None:
        from sessions.speech.devices import AudioUnavailable
        from sessions.speech.wav import WavError

        try:
            play_clip(clip, stop)
        except AudioUnavailable:
            # PortAudio's own words ("Error querying device -1") say nothing useful
            # here; where the turn is in which file lets it be played elsewhere.
            self.app.call_from_thread(
                self.notify,
                no_device_note(clip),
                title="no audio device",
                severity="warning",
                timeout=15,
                markup=False,
            )
        except WavError as exc:
            self.app.call_from_thread(
                self.notify,
                terminal_line(str(exc)),
                title="cannot read the recording",
                severity="error",
                markup=False,
            )

    # -- judging
    def action_judge_rules(self) -> None:
        view = self.turn_view
        if view.table is None:
            self.notify("no call shown to judge", severity="warning")
            return
        if view.table.trial is self._preview:
            self.notify("the call is still loading", severity="information")
            return
        self.judge_rules(view.table.trial)

    @work(thread=True, exit_on_error=False, group="replay-judge", name="rule judge")
    def judge_rules(self, trial: Trial) -> None:
        from replay.judges.rules import judge_trial

        self.post_message(RulesJudged(trial, judge_trial(trial)))

    def on_rules_judged(self, message: RulesJudged) -> None:
        trial = message.trial
        trial.verdicts = [v for v in trial.verdicts if v.judge != "rules"] + message.verdicts
        self._tables.pop(id(trial), None)
        self.trial_list.refresh_trial(trial)
        if self.turn_view.table is not None and self.turn_view.table.trial is trial:
            self._show_current()
        failed = sum(1 for v in message.verdicts if v.label == "fail")
        self.notify(f"rule judge: {plural(len(message.verdicts), 'verdict')}, {failed} fail")

    # -- reports
    def action_write_report(self) -> None:
        self.write_report(open_it=False)

    def action_open_report(self) -> None:
        self.write_report(open_it=True)

    @work(thread=True, exit_on_error=False, group="replay-report", name="report")
    def write_report(self, open_it: bool) -> None:
        from replay.report.trials import render_html

        listing = self.trial_list
        trials = [listing.trial_at(n) for n in range(len(listing.shown))]
        if not trials:
            self.app.call_from_thread(self.notify, "nothing listed to report", severity="warning")
            return
        page = render_html(trials)
        name = f"cutin-report-{dt.datetime.now().strftime('%Y%m%d-%H%M%S')}.html"
        beside = None if self.reports_dir is not None else report_folder(trials)
        note = ""
        if beside is not None:
            path = beside / name
            try:  # next to the calls' logs, where the user looks for it (never made)
                path.write_text(page, encoding="utf-8")
            except OSError as exc:
                note = (
                    f"\n{shown_folder(beside)}\nis not writable ({exc.strerror or exc}): "
                    "written to the cache folder"
                )
                beside = None
        if beside is None:
            path = _write_page((self.reports_dir or _default_reports_dir()) / name, page)
        calls = plural(len(trials), "call")
        # The file name on a line of its own and the folder on the next: a toast wraps
        # a long path anywhere, which broke the name in two.
        folder = shown_folder(path.parent, TOAST_COLUMNS - len("in "))
        message = f"{shown_name(path.name)}\nin {folder}\n({calls}){note}"
        self.app.call_from_thread(
            self.notify,
            message,
            title="report written",
            severity="warning" if note else "information",
            markup=False,
        )
        if open_it:
            self.app.call_from_thread(self.app.open_url, path.resolve().as_uri())


def no_device_note(clip: RecordingClip) -> str:
    """What to say when a turn cannot be played here: the recording and the turn's span."""
    end = format_time(clip.end) if clip.end is not None else "the end"
    return (
        "No audio device is available to play this turn. Its recording is "
        f"{shown_name(clip.path)}, from {format_time(clip.start)} to {end}: "
        "play that stretch with another program."
    )


def open_replay_screen(app: App[object]) -> None:
    """Open the replay of recent calls on ``app`` (the home screen's Replay entry): the
    folder the app's calls are written to, else the settings' sessions_dir."""
    plan = getattr(app, "call_plan", None)
    folder = getattr(plan, "sessions_dir", None)
    if folder is None:
        from sessions.settings import Settings

        folder = Settings().sessions_dir
    app.push_screen(ReplayScreen(sessions_dir=Path(folder)))


def _settle_memory() -> None:
    """Collect loading's garbage once, then keep the loaded model out of later
    collections: a full collection over a two-hour call's objects takes ~0.1 s,
    which would show up as a stutter while scrolling."""
    gc.collect()
    gc.freeze()
    # Scrolling builds lines into caches that outlive young collections; an automatic
    # full collection over them then costs ~10 ms, in the middle of a frame (the p99 of
    # the scroll budget). Full collections 10x less often while the replay is open.
    young, middle, full = _GC_THRESHOLDS
    gc.set_threshold(young, middle, full * 10)


_GC_THRESHOLDS = gc.get_threshold()
"""The process's collection thresholds before any replay screen (restored on unmount)."""


def _default_reports_dir() -> Path:
    from sessions.settings import Settings

    return Settings().cache_dir / "reports"


def report_folder(trials: Sequence[Trial]) -> Path | None:
    """Where the replay's report of ``trials`` goes: the folder of their logs (or τ2
    files), the folder holding all of them when they come from several; None when no
    trial names a file."""
    folders = []
    for trial in trials:
        if trial.source:
            source = Path(trial.source)
            folders.append(source if is_dir(source) else source.parent)
    if not folders:
        return None
    try:
        return Path(os.path.commonpath([f.absolute() for f in folders]))
    except ValueError:  # nothing in common (different drives)
        return folders[0]


def _write_page(path: Path, page: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(page, encoding="utf-8")
    return path


TOAST_COLUMNS = 34
"""What a toast holds on a line in an 80-column terminal (its width is half the screen)."""


def shown_folder(folder: Path, width: int = TOAST_COLUMNS) -> str:
    """``folder`` as a toast shows it: inert, the home folder as ``~``, broken into
    lines of at most ``width`` after a ``/`` (a toast would break a name anywhere);
    only a single folder name longer than ``width`` is left to wrap."""
    full, home = folder.absolute(), Path.home()
    text = shown_name(Path("~") / full.relative_to(home) if full.is_relative_to(home) else full)
    lines = [""]
    for part in re.findall(r"[^/]*/|[^/]+$", text):
        if lines[-1] and len(lines[-1]) + len(part) > width:
            lines.append("")
        lines[-1] += part
    return "\n".join(lines)


class ReplayApp(App[None]):
    """A minimal app whose only screen is the replay (``cutin replay``, tests, bench)."""

    TITLE = "cutin"
    CSS_PATH = STYLES
    """Also here: Textual loads a screen's CSS_PATH when pushed, not for the default screen."""

    def __init__(
        self,
        paths: Sequence[Path | str] = (),
        *,
        sessions_dir: Path | None = None,
        recent: int = RECENT_DEFAULT,
        reports_dir: Path | None = None,
        preloaded: Sequence[Batch | str] = (),
    ) -> None:
        super().__init__()
        self._screen_args = (list(paths), sessions_dir, recent, reports_dir)
        self._preloaded = list(preloaded)

    def get_default_screen(self) -> Screen[None]:
        paths, sessions_dir, recent, reports_dir = self._screen_args
        return ReplayScreen(
            paths,
            sessions_dir=sessions_dir,
            recent=recent,
            reports_dir=reports_dir,
            preloaded=self._preloaded,
        )


__all__ = [
    "LoadFinished",
    "LoadProblem",
    "LoadProblems",
    "ReplayApp",
    "ReplayScreen",
    "TrialPreview",
    "TrialsLoaded",
    "no_device_note",
    "open_replay_screen",
]
