"""Run every bench/bench_*.py module and print one table of budgets.

Each module exposes ``rows() -> list[dict]`` with the keys budget, target, measured,
peer (optional) and note, and, for a row that has a numeric budget, target_value,
measured_value, unit and lower_is_better. A module that fails shows up as an error
row, so one broken benchmark never hides the others (and the exit code is then 1).

    .venv/bin/python bench/run.py              # the table
    .venv/bin/python bench/run.py --json       # the same rows as JSON
    .venv/bin/python bench/run.py core vad     # only bench_core.py and bench_vad.py
    .venv/bin/python bench/run.py --check      # exit 1 when a budget is missed twice
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
COLUMNS = ("budget", "target", "measured", "peer", "note")
# The machine-readable side of a row; a row without both numbers is informational.
NUMERIC = ("target_value", "measured_value", "unit", "lower_is_better")

Row = dict[str, Any]


def discover(only: list[str], folder: Path = BENCH_DIR) -> list[Path]:
    """bench_*.py files in name order, optionally only those whose name contains a filter."""
    paths = sorted(folder.glob("bench_*.py"))
    if only:
        paths = [p for p in paths if any(word in p.stem for word in only)]
    return paths


def load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"bench.{path.stem}", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def normalize(raw: dict[str, Any]) -> Row:
    """The five text columns as strings, plus the numeric budget when the row has one."""
    row: Row = {key: str(raw.get(key, "")) for key in COLUMNS}
    target, measured = _number(raw.get("target_value")), _number(raw.get("measured_value"))
    if target is not None:
        row["target_value"] = target
        row["measured_value"] = measured
        row["unit"] = str(raw.get("unit", ""))
        row["lower_is_better"] = bool(raw.get("lower_is_better", True))
    return row


def is_budget(row: Row) -> bool:
    return row.get("target_value") is not None


def missed(row: Row) -> bool:
    """Whether a row with a numeric budget misses it. A budget row whose value could not
    be measured (skipped, no samples) is not a miss; its text says why."""
    target, measured = row.get("target_value"), row.get("measured_value")
    if target is None or measured is None:
        return False
    return bool(measured > target if row["lower_is_better"] else measured < target)


def run_module(path: Path) -> tuple[list[Row], bool]:
    """The module's rows (each tagged with its module and seconds), and whether it worked."""
    start = time.perf_counter()
    try:
        raw: list[dict[str, Any]] = load(path).rows()
        rows = [normalize(row) for row in raw]
        ok = True
    except Exception as exc:  # one broken benchmark must not hide the others
        traceback.print_exc(file=sys.stderr)
        rows = [
            {
                "budget": path.stem,
                "target": "",
                "measured": "error",
                "peer": "",
                "note": f"{type(exc).__name__}: {exc}".splitlines()[0],
            }
        ]
        ok = False
    seconds = time.perf_counter() - start
    for row in rows:
        row["module"] = path.stem
        row["seconds"] = f"{seconds:.1f}"
    return rows, ok


@dataclass
class Miss:
    """A budget missed by the first run, with the measurement of its re-run."""

    row: Row
    again: float | None  # None: the re-run did not measure it (or failed)

    @property
    def confirmed(self) -> bool:
        if self.again is None:
            return True  # no evidence that the budget holds
        return missed({**self.row, "measured_value": self.again})

    def describe(self) -> str:
        unit = f" {self.row['unit']}" if self.row["unit"] else ""
        sign = "≤" if self.row["lower_is_better"] else "≥"
        again = "not measured" if self.again is None else f"{self.again:g}{unit}"
        return (
            f"{self.row['budget']} ({self.row['module']}): target {sign} "
            f"{self.row['target_value']:g}{unit}; measured {self.row['measured_value']:g}{unit}, "
            f"then {again}"
        )


def recheck(rows: list[Row], paths: dict[str, Path]) -> tuple[list[Miss], bool]:
    """Run each module with a missed budget once more; a budget is missed only when the
    re-run misses it too (one slow run on a shared machine is not a verdict)."""
    misses: list[Miss] = []
    all_ok = True
    by_module: dict[str, list[Row]] = {}
    for row in rows:
        if missed(row):
            by_module.setdefault(row["module"], []).append(row)
    for module, first in by_module.items():
        names = ", ".join(r["budget"] for r in first)
        print(f"bench --check: {module} missed {names}; measuring again", file=sys.stderr)
        again_rows, ok = run_module(paths[module])
        all_ok = all_ok and ok
        again = {r["budget"]: r for r in again_rows if is_budget(r)}
        for row in first:
            value = again[row["budget"]]["measured_value"] if row["budget"] in again else None
            misses.append(Miss(row, value))
    return misses, all_ok


def print_table(rows: list[Row]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title="cutin budgets", show_lines=False)
    for column in COLUMNS:
        table.add_column(column, overflow="fold", style="bold" if column == "measured" else "")
    previous = None
    for row in rows:
        if previous is not None and row["module"] != previous:
            table.add_section()
        previous = row["module"]
        style = "red" if row["measured"] == "error" or missed(row) else None
        table.add_row(*(row[c] for c in COLUMNS), style=style)
    # Piped output (CI logs) gets a wide table instead of rich's 80-column default.
    console = Console() if sys.stdout.isatty() else Console(width=180)
    console.print(table)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Measure cutin's budgets (bench/bench_*.py).")
    parser.add_argument("only", nargs="*", help="run only modules whose name contains one of these")
    parser.add_argument("--json", action="store_true", help="print the rows as a JSON list")
    parser.add_argument(
        "--check",
        action="store_true",
        help="measure a missed budget again; exit 1 when it is missed twice in a row",
    )
    parser.add_argument(
        "--dir", type=Path, default=BENCH_DIR, help="where the bench_*.py modules are"
    )
    args = parser.parse_args(argv)
    if str(REPO_ROOT) not in sys.path:
        sys.path.insert(0, str(REPO_ROOT))
    paths = discover(args.only, args.dir)
    if not paths:
        print(f"bench: no bench_*.py module matches {args.only}", file=sys.stderr)
        return 2
    rows: list[Row] = []
    all_ok = True
    for path in paths:
        module_rows, ok = run_module(path)
        rows.extend(module_rows)
        all_ok = all_ok and ok
    failed: list[Miss] = []
    if args.check:
        misses, rerun_ok = recheck(rows, {p.stem: p for p in paths})
        all_ok = all_ok and rerun_ok
        for miss in misses:
            miss.row["remeasured_value"] = miss.again
            again = "not measured" if miss.again is None else f"{miss.again:g} {miss.row['unit']}"
            miss.row["measured"] += f" · again: {again.strip()}"
        failed = [m for m in misses if m.confirmed]
    if args.json:
        print(json.dumps(rows, ensure_ascii=False, indent=2))
    else:
        print_table(rows)
    if args.check:
        budgets = sum(is_budget(r) for r in rows)
        if failed:
            print(
                f"bench --check: {len(failed)} of {budgets} budgets missed twice:", file=sys.stderr
            )
            for miss in failed:
                print(f"  {miss.describe()}", file=sys.stderr)
        else:
            print(f"bench --check: all {budgets} budgets hold", file=sys.stderr)
        if not all_ok:
            print("bench --check: a module failed (see the error rows)", file=sys.stderr)
    return 0 if all_ok and not failed else 1


if __name__ == "__main__":
    sys.exit(main())
