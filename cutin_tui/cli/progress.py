"""`cutin simulate`'s progress: calls done / running / failed, the ETA and each running
call's condition; live on a terminal (rich), plain lines on stderr otherwise.

The batch runner reports finished calls through :meth:`BatchProgress.advance` and
what is running through a :class:`~sessions.batch.board.BatchBoard`, read here on the
display's own refresh (never from a call's frame).
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from sessions.hostile.inert_text import terminal_line

if TYPE_CHECKING:
    from sessions.batch.board import BatchBoard, CallProgress
    from sessions.batch.filing import CallOutcome

PLAIN_EVERY_S = 30.0
"""Without a terminal: a status line this often, besides one line per finished call."""
SHOWN_RUNNING = 12


def _clock(seconds: float | None) -> str:
    if seconds is None:
        return "–"
    s = int(max(0.0, seconds))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


def describe(state: CallProgress) -> str:
    """One running call's condition, e.g. ``t 12.3/30 s · turns 3 · cuts 1 · bc 2 · lag 2 ms``."""
    limit = f"/{state.seconds:.0f}" if state.seconds is not None else ""
    parts = [f"t {state.t:.1f}{limit} s"]
    if state.lag_p99_s is not None:
        parts += [
            f"turns {state.agent_turns}",
            f"cuts {state.interruptions}",
            f"bc {state.backchannels}",
            f"lag p99 {state.lag_p99_s * 1000:.0f} ms",
        ]
    return " · ".join(parts)


class BatchProgress:
    """Counts and timing of a batch (thread-safe reads for the display)."""

    def __init__(self, total: int, board: BatchBoard, jobs: int) -> None:
        self.total = total
        self.board = board
        self.jobs = jobs
        self.ran = self.skipped = self.failed = 0
        self.started = time.monotonic()
        self.last = ""
        self.told: set[str] = set()
        """Failed calls whose reason a printed line gave (the report does not repeat it)."""

    @property
    def done(self) -> int:
        return self.ran + self.skipped + self.failed

    def advance(self, outcome: CallOutcome) -> None:
        status = str(outcome.status)
        if status == "ran":
            self.ran += 1
        elif status == "skipped":
            self.skipped += 1
        else:
            self.failed += 1
        lag = ""
        if outcome.tally.lagged:
            missed = outcome.tally.no_responses
            maybe = f"; its {missed} no_response may be this machine's" if missed else ""
            lag = f" LAGGED (timings not trusted{maybe})"
        mark = {"ran": "", "skipped": " (skipped)"}.get(status, f" FAILED: {outcome.message}")
        # A failure's message may quote the agent or its server: made inert for a terminal.
        self.last = terminal_line(f"{outcome.spec.stem}{mark}{lag}")

    def eta(self) -> float | None:
        """Seconds left: the calls not finished times how long a call has taken, less what
        the running ones have done, spread over as many calls as have run at once. None
        before a call has ended (nothing to go by)."""
        took = self.board.took()
        if not took:
            run_done = self.ran + self.failed
            if not run_done:
                return None
            # No call timed by the runner: the pace of the batch so far.
            return (time.monotonic() - self.started) / run_done * (self.total - self.done)
        typical = sum(took) / len(took)
        running = self.board.running()
        waiting = max(0, self.total - self.done - len(running))
        work = waiting * typical + sum(max(0.0, typical - s.age) for s in running)
        return work / max(1, self.board.peak, len(running))

    def headline(self) -> str:
        running = len(self.board.running())
        return (
            f"{self.done}/{self.total} done ({self.skipped} skipped) · {running} running · "
            f"{self.failed} failed · elapsed {_clock(time.monotonic() - self.started)} · "
            f"ETA {_clock(self.eta())}"
        )


@contextmanager
def batch_progress(total: int, board: BatchBoard, jobs: int) -> Iterator[BatchProgress]:
    """The display for one batch: live when stderr is a terminal, else plain lines."""
    progress = BatchProgress(total, board, jobs)
    if sys.stderr.isatty():
        with _live(progress):
            yield progress
        return
    stop = threading.Event()
    ticker = threading.Thread(target=_plain_status, args=(progress, stop), daemon=True)
    ticker.start()
    original = progress.advance

    def advance(outcome: CallOutcome) -> None:
        original(outcome)
        print(f"cutin simulate: [{progress.done}/{total}] {progress.last}", file=sys.stderr)
        if str(outcome.status) == "failed":
            progress.told.add(outcome.spec.stem)

    progress.advance = advance  # type: ignore[method-assign]
    try:
        yield progress
    finally:
        stop.set()


def _plain_status(progress: BatchProgress, stop: threading.Event) -> None:
    while not stop.wait(PLAIN_EVERY_S):
        print(f"cutin simulate: {progress.headline()}", file=sys.stderr)


@contextmanager
def _live(progress: BatchProgress) -> Iterator[None]:
    from rich.console import Console, Group
    from rich.live import Live
    from rich.progress_bar import ProgressBar
    from rich.text import Text

    def render() -> Any:
        states = sorted(progress.board.running(), key=lambda s: s.stem)
        rows: list[Any] = [
            ProgressBar(total=progress.total, completed=progress.done, width=40),
            Text(f"simulate {progress.headline()}"),
        ]
        for state in states[:SHOWN_RUNNING]:
            rows.append(Text(f"  ▶ {state.stem}  {describe(state)}"))
        if len(states) > SHOWN_RUNNING:
            rows.append(Text(f"  … and {len(states) - SHOWN_RUNNING} more"))
        if progress.last:
            rows.append(Text(f"  last: {progress.last}"))
        return Group(*rows)

    # Transient: the display goes when the batch ends; the report then says what failed.
    console = Console(stderr=True)
    with Live(get_renderable=render, console=console, refresh_per_second=2, transient=True):
        yield
