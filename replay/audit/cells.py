"""The audit's labels and cells: how a condition, a number, an interval, a share and a
p-value read, and the compact table they go in.

One public module below both the calculations that name a condition in a note or a
caveat (:mod:`.caveats`, :mod:`.dial_tests`, :mod:`.effects`) and the renderers
(:mod:`.render`, :mod:`.render_notes`, :mod:`.render_agent`, and a call's agent section
in :mod:`replay.report.agent_render`), so that no renderer reaches into another's
private helpers. A value that is missing reads as :data:`DASH`, never NaN; text from a
file is inert (:func:`inert`). Rich is imported only when a table is built or printed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from sessions.hostile.safe_files import terminal_line

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

DASH = "—"
"""A value with no denominator, or none measured."""
FEW = "†"
"""Marks a rate printed as its count (fewer than 10 events, or one conversation)."""
DIAL_LABELS = {"alpha": "α", "beta": "β", "gamma": "γ"}
"""A dial's field name → the letter a table shows."""
TEXT_COLUMNS = frozenset(
    {"condition", "behaviour", "within", "realized", "baseline", "metric", "call", "source", "span"}
)
"""Columns of words (left-aligned, may wrap); every other column is a number."""


# ---------------------------------------------------------------- labels
def condition_label(condition: Mapping[str, Any]) -> str:
    """``{"alpha": 0.25, "policy": "rules"}`` → ``α 0.25 · rules`` (inert)."""
    parts: list[str] = []
    for k, v in condition.items():
        if v is None:
            continue  # e.g. τ2 trials have no dials
        if k in DIAL_LABELS:
            parts.append(f"{DIAL_LABELS[k]} {v:g}" if isinstance(v, int | float) else f"{k}={v}")
        else:
            parts.append(str(v) if k in ("policy", "model", "scenario") else f"{k}={v}")
    return inert(" · ".join(parts) or "all")


def inert(text: str) -> str:
    """Text from a file for a rich console: no markup of its own, no control codes."""
    from rich.markup import escape

    return escape(terminal_line(text))


# ---------------------------------------------------------------- cells
def num(v: float | None, digits: int = 2) -> str:
    """``0.25``; :data:`DASH` for no value."""
    return DASH if v is None else f"{v:.{digits}f}"


def pct(v: float | None) -> str:
    """A share as ``66.7%``; :data:`DASH` for no value."""
    return DASH if v is None else f"{100 * v:.1f}%"


def ci_text(ci: Sequence[float] | None, digits: int = 1, *, percent: bool = False) -> str:
    """``[0.1, 0.4]`` (``percent``: a share's bounds in percent, ``[10.0, 40.0]``);
    :data:`DASH` for no interval."""
    if ci is None:
        return DASH
    if percent:
        return f"[{100 * ci[0]:.{digits}f}, {100 * ci[1]:.{digits}f}]"
    return f"[{ci[0]:.{digits}f}, {ci[1]:.{digits}f}]"


def fraction(n: int, total: int) -> str:
    """``2/3``; :data:`DASH` with nothing to count."""
    return f"{n}/{total}" if total else DASH


def share(n: int, total: int, rate: float | None) -> str:
    """``2/3 · 66.7%``; :data:`DASH` with nothing to count."""
    return f"{n}/{total} · {pct(rate)}" if total else DASH


def p_value(v: float | None) -> str:
    """A p-value: two significant digits, or an exponent below 0.001."""
    if v is None:
        return DASH
    return f"{v:.2g}" if v >= 1e-3 else f"{v:.1e}"


def gated(row: Mapping[str, Any], key: str, digits: int = 1) -> str:
    """A row's interval, or the count and a † when too few events hide it."""
    why = (row.get("hidden") or {}).get(key)
    if why is None:
        return ci_text(row.get(key), digits)
    return f"n={why.split(' ', 1)[0]} {FEW}" if why[0].isdigit() else f"1 conv. {FEW}"


def few_note(rows: Sequence[Mapping[str, Any]]) -> str | None:
    """The footnote for † when any row hides an interval or a rate."""
    if not any(r.get("hidden") for r in rows):
        return None
    return (
        f"{FEW} fewer than 10 events (the count n is shown) or one conversation: no "
        "interval (τ-Voice hides such rates too; resampling so few gives back the "
        "events themselves, one call a single point)"
    )


# ---------------------------------------------------------------- tables
def compact_table(title: str, columns: Sequence[str]) -> Table:
    """A compact table: numbers right-aligned and never wrapped; text columns
    (:data:`TEXT_COLUMNS`) wrap."""
    from rich import box
    from rich.table import Table

    out = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    for name in columns:
        if name in TEXT_COLUMNS:
            # print_table stacks the rows when the table does not fit unwrapped.
            out.add_column(name, justify="left", overflow="fold")
        else:
            out.add_column(name, justify="right", no_wrap=True)
    return out


def caption(table: Table, notes: Sequence[str | None]) -> None:
    """Add ``notes`` (the ones not None) under ``table``'s caption, left-aligned."""
    lines = [n for n in notes if n]
    if table.caption:
        lines.insert(0, str(table.caption))
    if lines:
        table.caption = "\n".join(lines)
        table.caption_justify = "left"


CONTINUED = "(cont.)"
"""Titles the second and later parts of a table split across the width."""

NARROWEST_SPLIT = 60
"""Below this many columns a table too wide to split is stacked, a block per row."""


