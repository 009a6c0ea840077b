"""tests/support/process.py: the one launcher every test's child process goes through.

Real children (``python -c``): a ready line awaited, lines matched after a moment, a
child that never gets ready or dies first failing with its own stderr, and one that
ignores the stop signal killed and reaped, never left running."""

from __future__ import annotations

import os
import re
import signal
import sys
import time

import pytest

from tests.support.process import ChildProcess


def _alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie counts as gone only once reaped)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


CHATTY = (
    "import sys, time\n"
    "print('ready at 1', flush=True)\n"
    "time.sleep(0.3)\n"
    "print('tick 1', flush=True)\n"
    "print('tick 2', flush=True)\n"
    "time.sleep(60)\n"
)


def test_ready_line_then_lines_after_a_moment() -> None:
    with ChildProcess(_python(CHATTY), name="the chatty child") as child:
        assert child.wait_ready(re.compile(r"ready at \d"), timeout=20) == "ready at 1"
        t_ready = child.find("ready")[0][0]
        t1, line = child.wait_line("tick ", timeout=20)
        assert line == "tick 1" and t1 >= t_ready
        # ``after`` skips what was read before it: the next tick, not the first again.
        t2, line = child.wait_line("tick ", timeout=20, after=t1 + 1e-9)
        assert line == "tick 2" and t2 >= t1
        with pytest.raises(AssertionError, match=r"printed no line 'never' within 0.2 s"):
            child.wait_line("never", timeout=0.2)
        pid = child.pid
    assert not _alive(pid) and child.returncode == -signal.SIGINT


def test_a_child_that_dies_first_fails_at_once_with_its_stderr() -> None:
    code = "import sys; print('starting'); sys.stderr.write('no port for you\\n'); sys.exit(3)"
    start = time.monotonic()
    with (
        pytest.raises(AssertionError) as failed,
        ChildProcess(_python(code), name="the broken child") as child,
    ):
        child.wait_ready("listening", timeout=30)
    assert time.monotonic() - start < 10  # not the whole timeout
    message = str(failed.value)
    assert "the broken child exited with 3 before printing a ready line" in message
    assert "no port for you" in message and "starting" in message
    assert not _alive(child.pid)
    assert child.stderr_tail() == "no port for you"  # kept after its folder went


def test_no_ready_line_in_time_leaves_no_child_even_one_that_ignores_the_signal() -> None:
    code = (
        "import signal, sys, time\n"
        "signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
        "sys.stderr.write('warming up\\n'); sys.stderr.flush()\n"
        "print('hello', flush=True)\n"
        "time.sleep(60)\n"
    )
    with (
        pytest.raises(AssertionError, match=r"(?s)no ready line within 0.5 s.*warming up"),
        ChildProcess(_python(code), name="the stubborn child", stop_grace_s=0.5) as child,
    ):
        child.wait_line("hello", timeout=20)  # it runs, and has set its handler
        child.wait_ready("listening", timeout=0.5)
    assert not _alive(child.pid) and child.returncode == -signal.SIGKILL


def test_stderr_into_stdout_and_a_new_session() -> None:
    code = (
        "import sys, time; sys.stderr.write('from stderr\\n'); sys.stderr.flush()\n"
        "print('done', flush=True); time.sleep(60)"
    )
    with ChildProcess(
        _python(code), name="the merged child", stderr="stdout", new_session=True
    ) as child:
        child.wait_line("from stderr", timeout=20)
        child.wait_line("done", timeout=20)
        assert os.getpgid(child.pid) == child.pid != os.getpgid(0)
    assert not _alive(child.pid)
