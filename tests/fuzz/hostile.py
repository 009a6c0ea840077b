"""Hostile and malformed input files, generated from cutin's own fixtures, run
through the real command line in this interpreter.

Seeds: session logs that ``cutin simulate`` writes from the shipped scenarios, the
real τ2-bench files in ``tests/fixtures/tau2`` (trimmed so a case runs fast) and the
verdict sidecar ``cutin judge`` writes for them, the positions file ``cutin positions
extract`` writes, and the shipped scenario, gallery and agent-profile TOML.
Each case applies one mutation (torn or flipped lines, a wrong type in a field cutin
reads, an event ``type`` that is a list or an object, huge or edge-of-range numbers,
NaN/Infinity, deep nesting, UTF-16/32, binary files (PNG, gzip, zip, WAV, PDF …), lone
surrogates, terminal escape sequences and markup in texts, C1 controls and DEL in ids,
huge turns and tables in scenarios and profiles, special and unreadable files and
folders), sometimes under a hostile file
name (ESC, CR, LF, U+2028, C1, markup, an undecodable byte), and runs one command on it
(``cutin report``/``audit``/``judge``, ``simulate`` with the scenario or profile,
``overlaps --check``/``--export``, or the positions reader of ``prompt-audit``).

Every case must end, within :data:`TIME_LIMIT_S`, in either a clean result (exit 0,
or judge's 1) or one clear error (exit 2, one ``cutin: …`` line per problem, whatever
the file's name holds) and never in an exception; its output must hold no NaN/Inf and
no raw control character (C0, DEL or C1), JSON output must parse, the HTML must hold
no live markup from the file, a binary file's error must call it one, and a mutation
that breaks data must be reported (an error or a warning), never dropped in silence.

Unreadable files and folders are made with ``chmod 000``. Root reads those anyway, so
when the fuzzer runs as root it lowers its own file-access capabilities
(CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH) from the effective set while such a case runs
and raises them again after; where that is not possible (not Linux, no ``capset``)
those shapes are left out and the summary says so.

Run 10,000 cases (two to four minutes)::

    .venv/bin/python -m tests.fuzz.hostile --cases 10000 --seed 1

It prints the counts; ``--show N`` prints the first N failures in full.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import random
import re
import shutil
import signal
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]
TAU2_DIR = REPO_ROOT / "tests" / "fixtures" / "tau2"
TIME_LIMIT_S = 20.0
KEEP = 3000
"""How much of a case's output an outcome keeps (the end)."""
MARKER = "cutin_pwned"
NEWLINE_MARKER = MARKER + "_nl"
"""Follows a CR or LF in a hostile file name: at the start of an output line, the name
split a line (or forged one)."""

# Texts a file may carry that must never act where they are shown.
ESCAPES = (
    "\x1b]0;" + MARKER + "\x07",  # OSC: set the terminal title
    "\x1b]8;;https://example.invalid/\x1b\\" + MARKER + "\x1b]8;;\x1b\\",  # OSC 8 link
    "\x1b[2J\x1b[H",  # clear screen, cursor home
    "\x1b[31m" + MARKER + "\x1b[0m",
    "\x9b31m",  # 8-bit CSI
    "\r" + MARKER,
    "\x08\x08\x08",
)
MARKUP = (
    f"<script>{MARKER}()</script>",
    f'<img src=x onerror="{MARKER}()">',
    f"[bold red]{MARKER}[/]",
    f"](javascript:{MARKER}) | --- | `{MARKER}`",
    f"</td></tr></table><h1>{MARKER}</h1>",
)
# File names: what the name of a file or folder may hold (no "/" and no NUL).
NAMES = (
    "\x1b]0;" + MARKER + "\x07",
    "\x1b[31mred\x1b[0m\x1b[2J",
    "\n" + NEWLINE_MARKER,
    "\r" + NEWLINE_MARKER,
    "\r\n" + NEWLINE_MARKER,
    "\u2028" + NEWLINE_MARKER,  # LINE SEPARATOR: a line break to str.splitlines and editors
    "\u2029\x85" + NEWLINE_MARKER,  # PARAGRAPH SEPARATOR, NEL
    "\x9b31m\x85\x7f\x9d0;" + MARKER + "\x9c",
    f"<img src=x onerror={MARKER}()>",
    f"`](javascript:{MARKER})",
    os.fsdecode(b"\xff\xfe-undecodable"),
)
C1_IDS = ("\x85", "\x9b31m", "\x7f", "\x9d0;" + MARKER + "\x9c", "\x90q\x9c", "\x8d\x8e")
"""DEL and C1 controls: JSON may hold them raw (unescaped) in a string."""
EVENT_TYPES: tuple[Any, ...] = (["end"], {"type": "end"}, [], {}, ["agent_words", "end"], [[1]])
NONFINITE = ("NaN", "Infinity", "-Infinity", "1e999", "-1e400")
HUGE_INTS = ("1" * 5000, "10000000000000000000", "9" * 400, "-" + "9" * 40)
WRONG = {
    str: (True, 5, [], {"a": 1}),
    int: ("x", [], {}, 1.5e300),
    float: ("x", [], {}, True),
    bool: ("x", [], {}, 2),
    list: (True, "x", 5, {}),
    dict: (True, 5, []),  # not "x": tool-call arguments may be a JSON string
}

# JSON paths (``*`` = any index or key) of the τ2 fields cutin reads.
_SIM_KEYS = "id task_id duration start_time reward_info review user_only_review messages ticks"
_MESSAGE_KEYS = "role content tool_calls timestamp turn_idx is_audio"
TAU2_FIELDS = tuple(
    tuple(p.split("."))
    for p in (
        *_SIM_KEYS.split(" "),
        *(f"messages.*.{k}" for k in _MESSAGE_KEYS.split(" ")),
        "reward_info.reward",
        "reward_info.reward_basis",
        "reward_info.db_check",
        "reward_info.nl_assertions",
        "reward_info.action_checks",
        "reward_info.nl_assertions.*.met",
        "reward_info.nl_assertions.*.nl_assertion",
        "messages.*.tool_calls.*.name",
        "messages.*.tool_calls.*.arguments",
        "ticks.*.user_chunk",
        "ticks.*.agent_chunk",
        "ticks.*.user_chunk.contains_speech",
        "ticks.*.agent_chunk.contains_speech",
        "ticks.*.user_chunk.turn_taking_action",
        "ticks.*.user_chunk.turn_taking_action.action",
    )
)


