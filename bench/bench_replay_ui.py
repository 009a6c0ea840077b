"""The replay screen's budget (DESIGN.md): open a 2-hour log, first paint ≤ 1 s.

* first paint: the real app (``ReplayApp``) runs headless at 120 × 40 on a
  synthetic two-hour log (bench_replay's generator: one ``agent_words`` event per
  word, pauses, opportunities, backchannels, cuts); measured from constructing the
  app to the turn view drawing its first line of that call. A long log's first lines
  are loaded and painted first (``replay.load.load_log_preview``) while the whole log
  loads; the time until the whole call is drawn is shown beside it;
* scrolling: the cost of one frame when jumping to a place never drawn before
  (every visible line built from the model), p50/p99 over random places; side by
  side with the eager way (every line of the call built up front).
"""

from __future__ import annotations

import asyncio
import gc
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_replay import write_call  # the shared 2-hour generator

SIZE = (120, 40)
REPEATS = 3
JUMPS = 200


async def _first_paint(path: Path) -> tuple[float, float, int]:
    """Seconds from app construction to the first line of the call drawn (its start,
    while the rest loads), to the whole call drawn, and the whole call's rows."""
    from cutin_tui.screens.replay import ReplayApp, ReplayScreen

    start = time.perf_counter()
    app = ReplayApp([path])
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert isinstance(screen, ReplayScreen)
        view = screen.turn_view
        deadline = start + 30
        while view.painted_at is None or view.table is None:
            if time.perf_counter() > deadline:
                raise TimeoutError("the turn view never painted the call")
            await asyncio.sleep(0.002)
        painted = view.painted_at - start
        while not (
            screen.trials
            and view.table is not None
            and view.table.trial is screen.trials[0]
            and view.painted_at is not None
        ):
            if time.perf_counter() > deadline:
                raise TimeoutError("the turn view never painted the whole call")
            await asyncio.sleep(0.002)
        whole = view.painted_at - start
        rows = view.row_count
        await pilot.pause()
    return painted, whole, rows


async def _frames(path: Path) -> tuple[list[float], float, int]:
    """Per-jump frame costs (s), the eager build time (s) and the line count."""
    from cutin_tui.screens.replay import ReplayApp, ReplayScreen

    app = ReplayApp([path])
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert isinstance(screen, ReplayScreen)
        view = screen.turn_view
        while view.painted_at is None or view.table is None:
            await asyncio.sleep(0.005)
        await pilot.pause()
        lines = view.virtual_size.height
        height = view.scrollable_content_region.height
        rng = random.Random(3)
        costs = []
        for _ in range(JUMPS):
            view.drop_caches()  # as at a place never drawn before
            top = rng.randrange(0, max(1, lines - height))
            view.scroll_to(y=top, animate=False, immediate=True)
            begin = time.perf_counter()
            for y in range(height):
                view.render_line(y)
            costs.append(time.perf_counter() - begin)
        view.drop_caches()
        begin = time.perf_counter()
        for row in range(view.row_count):
            view.row_lines(row)
        eager = time.perf_counter() - begin
    return costs, eager, lines


def rows() -> list[dict[str, object]]:
    """The rows bench/run.py prints."""
    with tempfile.TemporaryDirectory(prefix="cutin-bench-") as tmp:
        path, words, n_events = write_call(Path(tmp))
        size_mb = path.stat().st_size / 1e6
        paints = []
        wholes = []
        n_rows = 0
        for _ in range(REPEATS):
            gc.collect()
            painted, whole, n_rows = asyncio.run(_first_paint(path))
            paints.append(painted)
            wholes.append(whole)
        costs, eager, n_lines = asyncio.run(_frames(path))
    costs.sort()
    p50 = statistics.median(costs)
    p99 = costs[min(len(costs) - 1, int(len(costs) * 0.99))]
    return [
        {
            "budget": "replay: open a 2-hour log, first paint (screen)",
            "target": "≤ 1 s",
            "measured": f"{statistics.median(paints):.3f} s",
            "target_value": 1.0,
            "measured_value": round(statistics.median(paints), 3),
            "unit": "s",
            "peer": f"whole call drawn: {statistics.median(wholes):.3f} s",
            "note": f"app start → turn view's first line (the log's first lines, painted "
            f"while the rest loads); {words:,} words, {n_events:,} events, "
            f"{size_mb:.1f} MB, {n_rows:,} rows; headless {SIZE[0]}×{SIZE[1]}; "
            f"median of {REPEATS} (min {min(paints):.3f} s)",
        },
        {
            "budget": "replay: scroll a 2-hour call, frame at a new place",
            "target": "≤ 16 ms (60 frames/s)",
            "measured": f"p50 {p50 * 1e3:.1f} ms, p99 {p99 * 1e3:.1f} ms",
            "target_value": 16,
            "measured_value": round(p99 * 1e3, 2),
            "unit": "ms",
            "peer": f"eager: all {n_lines:,} lines built up front {eager:.2f} s",
            "note": f"{JUMPS} random jumps, line caches dropped before each; "
            f"{SIZE[1]}-row terminal",
        },
    ]


if __name__ == "__main__":
    for row in rows():
        print(row)
