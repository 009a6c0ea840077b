"""`cutin simulate --ray` refuses what cannot work in one line (exit 2), before any call:
Ray not installed, an address that does not answer, flags that do not go with it."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from tests.batch.helpers import simulate
from tests.support.cli import run_python

PLAN = ["simulate", "--scenario", "retail-order-change"]


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_without_ray_installed_it_names_the_extra(
    tmp_path: Path, child_env: dict[str, str]
) -> None:
    # sys.modules["ray"] = None makes `import ray` fail as on a machine without it.
    script = (
        "import sys; sys.modules['ray'] = None\n"
        "from cutin_tui.cli import main\n"
        f"sys.exit(main({[*PLAN, '--out', str(tmp_path / 'b'), '--ray']!r}))\n"
    )
    proc = run_python("-c", script, env=child_env)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().count("\n") == 0, proc.stderr
    assert "cutin[cluster]" in proc.stderr and "Traceback" not in proc.stderr
    assert not list((tmp_path / "b").glob("*.jsonl*"))


def test_an_address_that_does_not_answer_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    port = _closed_port()
    out = tmp_path / "b"
    code, _, err = simulate(capsys, *PLAN[1:], "--out", str(out), "--ray", f"127.0.0.1:{port}")
    assert code == 2
    assert err.strip() == (
        f"cutin: cannot connect to the Ray cluster at 127.0.0.1:{port}: Connection refused "
        "(is `ray start --head` running there, and the port open?)"
    )
    assert not list(out.glob("*.jsonl*"))


def test_a_password_in_the_address_is_never_shown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    port = _closed_port()
    address = f"ops:hunter2@127.0.0.1:{port}"
    code, out, err = simulate(capsys, *PLAN[1:], "--out", str(tmp_path / "b"), "--ray", address)
    assert code == 2 and "cannot connect" in err
    assert "hunter2" not in err + out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--ray", "headnode"], "give the head node as HOST:PORT"),
        (["--ray", "h:99999"], "give the head node as HOST:PORT"),
        (["--ray", "--jobs", "2"], "--jobs does not go with --ray"),
        (["--ray-cpus-per-call", "0.5"], "--ray-cpus-per-call needs --ray"),
        (["--ray", "--ray-cpus-per-call", "0"], "--ray-cpus-per-call must be in (0, 64]"),
        (["--ray", "--ray-cpus-per-call", "nan"], "--ray-cpus-per-call must be in (0, 64]"),
    ],
)
def test_flags_that_cannot_work_are_refused(
    argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = simulate(capsys, *PLAN[1:], "--out", str(tmp_path / "b"), *argv)
    assert code == 2
    assert message in err and err.count("\n") == 1
