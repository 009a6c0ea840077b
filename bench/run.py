"""Run every bench/bench_*.py module and print one table of budgets.

Each module exposes ``rows() -> list[dict]`` with the keys budget, target, measured,
peer (optional) and note. A module that fails shows up as an error row, so one
broken benchmark never hides the others (and the exit code is then 1).

    .venv/bin/python bench/run.py              # the table
    .venv/bin/python bench/run.py --json       # the same rows as JSON
    .venv/bin/python bench/run.py core vad     # only bench_core.py and bench_vad.py
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
import traceback
from pathlib import Path
from types import ModuleType
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
COLUMNS = ("budget", "target", "measured", "peer", "note")


def discover(only: list[str]) -> list[Path]:
    """bench_*.py files in name order, optionally only those whose name contains a filter."""
    paths = sorted(BENCH_DIR.glob("bench_*.py"))
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


def run_module(path: Path) -> tuple[list[dict[str, str]], bool]:
    """The module's rows (each tagged with its module and seconds), and whether it worked."""
    start = time.perf_counter()
    try:
        raw: list[dict[str, Any]] = load(path).rows()
        rows = [{key: str(row.get(key, "")) for key in COLUMNS} for row in raw]
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


def print_table(rows: list[dict[str, str]]) -> None:
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
        style = "red" if row["measured"] == "error" else None
        table.add_row(*(row[c] for c in COLUMNS), style=style)
    # Piped output (CI logs) gets a wide table instead of rich's 80-column default.
    console = Console() if sys.stdout.isatty() else Console(width=180)
    console.print(table)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Measure cutin's budgets (bench/bench_*.py).")
    parser.add_argument("only", nargs="*", help="run only modules whose name contains one of these")
    parser.add_argument("--json", action="store_true", help="print the rows as a JSON list")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(REPO_ROOT))
    paths = discover(args.only)
    if not paths:
        print(f"bench: no bench_*.py module matches {args.only}", file=sys.stderr)
        return 2
    rows: list[dict[str, str]] = []
    all_ok = True
    for path in paths:
        module_rows, ok = run_module(path)
        rows.extend(module_rows)
        all_ok = all_ok and ok
    if args.json:
        print(json.dumps(rows, ensure_ascii=False, indent=2))
    else:
        print_table(rows)
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