@dataclass
class Seed:
    kind: str  # log | tau2-file | tau2-dir | toml-scenario | toml-gallery
    name: str
    files: dict[str, bytes]
    """Relative path → content; the first one is the one mutated."""


@dataclass
class Case:
    number: int
    seed: Seed
    mutation: str
    command: str
    breaks_data: bool
    """The mutation destroys or corrupts data cutin reads: it must be reported."""
    files: dict[str, bytes] = field(default_factory=dict)
    special: str | None = None
    note: str = ""
    name: str = ""
    """A hostile part of the file and folder names (see :data:`NAMES`)."""


@dataclass
class Outcome:
    case: Case
    status: str  # clean-error | loaded | loaded-with-warning | <failure kinds>
    code: int | None
    seconds: float
    stdout: str = ""
    stderr: str = ""
    detail: str = ""


FAILURES = (
    "traceback",
    "hang",
    "nan",
    "raw-control",
    "split-line",
    "bad-json",
    "live-markup",
    "silent-drop",
    "bad-error",
    "vague-binary",
)


# ---------------------------------------------------------------- seeds
def _simulated_logs(cache: Path) -> list[Seed]:
    from cutin_tui.cli import main

    out = cache / "logs"
    if not any(out.glob("*.jsonl")):
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            main(
                [
                    "simulate",
                    "--scenario",
                    "retail-order-change",
                    "--scenario",
                    "clinic-triage",
                    "--beta",
                    "0,0.8",
                    "--runs",
                    "1",
                    "--seed",
                    "7",
                    "--out",
                    str(out),
                ]
            )
    return [
        Seed("log", p.name, {"call.jsonl": p.read_bytes()}) for p in sorted(out.glob("*.jsonl"))
    ]


SIDECAR = "results.json.cutin-verdicts.jsonl"


def _judged(cache: Path, results: bytes) -> bytes | None:
    """The verdict sidecar `cutin judge` writes for ``results``."""
    from cutin_tui.cli import main

    folder = cache / "judged"
    if not (folder / SIDECAR).is_file():
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "results.json").write_bytes(results)
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            main(["judge", str(folder / "results.json")])
    return (folder / SIDECAR).read_bytes() if (folder / SIDECAR).is_file() else None


def _tau2_seeds(cache: Path) -> list[Seed]:
    if not TAU2_DIR.is_dir():
        return []
    seeds: list[Seed] = []
    mono = TAU2_DIR / "text_airline_results.json"
    if mono.is_file():
        data = json.loads(mono.read_bytes())
        small = {**data, "simulations": data["simulations"][:3]}
        seeds.append(Seed("tau2-file", "airline[:3]", {"results.json": _dump(small).encode()}))
        sidecar = _judged(cache, _dump(small).encode())
        if sidecar is not None:
            seeds.append(
                Seed(
                    "tau2-sidecar",
                    "airline[:3] verdict sidecar",
                    {SIDECAR: sidecar, "results.json": _dump(small).encode()},
                )
            )
    folder = TAU2_DIR / "voice_full_duplex"
    if folder.is_dir():
        sims = sorted((folder / "simulations").glob("*.json"))
        if sims:
            sim = json.loads(sims[0].read_bytes())
            sim["ticks"] = sim["ticks"][:400]
            seeds.append(
                Seed(
                    "tau2-dir",
                    "voice_full_duplex[0][:400 ticks]",
                    {
                        f"simulations/{sims[0].name}": _dump(sim).encode(),
                        "results.json": (folder / "results.json").read_bytes(),
                    },
                )
            )
            seeds.append(
                Seed(
                    "tau2-dir",
                    "voice_full_duplex results.json",
                    {
                        "results.json": (folder / "results.json").read_bytes(),
                        f"simulations/{sims[0].name}": _dump(sim).encode(),
                    },
                )
            )
    return seeds


def _toml_seeds() -> list[Seed]:
    scen = sorted((REPO_ROOT / "sessions" / "scenarios" / "data").glob("*.toml"))
    gal = sorted((REPO_ROOT / "replay" / "gallery" / "data").glob("*.toml"))
    prof = sorted((REPO_ROOT / "sessions" / "scenarios" / "profiles").glob("*.toml"))
    return (
        [Seed("toml-scenario", p.name, {"scenario.toml": p.read_bytes()}) for p in scen[:2]]
        + [
            # A fresh id, or the entry would only clash with its shipped original.
            Seed("toml-gallery", p.name, {"entry.toml": _fresh_id(p.read_bytes())})
            for p in gal[:3]
        ]
        + [Seed("toml-profile", p.name, {"profile.toml": p.read_bytes()}) for p in prof[:1]]
    )


def _fresh_id(raw: bytes) -> bytes:
    return re.sub(rb'(?m)^id = ".*"$', b'id = "fuzz-entry"', raw, count=1)


def _positions_seed(cache: Path) -> list[Seed]:
    """The positions file `cutin positions extract` writes from the simulated logs."""
    from cutin_tui.cli import main

    out = cache / "positions.jsonl"
    if not out.is_file():
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            main(["positions", "extract", str(cache / "logs"), "-o", str(out)])
    return [Seed("positions", "positions extract", {"positions.jsonl": out.read_bytes()})]


def seeds(cache: Path) -> list[Seed]:
    logs = _simulated_logs(cache)
    return logs + _tau2_seeds(cache) + _toml_seeds() + _positions_seed(cache)


JSONL_KINDS = frozenset({"log", "tau2-sidecar", "positions"})
POSITION_FIELDS = frozenset(
    {"id", "conversation", "source", "scenario", "turn", "system", "history", "reply"}
)


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=None)


# ---------------------------------------------------------------- mutations
def _log_fields() -> dict[str, set[str]]:
    """Typed fields of each session-log line type (from the log's own models)."""
    from pydantic import BaseModel

    from sessions.log import models

    out: dict[str, set[str]] = {}
    for obj in vars(models).values():
        if isinstance(obj, type) and issubclass(obj, BaseModel):
            fields = obj.model_fields
            kind = fields.get("type")
            name = kind.default if kind is not None else None
            if isinstance(name, str):
                out[name] = {
                    k
                    for k, f in fields.items()
                    if k not in ("type",) and "Any" not in str(f.annotation)
                }
    out["header"] = out.get("header", set()) - {"schema_"}
    return out


