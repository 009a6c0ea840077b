"""What a user reads about a file (issue 32): a binary file is called one, in one line
and exit 2, by `cutin replay`, `report`, `audit` and `judge`; a file name holding a
Unicode line or paragraph separator stays on one line in every error and report."""

from __future__ import annotations

import gzip
import io
import json
import struct
import wave
import zipfile
import zlib
from pathlib import Path

import pytest

from cutin_tui.cli import main
from sessions.hostile.safe_files import FileError, binary_kind, read_text, shown_name, terminal_line
from sessions.log import EndEvent
from tests.support.logs import header, write_log


@pytest.fixture(autouse=True)
def _own_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUTIN_SESSIONS_DIR", str(tmp_path / "sessions"))
    monkeypatch.setenv("CUTIN_CACHE_DIR", str(tmp_path / "cache"))


def _png() -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", 2, 2, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"\x00" * 14))
        + chunk(b"IEND", b"")
    )


def _wav() -> bytes:
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(8000)
        w.writeframes(b"\x00\x01" * 800)
    return out.getvalue()


def _zip() -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        z.writestr("call.jsonl", '{"schema": "cutin.session/1"}\n')
    return out.getvalue()


# Real files of each kind, made by the libraries that write them (not hand-typed magic).
BINARIES = {
    "png": (_png(), "PNG image"),
    "gzip": (gzip.compress(b'{"schema": "cutin.session/1"}\n'), "gzip-compressed data"),
    "zip": (_zip(), "zip archive"),
    "wav": (_wav(), "WAV audio"),
    "pdf": (
        b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog >>\nendobj\n",
        "PDF document",
    ),
    "nul": (bytes(range(256)) * 4, "NUL bytes"),
}


@pytest.mark.parametrize("command", ["replay", "report", "audit", "judge"])
@pytest.mark.parametrize(
    ("suffix", "kind"), [(".png", "png"), (".jsonl", "png"), (".json", "gzip")]
)
def test_a_binary_file_is_called_one_in_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str, suffix: str, kind: str
) -> None:
    raw, said = BINARIES[kind]
    path = tmp_path / f"picture{suffix}"
    path.write_bytes(raw)
    code = main([command, str(path)])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err == (
        f"cutin: {path}: a binary file ({said}"
        + (": decompress it first" if kind == "gzip" else "")
        + "), not a cutin session log or τ2-bench file\n"
    )
    assert "UTF-16" not in err and "UTF-8" not in err


