"""cutin's own process settings for speech-to-text (sessions/speech/tuning.py), observed
from outside the code: the threads numpy's BLAS starts and the page faults a freed
Whisper-sized buffer costs when it is allocated again, each in a fresh interpreter."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

THREADS = """
import os
{before}
import numpy as np
np.ones((64, 64)) @ np.ones((64, 64))
print(len(os.listdir("/proc/self/task")))
"""

FAULTS = """
import resource
import numpy as np
from sessions.speech.tuning import keep_large_buffers
print(keep_large_buffers() if {tuned} else False)
def faults():
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(5):  # one transcription's working set: 12 blocks of 4 MiB, then freed
        bufs = [np.empty(4 << 20, dtype=np.uint8) for _ in range(12)]
        for buf in bufs:
            buf.fill(1)  # touch every page
        del bufs, buf
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
faults()
print(faults())
"""


def _python(code: str, env: dict[str, str]) -> list[str]:
    run = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 0, run.stderr
    return run.stdout.split()


THREAD_AND_ALLOCATOR_VARS = ("OPENBLAS_", "GOTO_NUM_THREADS", "OMP_NUM_THREADS", "MALLOC_")
"""What OpenBLAS and glibc read; an earlier test in the same worker may have set one (the
example Pipecat bot, loaded as a module, sets OMP_NUM_THREADS)."""


def _env(child_env: dict[str, str], **extra: str) -> dict[str, str]:
    env = {k: v for k, v in child_env.items() if not k.startswith(THREAD_AND_ALLOCATOR_VARS)}
    return {**env, **extra}


@pytest.mark.skipif(
    not os.path.isdir("/proc/self/task") or (os.cpu_count() or 1) < 2, reason="needs /proc, 2 cores"
)
def test_cutin_gives_numpys_blas_one_thread_unless_the_user_chose(
    child_env: dict[str, str],
) -> None:
    via_main = (
        "from cutin_tui.cli import main\n"
        "try:\n    main(['--version'])\nexcept SystemExit:\n    pass"
    )
    untouched = int(_python(THREADS.format(before=""), _env(child_env))[0])
    assert untouched > 1, "OpenBLAS starts a thread per core when nobody limits it"
    assert int(_python(THREADS.format(before=via_main), _env(child_env))[-1]) == 1
    chosen = _env(child_env, OPENBLAS_NUM_THREADS="2")
    assert int(_python(THREADS.format(before=via_main), chosen)[-1]) == 2


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's allocator")
def test_freed_whisper_sized_buffers_are_reused_not_faulted_in_again(
    child_env: dict[str, str],
) -> None:
    applied, tuned = _python(FAULTS.format(tuned=True), _env(child_env))
    assert applied == "True"
    plain = int(_python(FAULTS.format(tuned=False), _env(child_env))[1])
    # 5 × 48 MiB: ~30,000 faults here (glibc keeps part) when the freed heap is given back.
    assert plain > 15_000, plain
    assert int(tuned) < plain / 20, (tuned, plain)
    # glibc's own tunables are the user's choice: left alone.
    mine = _env(child_env, MALLOC_MMAP_THRESHOLD_="131072")
    assert _python(FAULTS.format(tuned=True), mine)[0] == "False"