def print_table(table: Table, console: Console) -> None:
    """``table`` when it fits the console's width; else its text columns wrapped at
    word boundaries when that fits; else split into tables of the columns that fit,
    each led by the first (the condition) column, the caption under the last. Only
    when not even the first column and one more fit (a console under
    :data:`NARROWEST_SPLIT` columns) is it stacked, one block per row with a line per
    column. No line is wider than the console and no word is cut in two."""
    from rich.text import Text

    if _fits(table, console):
        console.print(table)
        return
    wrapped = _wrapped(table, console)
    if wrapped is not None:
        console.print(wrapped)
        return
    parts = _split(table, console)
    if parts is not None:
        for part in parts:
            console.print(part)
        return
    if table.title:
        console.print(Text.from_markup(str(table.title), style="bold"))
    cells = [[_flat(cell) for cell in column.cells] for column in table.columns]
    names = [_flat(column.header) for column in table.columns]
    for row in range(table.row_count):
        console.print(Text.from_markup(cells[0][row], style="bold"), overflow="fold")
        for name, column in zip(names[1:], cells[1:], strict=True):
            line = Text.from_markup(f"  {name}: ", style="dim")
            line.append_text(Text.from_markup(column[row]))
            console.print(line, overflow="fold")
    if table.caption:
        console.print(Text.from_markup(str(table.caption), style="dim"))
    console.print()


def _fits(table: Table, console: Console) -> bool:
    """The table drawn with no cell wrapped fits the console's width."""
    from rich.measure import Measurement

    unbounded = console.options.update_width(10_000)  # else the minimum is capped
    # Only whole: Rich narrows the widest text column below its longest word when
    # the table must shrink, so a wrapped table is checked as drawn (:func:`_whole`).
    return Measurement.get(console, unbounded, table).maximum <= console.width


def _words(cell: object) -> list[str]:
    from rich.text import Text

    return Text.from_markup(str(cell)).plain.split()


def _wrapped(table: Table, console: Console) -> Table | None:
    """The table with its text columns wrapped at spaces (the first, the condition,
    kept on one line when it takes at most a third of the width), when so drawn it
    fits with every word whole; else None."""
    copy = _part(table, list(range(len(table.columns))), title=table.title, caption=table.caption)
    for k, column in enumerate(copy.columns):
        if column.no_wrap:
            continue
        cells = [column.header, *column._cells]
        longest = max((len(w) for c in cells for w in _words(c)), default=1)
        whole = max((len(" ".join(_words(c))) for c in cells), default=1)
        column.min_width = whole if k == 0 and whole <= console.width // 3 else longest
    return copy if _whole(copy, console) else None


def _whole(table: Table, console: Console) -> bool:
    """``table`` as ``console`` would draw it: no line wider, every word drawn whole
    (none cut in two, elided or cropped with a column that did not fit)."""
    import io

    from rich.console import Console as RichConsole

    cells = (c for column in table.columns for c in (column.header, *column._cells))
    known = {w for c in cells for w in _words(c)}
    known |= {w for text in (table.title, table.caption) if text for w in _words(text)}
    out = io.StringIO()
    RichConsole(
        file=out, width=console.width, color_system=None, force_terminal=False, legacy_windows=False
    ).print(table)
    lines = out.getvalue().splitlines()
    if any(len(line) > console.width for line in lines):
        return False
    drawn = {w.strip("│─━┃┏┓┗┛┡┩╇╋ ") for line in lines for w in line.split()} - {""}
    return drawn == known  # no word cut in two, none cropped away


def _part(table: Table, indices: Sequence[int], *, title: Any, caption: Any) -> Table:
    """A table of ``table``'s columns ``indices``, with its rows, box and paddings."""
    from dataclasses import replace

    from rich.table import Table as RichTable

    out = RichTable(
        title=title,
        caption=caption,
        title_justify=table.title_justify,
        caption_justify=table.caption_justify,
        box=table.box,
        pad_edge=table.pad_edge,
        show_header=table.show_header,
    )
    out.columns = [
        replace(table.columns[i], _index=k, _cells=list(table.columns[i]._cells))
        for k, i in enumerate(indices)
    ]
    out.rows = list(table.rows)
    return out


def _drawable(table: Table, console: Console) -> Table | None:
    """``table`` as it is when it fits, else wrapped (:func:`_wrapped`), else None."""
    return table if _fits(table, console) else _wrapped(table, console)


def _split(table: Table, console: Console) -> list[Table] | None:
    """The table as several, each the first column and as many of the others, in
    order, as fit the width; None when the first and any one other do not fit."""
    if console.width < NARROWEST_SPLIT or len(table.columns) < 3:
        return None
    groups: list[list[int]] = []
    group: list[int] = []
    for i in range(1, len(table.columns)):
        if _drawable(_part(table, [0, *group, i], title=None, caption=None), console):
            group.append(i)
            continue
        if not group or not _drawable(_part(table, [0, i], title=None, caption=None), console):
            return None
        groups.append(group)
        group = [i]
    groups.append(group)
    parts: list[Table] = []
    for n, cols in enumerate(groups):
        title = table.title if n == 0 else (f"{table.title} {CONTINUED}" if table.title else None)
        caption = table.caption if n == len(groups) - 1 else None
        part = _drawable(_part(table, [0, *cols], title=title, caption=caption), console)
        if part is None:
            return None
        parts.append(part)
    return parts


def _flat(cell: object) -> str:
    """A cell's markup on one line (a cell may hold a value and its interval)."""
    return " ".join(str(cell).split())


__all__ = [
    "CONTINUED",
    "DASH",
    "DIAL_LABELS",
    "FEW",
    "TEXT_COLUMNS",
    "caption",
    "ci_text",
    "compact_table",
    "condition_label",
    "few_note",
    "fraction",
    "gated",
    "inert",
    "num",
    "p_value",
    "pct",
    "print_table",
    "share",
]