@pytest.mark.parametrize("name", sorted(BINARIES))
def test_every_text_reader_calls_a_binary_file_one(tmp_path: Path, name: str) -> None:
    raw, said = BINARIES[name]
    path = tmp_path / "scenario.toml"
    path.write_bytes(raw)
    assert binary_kind(raw) is not None and said in (binary_kind(raw) or "")
    with pytest.raises(FileError) as caught:
        read_text(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: a binary file ({said}") and "\n" not in message


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"])
def test_wide_text_without_a_bom_is_named_as_such_not_as_binary(tmp_path: Path, codec: str) -> None:
    text = '{"schema": "cutin.session/1", "note": "café ünïcödé"}\n' * 20
    raw = text.encode(codec)
    assert binary_kind(raw) is None
    path = tmp_path / "x.json"
    path.write_bytes(raw)
    width = codec[:6].upper()
    with pytest.raises(
        FileError, match=rf"x\.json: {width} text without a BOM\?; cutin reads UTF-8"
    ):
        read_text(path)


@pytest.mark.parametrize(
    "raw",
    [
        b"",
        b"{}",
        "plain text, é and 日本語\n".encode(),
        b"ID3 is how this line starts\n",  # ASCII that begins like a magic number
        b"RIFF is a word\n",
        b"BZh9 but not bzip2\n",
    ],
)
def test_text_is_never_taken_for_binary(raw: bytes) -> None:
    assert binary_kind(raw) is None


# ---------------------------------------------------------------- line separators
SEPARATED = "call\u2028forged line\u2029para\x85nel\x0bvt\x0cff\x1cfs"


def test_shown_name_writes_every_line_break_as_a_visible_escape() -> None:
    shown = shown_name(f"/x/{SEPARATED}.jsonl")
    assert shown == "/x/call\\u2028forged line\\u2029para\ufffdnel␋vt␌ff␜fs.jsonl"
    assert len(shown.splitlines()) == 1  # str.splitlines knows every one of them
    assert len(terminal_line(f"a\nb{SEPARATED}").splitlines()) == 1


def _log(path: Path) -> Path:
    head = header(
        "call-1",
        started_at="2026-01-01T00:00:00+00:00",
        policy="rules",
        scenario=None,
        tendencies=None,
    )
    return write_log(path, [EndEvent(t=1.0)], head)


@pytest.mark.parametrize("command", ["replay", "report", "audit", "judge"])
def test_an_error_naming_a_file_with_a_line_separator_stays_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    for i, content in enumerate((b"not a log\n", _png(), None)):
        path = tmp_path / f"{i}{SEPARATED}.jsonl"
        if content is not None:
            path.write_bytes(content)
        code = main([command, str(path)])
        _, err = capsys.readouterr()
        assert code == 2
        assert len(err.splitlines()) == 1 and err.endswith("\n"), repr(err)
        assert "\u2028" not in err and "\u2029" not in err and "\\u2028forged line" in err


@pytest.mark.parametrize("fmt", ["md", "html", "json"])
def test_a_report_holds_no_raw_line_separator_from_a_file_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    log = _log(tmp_path / f"{SEPARATED}.jsonl")
    code = main(["report", str(log), "--format", fmt])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "\u2028" not in out and "\u2029" not in out and "\x85" not in out
    if fmt == "json":
        assert json.loads(out)["trials"][0]["source"] == str(log)  # exact, but escaped
        assert "\\u2028" in out


def test_audit_json_holds_no_raw_line_separator_from_a_file_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = _log(tmp_path / f"{SEPARATED}.jsonl")
    code = main(["audit", str(log), "--json", "--resamples", "20"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "\u2028" not in out + err and "\u2029" not in out + err
    json.loads(out)


def test_a_picture_named_jsonl_in_a_folder_of_logs_is_called_binary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "calls"
    folder.mkdir()
    _log(folder / "a-good.jsonl")
    (folder / "b-picture.jsonl").write_bytes(_png())
    said = f"{folder}/b-picture.jsonl: a binary file (PNG image), not a cutin session log\n"
    assert main(["report", str(folder)]) == 2
    assert capsys.readouterr().err == f"cutin: {said}"
    assert main(["report", str(folder), "--skip-bad"]) == 0
    out, err = capsys.readouterr()
    assert "# cutin report" in out and err == f"cutin: warning: skipped: {said}"


def test_a_binary_verdict_sidecar_is_called_binary(tmp_path: Path) -> None:
    import shutil

    from replay.load import load_path
    from replay.tau2.sidecar import default_sidecar
    from tests.conftest import TAU2_FIXTURES

    results = tmp_path / "results.json"
    shutil.copy(TAU2_FIXTURES / "text_airline_results.json", results)
    default_sidecar(results).write_bytes(_png())
    warnings = load_path(results).warnings
    assert [w for w in warnings if "sidecar" in w] == [
        f"verdict sidecar not read: {default_sidecar(results)}: a binary file (PNG image), "
        "not a cutin verdict sidecar"
    ]


def test_a_log_with_a_stray_run_of_nuls_keeps_its_line_precise_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = _log(tmp_path / "call.jsonl")
    lines = log.read_bytes().split(b"\n")
    lines.insert(1, b"\x00" * 20)
    log.write_bytes(b"\n".join(lines))
    assert binary_kind(log.read_bytes()) is None
    assert main(["report", str(log)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"cutin: {log}:2: malformed event") and "binary" not in err, err