_LOG_FIELDS: dict[str, set[str]] | None = None


def _typed_paths_log(lines: list[Any]) -> list[tuple[int, str]]:
    global _LOG_FIELDS
    if _LOG_FIELDS is None:
        _LOG_FIELDS = _log_fields()
    out: list[tuple[int, str]] = []
    for i, obj in enumerate(lines):
        if not isinstance(obj, dict):
            continue
        typed = _LOG_FIELDS.get(str(obj.get("type", "header" if i == 0 else "")), set())
        out.extend((i, k) for k in obj if k in typed and obj[k] is not None)
    return out


def _walk(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    stack = [(path, value)]
    while stack:
        p, v = stack.pop()
        yield p, v
        if isinstance(v, dict):
            stack.extend(((*p, k), c) for k, c in v.items())
        elif isinstance(v, list):
            stack.extend(((*p, i), c) for i, c in enumerate(v))


def _matches(path: tuple[Any, ...], pattern: tuple[str, ...]) -> bool:
    if len(path) != len(pattern):
        return False
    return all(q == "*" or str(p) == q for p, q in zip(path, pattern, strict=True))


def _tau2_typed_paths(doc: Any) -> list[tuple[Any, ...]]:
    roots: list[tuple[Any, ...]] = []
    if isinstance(doc, dict) and isinstance(doc.get("simulations"), list):
        roots = [("simulations", i) for i in range(len(doc["simulations"]))]
    elif isinstance(doc, dict) and "task_id" in doc:
        roots = [()]
    out = []
    for root in roots:
        sub = _get(doc, root)
        for p, v in _walk(sub):
            if v is not None and any(_matches(p, pat) for pat in TAU2_FIELDS):
                out.append((*root, *p))
    return out


def _get(doc: Any, path: tuple[Any, ...]) -> Any:
    for p in path:
        doc = doc[p]
    return doc


def _set(doc: Any, path: tuple[Any, ...], value: Any) -> None:
    _get(doc, path[:-1])[path[-1]] = value


IDS = frozenset({"id", "task_id", "trial", "seed"})
"""τ2 fields that may be a string or an integer."""


def _wrong_for(value: Any, rng: random.Random, key: object = None) -> Any:
    for kind in (bool, str, int, float, list, dict):
        if isinstance(value, kind):
            choices = WRONG[kind]
            if key in IDS:
                choices = tuple(c for c in choices if not isinstance(c, int | str))
            return rng.choice(choices)
    return True


class Raw(str):
    """JSON text spliced in verbatim (NaN, huge literals, deep nesting)."""


def _encode(value: Any) -> str:
    """json.dumps where :class:`Raw` values are spliced in as written."""
    slots: list[str] = []

    def mark(v: Any) -> Any:
        if isinstance(v, Raw):
            slots.append(str(v))
            return f"\x00RAW{len(slots) - 1}\x00"
        if isinstance(v, dict):
            return {k: mark(c) for k, c in v.items()}
        if isinstance(v, list):
            return [mark(c) for c in v]
        return v

    text = _dump(mark(value))
    for i, raw in enumerate(slots):
        text = text.replace(json.dumps(f"\x00RAW{i}\x00"), raw)
    return text


def _deep(depth: int, rng: random.Random) -> Raw:
    if rng.random() < 0.5:
        return Raw("[" * depth + "]" * depth)
    return Raw('{"a":' * depth + "1" + "}" * depth)


def _strings(doc: Any) -> list[tuple[Any, ...]]:
    return [p for p, v in _walk(doc) if isinstance(v, str) and p and len(v) > 2]


def _numbers(doc: Any) -> list[tuple[Any, ...]]:
    return [
        p for p, v in _walk(doc) if isinstance(v, int | float) and not isinstance(v, bool) and p
    ]


Mutator = Callable[[Seed, random.Random], tuple[bytes, bool]]
_NOTES: list[str] = []
"""What the last mutation did (for describing a failing case)."""


def _note(text: str) -> None:
    _NOTES.append(text[:200])


def _docs(seed: Seed) -> tuple[list[Any], bool]:
    """The seed's first file as parsed JSON documents (one per line for JSONL)."""
    raw = next(iter(seed.files.values())).decode("utf-8")
    if seed.kind in JSONL_KINDS:
        return [json.loads(line) for line in raw.splitlines() if line.strip()], True
    return [json.loads(raw)], False


def _join(docs: list[Any], jsonl: bool) -> bytes:
    if jsonl:
        return ("\n".join(_encode(d) for d in docs) + "\n").encode("utf-8", "surrogatepass")
    return _encode(docs[0]).encode("utf-8", "surrogatepass")


def _pick_target(
    seed: Seed, docs: list[Any], rng: random.Random, kind: str
) -> tuple[int, tuple[Any, ...]] | None:
    """A (document, path) to mutate: a typed field, a string or a number."""
    if kind == "typed":
        if seed.kind == "positions":
            choices = [(i, (k,)) for i, d in enumerate(docs) for k in d if k in POSITION_FIELDS]
        elif seed.kind in JSONL_KINDS:
            choices = [(i, (k,)) for i, k in _typed_paths_log(docs)]
        else:
            choices = [(0, p) for p in _tau2_typed_paths(docs[0])]
    else:
        finder = _strings if kind == "string" else _numbers
        choices = [(i, p) for i, d in enumerate(docs) for p in finder(d)]
    return rng.choice(choices) if choices else None


def _replace(
    seed: Seed,
    rng: random.Random,
    kinds: tuple[str, ...],
    value: Callable[[Any, object], Any],
    times: int | tuple[int, int] = 1,
) -> tuple[bytes, bool]:
    """Replace ``times`` targets of one of ``kinds`` (typed | string | number) in the
    seed's first file by ``value(old, key)``; returns the bytes and whether anything changed."""
    docs, jsonl = _docs(seed)
    changed = False
    for _ in range(times if isinstance(times, int) else rng.randint(*times)):
        kind = kinds[0] if len(kinds) == 1 else rng.choice(kinds)
        target = _pick_target(seed, docs, rng, kind)
        if target is None:
            break
        i, path = target
        new = value(_get(docs[i], path), path[-1])
        _set(docs[i], path, new)
        _note(f"doc {i} {path} = {str(new)[:40]!r}")
        changed = True
    return _join(docs, jsonl), changed


def m_wrong_type(seed: Seed, rng: random.Random) -> tuple[bytes, bool]:
    return _replace(seed, rng, ("typed",), lambda old, key: _wrong_for(old, rng, key))


def m_nonfinite(seed: Seed, rng: random.Random) -> tuple[bytes, bool]:
    return _replace(seed, rng, ("number",), lambda old, key: Raw(rng.choice(NONFINITE)))


def m_huge_int(seed: Seed, rng: random.Random) -> tuple[bytes, bool]:
    literal = ""

    def huge(old: Any, key: object) -> Raw:
        nonlocal literal
        literal = rng.choice(HUGE_INTS)
        return Raw(literal)

    raw, changed = _replace(seed, rng, ("number", "typed"), huge)
    # A 20-digit integer is a legal value for an untyped field; it breaks data only
    # where cutin reads a number of bounded range.
    return raw, changed and len(literal.lstrip("-")) > 30


EXTREMES = (0, -1, -0.0, 1e-300, 5e-324, 1e17, -1e17, 2**63, -(2**63), 10**29, 0.1)


def m_extreme(seed: Seed, rng: random.Random) -> tuple[bytes, bool]:
    """Finite numbers at the edges (zero, negative, tiny, huge): allowed to load or be
    refused, never to crash or to print NaN/Inf."""
    raw, _ = _replace(seed, rng, ("number",), lambda old, key: rng.choice(EXTREMES), times=(1, 3))
    return raw, False


def m_deep(seed: Seed, rng: random.Random) -> tuple[bytes, bool]:
    depths = (70, 200, 1000, 5000, 100_000)
    return _replace(
        seed, rng, ("string", "number", "typed"), lambda old, key: _deep(rng.choice(depths), rng)
    )


def m_text(payloads: tuple[str, ...]) -> Mutator:
    def insert(old: str, rng: random.Random) -> str:
        at = rng.randint(0, len(old))
        return old[:at] + rng.choice(payloads) + old[at:]

    def mutate(seed: Seed, rng: random.Random) -> tuple[bytes, bool]:
        raw, _ = _replace(seed, rng, ("string",), lambda old, key: insert(old, rng), times=(1, 4))
        return raw, False

    return mutate


def m_surrogate(seed: Seed, rng: random.Random) -> tuple[bytes, bool]:
    def lone(text: str, key: object) -> Raw:
        at = rng.randint(0, len(text))
        bad = rng.choice(("\\ud800", "\\udfff", "\\udc00\\ud800", "\\ud83d"))
        return Raw(json.dumps(text[:at])[:-1] + bad + json.dumps(text[at:])[1:])

    raw, _ = _replace(seed, rng, ("string",), lone)
    return raw, False


def _raw(seed: Seed) -> bytes:
    return next(iter(seed.files.values()))


def m_torn(seed: Seed, rng: random.Random) -> tuple[bytes, bool]:
    raw = _raw(seed)
    cut = rng.randint(1, max(1, len(raw) - 1))
    # Cut at a line end, a log is a valid shorter log (a call that ended there or is
    # still running): nothing to report. Torn TOML can be valid TOML saying less.
    if seed.kind.startswith("toml"):
        return raw[:cut], False
    at_line_end = b"\n" in (raw[cut - 1 : cut], raw[cut : cut + 1])
    return raw[:cut], not (seed.kind in JSONL_KINDS and at_line_end)


def m_flip(seed: Seed, rng: random.Random) -> tuple[bytes, bool]:
    raw = bytearray(_raw(seed))
    for _ in range(rng.randint(1, 4)):
        pos = rng.randrange(len(raw))
        raw[pos] = rng.choice((raw[pos] ^ (1 << rng.randrange(8)), rng.randrange(256)))
    # A flipped letter is different data, not lost data: judged for crashes only.
    return bytes(raw), False


def m_lines(seed: Seed, rng: random.Random) -> tuple[bytes, bool]:
    """Torn, garbled, doubled or swapped lines in the middle of a file."""
    lines = _raw(seed).split(b"\n")
    if len(lines) < 3:
        return m_torn(seed, rng)
    i = rng.randrange(1, len(lines) - 1)
    op = rng.choice(("tear", "garble", "swap", "dup", "blank", "array", "scalar"))
    breaks = True
    if op == "tear":
        lines[i] = lines[i][
            : rng.randint(1, max(1, len(lines[i]) - 1))
        ]  # not blank: a blank line is no record
    if op == "garble":
        lines[i] = rng.choice((b"\xff\xfe garbage", b"{not json", b"}", b"\x00" * 20))
    if op == "swap" and i + 1 < len(lines):
        lines[i], lines[i + 1] = lines[i + 1], lines[i]
        breaks = False
    if op == "dup":
        lines.insert(i, lines[i])
        breaks = False
    if op == "blank":
        lines.insert(i, b"   ")
        breaks = False
    _note(f"line {i + 1}: {op}")
    if op == "array":
        lines[i] = b"[" + lines[i] + b"]"
    if op == "scalar":
        lines[i] = rng.choice((b"5", b"null", b'"text"', b"true"))
    return b"\n".join(lines), breaks


def m_encoding(seed: Seed, rng: random.Random) -> tuple[bytes, bool]:
    text = _raw(seed).decode("utf-8")
    codec = rng.choice(("utf-16", "utf-16-le", "utf-16-be", "utf-32", "latin-1", "utf-8-sig"))
    try:
        raw = text.encode(codec)
    except UnicodeEncodeError:
        raw = text.encode("latin-1", "replace")
    _note(codec)
    # Latin-1 of pure ASCII is the same bytes, and "?" for what Latin-1 lacks is still
    # UTF-8: different data, not unreadable data. Only undecodable bytes must be reported.
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw, True
    return raw, codec.startswith(("utf-16", "utf-32"))


BINARIES = (
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x04",
    b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\xab\xae\xe5\x02\x00",
    b"PK\x03\x04\x14\x00\x00\x00\x08\x00",
    b"RIFF$\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00",
    b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n",
    b"\x7fELF\x02\x01\x01\x00",
    b"SQLite format 3\x00\x10\x00",
    b"\x01\x02\x00\x00\xf3\x00\x00\x07\x00\x00\x00" * 8,  # no magic: NULs
)
"""Files that are not text at all (an image, an archive, audio, a PDF, a database)."""


def m_binary(seed: Seed, rng: random.Random) -> tuple[bytes, bool]:
    """The file replaced by a binary one: the error must say it is a binary file."""
    raw = rng.choice(BINARIES) + rng.randbytes(rng.choice((0, 64, 4096)))
    _note(f"binary: {raw[:8]!r}")
    return raw, True


def m_empty(seed: Seed, rng: random.Random) -> tuple[bytes, bool]:
    return rng.choice(
        (b"", b"\n", b"   \n\n", b"\x00" * 64, b"\xef\xbb\xbf", b"{}", b"[]", b"null")
    ), True


def m_huge_text(seed: Seed, rng: random.Random) -> tuple[bytes, bool]:
    texts = ("word " * 200_000, "x" * 1_000_000, "\n" * 100_000)
    raw, _ = _replace(seed, rng, ("string",), lambda old, key: rng.choice(texts))
    return raw, False


def m_toml(seed: Seed, rng: random.Random) -> tuple[bytes, bool]:
    """TOML-specific: inf/nan, huge ints, deep arrays, wrong types, escapes."""
    text = _raw(seed).decode("utf-8")
    lines = text.split("\n")
    values = [i for i, line in enumerate(lines) if re.match(r"^\s*[A-Za-z_]+\s*=", line)]
    if not values:
        return m_torn(seed, rng)
    i = rng.choice(values)
    key = lines[i].split("=", 1)[0]
    breaking = ("inf", "nan", "-inf", "1" * 5000, "[" * 3000 + "]" * 3000, "[" * 80 + "]" * 80)
    harmless = (  # may or may not be valid where they land; must never crash
        "true",
        "{ a = 1 }",
        '"\\u001b]0;' + MARKER + '\\u0007"',
        '"' + MARKUP[0] + '"',
        '"\\ud800"',
    )
    value = rng.choice(breaking + harmless)
    lines[i] = f"{key}= {value}"
    _note(f"line {i + 1}: {lines[i][:80]}")
    return "\n".join(lines).encode("utf-8"), value in breaking


def m_type_shape(seed: Seed, rng: random.Random) -> tuple[bytes, bool]:
    """An event whose ``type`` is a list or an object (was a set lookup: unhashable)."""
    docs, jsonl = _docs(seed)
    events = [i for i, d in enumerate(docs) if i > 0 and isinstance(d, dict) and "type" in d]
    if seed.kind != "log" or not events:
        return m_wrong_type(seed, rng)
    i = rng.choice(events)
    docs[i]["type"] = json.loads(json.dumps(rng.choice(EVENT_TYPES)))
    _note(f"line {i + 1}: type = {docs[i]['type']!r}")
    return _join(docs, jsonl), True


ID_KEYS = frozenset({"session_id", "id", "task_id", "trial", "conversation"})


def m_id_controls(seed: Seed, rng: random.Random) -> tuple[bytes, bool]:
    """DEL and C1 controls, raw, in the ids a report, audit or judge prints."""
    docs, jsonl = _docs(seed)
    targets = [
        (i, path)
        for i, d in enumerate(docs)
        for path, v in _walk(d)
        if path and path[-1] in ID_KEYS and isinstance(v, str)
    ]
    if not targets:
        return m_text(ESCAPES)(seed, rng)
    for _ in range(rng.randint(1, 3)):
        i, path = rng.choice(targets)
        old = _get(docs[i], path)
        at = rng.randint(0, len(old))
        _set(docs[i], path, old[:at] + rng.choice(C1_IDS) + old[at:])
        _note(f"doc {i} {path}")
    return _join(docs, jsonl), False


HUGE_TEXTS = (
    " ".join(["word"] * 30_000),  # 30,000 words: once minutes of simulation
    "x" * 6_000_000,  # 6 MB, one word
    ("A sentence of several words, with a comma. " * 400).strip(),  # 2,800 words
)


def m_huge_turn(seed: Seed, rng: random.Random) -> tuple[bytes, bool]:
    """Scenario and profile files past their size limits: a huge agent or caller turn,
    thousands of turns, a huge system prompt or quantile table. Each must be refused
    at once, naming the file, the field and the limit, never simulated for minutes."""
    text = _raw(seed).decode("utf-8")
    huge = rng.choice(HUGE_TEXTS)
    if seed.kind == "toml-profile":
        op = rng.choice(("table", "description"))
        if op == "table":
            key, value = rng.choice(
                (("turn_words", "20"), ("words_per_minute", "150"), ("comma_pause_s", "0.2"))
            )
            n = rng.choice((2_000, 200_000))
            line = f"{key} = [{', '.join([value] * n)}]"
            text = re.sub(rf"(?m)^{key} = .*$", lambda m: line, text, count=1)
            _note(f"{key}: {n:,} values")
        else:
            text = re.sub(r'(?m)^description = ".*"$', lambda m: f'description = "{huge}"', text)
            _note(f"description: {len(huge):,} characters")
        return text.encode("utf-8"), True
    if seed.kind != "toml-scenario":
        return m_toml(seed, rng)
    op = rng.choice(("agent", "agent", "user", "many-turns", "prompt", "extra"))
    if op == "agent":
        text = text.replace('[[agent.turns]]\ntext = "', f'[[agent.turns]]\ntext = "{huge} ', 1)
    elif op == "user":
        text = re.sub(r"(?m)^turns = \[", lambda m: f'turns = ["{huge}",', text, count=1)
    elif op == "many-turns":
        text += '\n[[agent.turns]]\ntext = "Hello there. How can I help?"\n' * 5_000
    elif op == "prompt":
        text = re.sub(r'(?ms)^system_prompt = """.*?"""\n', "", text)  # only the new one
        text = re.sub(r"(?m)^\[agent\]$", lambda m: f'[agent]\nsystem_prompt = "{huge}"', text)
        if huge.startswith("A sentence"):  # 2,800 words is a fine prompt: make it 30,000
            text = text.replace(huge, HUGE_TEXTS[0], 1)
    else:
        text = text.replace(
            '[[agent.turns]]\ntext = "', f'[[agent.turns]]\nextra = ["{huge}"]\ntext = "', 1
        )
    _note(f"{op}: {len(huge):,} characters")
    return text.encode("utf-8"), True


MUTATIONS: dict[str, Mutator] = {
    "wrong-type": m_wrong_type,
    "nonfinite": m_nonfinite,
    "huge-int": m_huge_int,
    "extreme": m_extreme,
    "deep": m_deep,
    "escapes": m_text(ESCAPES),
    "markup": m_text(MARKUP),
    "surrogate": m_surrogate,
    "torn": m_torn,
    "flip": m_flip,
    "lines": m_lines,
    "encoding": m_encoding,
    "empty": m_empty,
    "huge-text": m_huge_text,
    "type-shape": m_type_shape,
    "id-controls": m_id_controls,
    "binary": m_binary,
}
SPECIALS = ("fifo", "dev-zero", "dir", "unreadable", "dangling", "fifo-in-folder")
LOCKS = ("locked-folder", "locked-parent", "locked-subfolder")
"""Folders (chmod 000) the command may not list or enter."""


# ---------------------------------------------------------------- cases
def make_case(number: int, seeds: list[Seed], rng: random.Random, locks: bool = True) -> Case:
    """Case ``number``; ``locks``: whether unreadable folders can be made (see the
    module docstring)."""
    case = _make_case(number, seeds, rng, LOCKS if locks else ())
    if rng.random() < 0.1:  # any case, under a hostile file and folder name
        case.name = rng.choice(NAMES)
    return case


def _make_case(number: int, seeds: list[Seed], rng: random.Random, locks: tuple[str, ...]) -> Case:
    # Logs and τ2 files are most of what users open; TOML gets one case in six.
    families = sorted({s.kind.split("-")[0] for s in seeds})
    weights = [1 if f in ("toml", "positions") else 2.5 for f in families]
    family = rng.choices(families, weights)[0]
    seed = rng.choice([s for s in seeds if s.kind.split("-")[0] == family])
    if seed.kind.startswith("toml"):
        if seed.kind == "toml-scenario":
            command = rng.choice(("judge-scenario", "judge-scenario", "simulate-scenario"))
        elif seed.kind == "toml-profile":
            command = "simulate-profile"
        else:
            command = rng.choice(("overlaps-check", "handout"))
        if rng.random() < 0.1:
            special = rng.choice((*SPECIALS[:5], *locks[:2]))
            return Case(
                number, seed, f"special:{special}", command, True, dict(seed.files), special
            )
        _NOTES.clear()
        roll = rng.random()
        if roll < 0.25 and seed.kind in ("toml-scenario", "toml-profile"):
            mutation, (raw, breaks) = "huge-turn", m_huge_turn(seed, rng)
        elif roll < 0.65:
            mutation, (raw, breaks) = "toml", m_toml(seed, rng)
        else:
            mutation = rng.choice(("torn", "flip", "encoding", "empty", "binary"))
            raw, breaks = MUTATIONS[mutation](seed, rng)
        files = dict(seed.files)
        files[next(iter(files))] = raw
        return Case(number, seed, mutation, command, breaks, files, note="; ".join(_NOTES))
    command = rng.choice(
        ("report-md", "report-html", "report-json", "audit", "audit-json", "judge")
    )
    if seed.kind == "positions":
        command = "positions"
    if rng.random() < 0.06:
        special = rng.choice((*SPECIALS, *locks))
        return Case(number, seed, f"special:{special}", command, True, dict(seed.files), special)
    name = rng.choice(tuple(MUTATIONS))
    _NOTES.clear()
    raw, breaks = MUTATIONS[name](seed, rng)
    files = dict(seed.files)
    files[next(iter(files))] = raw
    return Case(number, seed, name, command, breaks, files, note="; ".join(_NOTES))


def _named(case: Case) -> dict[str, bytes]:
    """The case's files, the first one renamed with the hostile name (not the τ2
    folder layouts, whose names are structure: their folder gets the name)."""
    files = dict(case.files)
    if not case.name or case.seed.kind in ("tau2-dir", "tau2-sidecar"):
        return files
    first = Path(next(iter(files)))
    renamed = str(first.with_name(first.stem + case.name + first.suffix))
    return {renamed if rel == str(first) else rel: raw for rel, raw in files.items()}


def _lay_out(case: Case, root: Path) -> tuple[list[str], list[Path]]:
    """Write the case's files under ``root``; returns the PATH arguments and the
    folders made unreadable (to be opened again before the case is removed)."""
    special = case.special
    # Never the case's own folder: the harness writes there while the case is locked.
    place = root / f"in{case.name}" if case.name or special in LOCKS else root
    files = _named(case)
    for rel, raw in files.items():
        p = place / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(raw)
    first = place / next(iter(files))
    target = {"tau2-dir": place, "tau2-sidecar": place / "results.json"}.get(case.seed.kind, first)
    locked: list[Path] = []
    if special in LOCKS:
        folder = first.parent
        if special == "locked-folder" and not case.seed.kind.startswith(("toml", "positions")):
            folder = place / "logs"  # the folder given, unreadable itself
            folder.mkdir()
            for rel in files:
                dest = folder / rel
                dest.parent.mkdir(parents=True, exist_ok=True)
                (place / rel).rename(dest)
            target = folder
        elif special == "locked-subfolder" and case.seed.kind == "log":
            folder = place / "sub"  # beside a readable log: its log must not vanish
            folder.mkdir()
            (folder / "second.jsonl").write_bytes(files[next(iter(files))])
            target = place
        folder.chmod(0)
        locked.append(folder)
    elif special is not None:
        victim = first
        victim.unlink()
        if special == "fifo":
            os.mkfifo(victim)
        elif special == "dev-zero":
            victim.symlink_to("/dev/zero")
        elif special == "dir":
            victim.mkdir()
        elif special == "unreadable":
            # Root reads any mode-000 file, so use one that fails to read for everyone.
            victim.symlink_to("/proc/self/mem")
        elif special == "dangling":
            victim.symlink_to(place / "no-such-file")
        elif special == "fifo-in-folder":
            # Among the logs of a folder, or the simulations of a τ2 results folder.
            extra = place / (
                "simulations/zz.json" if case.seed.kind.startswith("tau2") else "zz.jsonl"
            )
            extra.parent.mkdir(parents=True, exist_ok=True)
            os.mkfifo(extra)
            victim.write_bytes(files[next(iter(files))])
            target = place
    return [str(target)], locked


def _argv(case: Case, paths: list[str], root: Path) -> list[str]:
    c = case.command
    if c == "positions":
        return [POSITIONS, *paths]
    if c.startswith("report-"):
        return ["report", *paths, "--format", c.removeprefix("report-")]
    if c == "audit":
        return ["audit", *paths, "--resamples", "50"]
    if c == "audit-json":
        return ["audit", *paths, "--json", "--resamples", "50"]
    if c == "judge":
        return ["judge", *paths, "-v", *(["--dry-run"] if case.number % 2 else [])]
    if c == "judge-scenario":
        log = root / "plain.jsonl"
        _plain_log(log)
        return ["judge", str(log), "--dry-run", "--scenario", paths[0]]
    if c == "simulate-scenario":
        return [*SIMULATE, str(root / "sim"), "--scenario", paths[0]]
    if c == "simulate-profile":
        return [
            *SIMULATE,
            str(root / "sim"),
            "--scenario",
            "clinic-triage",
            "--agent-profile",
            paths[0],
        ]
    if c == "handout":
        return ["overlaps", "--export", str(root / HANDOUT), "--dir", paths[0]]
    return ["overlaps", "--check", *paths, "--no-sound", "--speed", "1000"]


HANDOUT = "handout.html"
SIMULATE = ("simulate", "--beta", "0", "--runs", "1", "--seed", "3", "--out")


def _plain_log(path: Path) -> None:
    from sessions.log import EndEvent
    from tests.support.logs import header, write_log

    head = header("plain", started_at="2026-01-01T00:00:00+00:00", scenario=None, tendencies=None)
    write_log(path, [EndEvent(t=1.0)], head)


POSITIONS = "(read positions)"
"""Not a command: positions files are read by prompt-audit, which then needs an LLM."""


def _read_positions(path: str) -> int:
    """Read a positions file as `cutin prompt-audit` does, with the CLI's error contract."""
    from replay.prompted.positions_io import read_positions
    from sessions.hostile.safe_files import FileError, terminal_line

    try:
        print(f"{len(read_positions(Path(path)))} positions")
    except FileError as exc:
        print(f"cutin: {terminal_line(str(exc))}", file=sys.stderr)
        return 2
    return 0


class Hang(Exception):
    pass


# ---------------------------------------------------------------- unreadable folders
_DAC_CAPS = (1 << 1) | (1 << 2)
"""CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH: what lets root read a mode-000 folder."""
_CAP_V3 = 0x20080522


def _set_dac_caps(on: bool) -> bool:
    """Raise or lower root's file-access capabilities in this process's effective set
    (the permitted set keeps them, so they can be raised again). False if not possible."""
    import ctypes

    class Header(ctypes.Structure):
        _fields_ = (("version", ctypes.c_uint32), ("pid", ctypes.c_int))

    class Data(ctypes.Structure):
        _fields_ = (
            ("effective", ctypes.c_uint32),
            ("permitted", ctypes.c_uint32),
            ("inheritable", ctypes.c_uint32),
        )

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        header, data = Header(_CAP_V3, 0), (Data * 2)()
        if libc.capget(ctypes.byref(header), data) != 0:
            return False
        if on:
            data[0].effective |= data[0].permitted & _DAC_CAPS
        else:
            data[0].effective &= ~_DAC_CAPS
        return bool(libc.capset(ctypes.byref(header), data) == 0)
    except (OSError, AttributeError):
        return False


@contextlib.contextmanager
def _permissions_bind(active: bool) -> Iterator[None]:
    """While a locked-folder case runs: mode 000 denies this process too, even as root."""
    lowered = active and os.geteuid() == 0 and _set_dac_caps(False)
    try:
        yield
    finally:
        if lowered:
            _set_dac_caps(True)


def can_lock(work: Path) -> bool:
    """Whether a mode-000 folder made here is unreadable to this process while
    :func:`_permissions_bind` is on (as any user; as root, if capabilities can be
    lowered). If not, the locked-folder shapes are left out of the run."""
    probe = work / "lock-probe"
    probe.mkdir(parents=True, exist_ok=True)
    probe.chmod(0)
    try:
        with _permissions_bind(True):
            os.listdir(probe)
    except PermissionError:
        return True
    finally:
        probe.chmod(0o700)
        probe.rmdir()
    return False


def _alarm(signum: int, frame: Any) -> None:
    raise Hang()


_NAN = re.compile(r"(?<![A-Za-z0-9_])(nan|inf|infinity|-inf)(?![A-Za-z0-9_])", re.IGNORECASE)
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_LIVE_HTML = re.compile(rf"<(script|img|h1)[^>]*>?[^<]*{MARKER}")
"""Markup from a file that an HTML page (or a Markdown viewer, which passes HTML) runs."""
_LIVE_MD = re.compile(rf"(?<!\\)\]\(javascript:{MARKER}")
"""A Markdown link from a file (inert text in HTML)."""


def run_case(case: Case, workdir: Path) -> Outcome:
    from cutin_tui.cli import main

    root = workdir / f"case{case.number}"
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    paths, locked = _lay_out(case, root)
    argv = _argv(case, paths, root)
    out_b, err_b = io.BytesIO(), io.BytesIO()
    out = io.TextIOWrapper(out_b, encoding="utf-8", errors="strict", write_through=True)
    err = io.TextIOWrapper(err_b, encoding="utf-8", errors="strict", write_through=True)
    old = signal.signal(signal.SIGALRM, _alarm)
    start = time.perf_counter()
    code: int | None = None
    status = ""
    detail = ""
    try:
        signal.setitimer(signal.ITIMER_REAL, TIME_LIMIT_S)
        with (
            contextlib.redirect_stdout(out),
            contextlib.redirect_stderr(err),
            _permissions_bind(bool(locked)),
        ):
            code = _read_positions(argv[1]) if argv[0] == POSITIONS else main(argv)
    except Hang:
        status = "hang"
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 2
    except BaseException:
        status = "traceback"
        detail = traceback.format_exc(limit=-6)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
        for folder in locked:
            folder.chmod(0o700)
    seconds = time.perf_counter() - start
    with contextlib.suppress(ValueError):
        out.flush()
        err.flush()
    stdout = out_b.getvalue().decode("utf-8", "replace")
    if (root / HANDOUT).is_file():  # judged like the report: what a reader opens
        stdout += (root / HANDOUT).read_text(encoding="utf-8", errors="replace")
    stderr = err_b.getvalue().decode("utf-8", "replace")
    if not status:
        status = _judge(case, code, stdout, stderr)
    shutil.rmtree(root, ignore_errors=True)
    return Outcome(case, status, code, seconds, stdout[-KEEP:], stderr[-KEEP:], detail)


def _judge(case: Case, code: int | None, stdout: str, stderr: str) -> str:
    both = stdout + stderr
    # An error may quote the token it refused ("NaN is not a finite number").
    quoted = [line for line in stderr.splitlines() if "finite" not in line]
    if _NAN.search(stdout) or any(_NAN.search(line) for line in quoted):
        return "nan"
    if _CONTROL.search(both.replace("\n", "").replace("\t", "")):
        return "raw-control"
    if re.search(rf"(?m)^{NEWLINE_MARKER}", re.sub("[\r\u2028\u2029\x85]", "\n", both)):
        return "split-line"  # a file name's CR or LF split a line, or began a forged one
    if case.command in ("report-json", "audit-json") and code == 0:
        try:
            json.loads(stdout)
        except ValueError:
            return "bad-json"
    if case.command in ("report-html", "report-md", "handout") and _LIVE_HTML.search(stdout):
        return "live-markup"
    if case.command == "report-md" and _LIVE_MD.search(stdout):
        return "live-markup"
    if case.command == "overlaps-check" and code == 1 and stderr.strip():
        return "clean-error"  # the check's own verdict: the file does not validate
    if code == 2:
        lines = [line for line in stderr.splitlines() if line]
        if not lines or not all(line.startswith("cutin") for line in lines):
            return "bad-error"
        if case.mutation == "binary" and "binary file (" not in stderr:
            return "vague-binary"  # "not UTF-8 … UTF-16?" for a PNG says nothing useful
        return "clean-error"
    if code not in (0, 1):
        return "bad-error"
    warned = any(w in both for w in ("warning:", "skipped"))
    if case.breaks_data and not warned and _silent(case, stdout, stderr):
        return "silent-drop"
    return "loaded-with-warning" if warned else "loaded"


def _silent(case: Case, stdout: str, stderr: str) -> bool:
    """A data-breaking mutation that exited cleanly with no warning. Some cannot
    lose data (a torn τ2 file that is still valid JSON does not exist; a TOML change
    the command does not read): those are judged by the command's own report."""
    if case.command == "overlaps-check":
        return "ok" not in stdout.lower() and "shows" not in stdout.lower()
    return True


# ---------------------------------------------------------------- driver
def run(
    cases: int,
    seed: int,
    workdir: Path | None = None,
    cache: Path | None = None,
    progress: bool = False,
) -> tuple[Counter[str], list[Outcome], float]:
    own = workdir is None
    work = workdir or Path(tempfile.mkdtemp(prefix="cutin-hostile-"))
    cache = cache or work / "seeds"
    cache.mkdir(parents=True, exist_ok=True)
    # Replay reads sidecars and sessions relative to HOME/XDG; keep them inside work.
    os.environ["CUTIN_SESSIONS_DIR"] = str(work / "sessions")
    os.environ["CUTIN_CACHE_DIR"] = str(work / "cache")
    all_seeds = seeds(cache)
    rng = random.Random(seed)
    counts: Counter[str] = Counter()
    locks = can_lock(work)
    if not locks:
        counts["locks-unavailable"] = 1
    bad: list[Outcome] = []
    slowest = 0.0
    try:
        for n in range(cases):
            case = make_case(n, all_seeds, rng, locks)
            outcome = run_case(case, work)
            counts[outcome.status] += 1
            counts[f"mutation:{case.mutation.split(':')[0]}"] += 1
            if case.special is not None:
                counts[f"shape:{case.special}"] += 1
            if case.name:
                counts["shape:hostile-name"] += 1
            if case.mutation in ("type-shape", "id-controls", "huge-turn"):
                counts[f"shape:{case.mutation}"] += 1
            counts[f"command:{case.command}"] += 1
            slowest = max(slowest, outcome.seconds)
            if outcome.status in FAILURES:
                bad.append(outcome)
            if progress and (n + 1) % 500 == 0:
                print(f"{n + 1} cases: {_summary(counts)}", file=sys.stderr, flush=True)
    finally:
        if own:
            shutil.rmtree(work, ignore_errors=True)
    return counts, bad, slowest


def _summary(counts: Counter[str]) -> str:
    keys = ("clean-error", "loaded", "loaded-with-warning", *FAILURES)
    return ", ".join(f"{k} {counts.get(k, 0)}" for k in keys)


def describe(outcome: Outcome) -> str:
    c = outcome.case
    return (
        f"case {c.number}: {outcome.status} (exit {outcome.code}, {outcome.seconds:.1f} s) "
        f"seed {c.seed.kind} {c.seed.name}, mutation {c.mutation} ({c.note}), "
        f"name {c.name!r}, "
        f"command {c.command}\n"
        f"{outcome.detail}stderr: {outcome.stderr[-800:]!r}\nstdout: {outcome.stdout[-400:]!r}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.fuzz.hostile",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--cases", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--show", type=int, default=5, help="print this many failures")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    counts, bad, slowest = run(args.cases, args.seed, progress=True)
    print(
        f"cases {args.cases} (seed {args.seed}) in {time.perf_counter() - start:.0f} s, "
        f"slowest {slowest:.1f} s"
    )
    print(_summary(counts))
    print(
        "mutations: "
        + ", ".join(
            f"{k.removeprefix('mutation:')} {v}"
            for k, v in sorted(counts.items())
            if k.startswith("mutation:")
        )
    )
    print(
        "commands: "
        + ", ".join(
            f"{k.removeprefix('command:')} {v}"
            for k, v in sorted(counts.items())
            if k.startswith("command:")
        )
    )
    print(
        "shapes: "
        + ", ".join(
            f"{k.removeprefix('shape:')} {v}"
            for k, v in sorted(counts.items())
            if k.startswith("shape:")
        )
    )
    if counts.get("locks-unavailable"):
        print(
            "unreadable-folder shapes left out: running as root and root's file-access "
            "capabilities could not be lowered (capset), so mode 000 would not deny"
        )
    for outcome in bad[: args.show]:
        print("\n" + describe(outcome))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
