"""`cutin compare` and `cutin check` on the real Pipecat bot, interruptions on vs off.

The same verdict as on the known agent (tests/check/test_check.py), from an agent cutin
did not build: the example Pipecat bot (examples/pipecat_bot.py: Silero VAD, whisper,
espeak-ng), once as it ships (it stops talking when the caller cuts in) and once with
``--no-interruptions`` (it talks on). One module-scoped fixture runs both with
`cutin simulate` over real Twilio media streams on loopback, the same scenario and seeds.

Each call is short and barges in once, on the bot's greeting (said the moment a call
starts, so no call waits on the bot transcribing and answering the caller, which on a
loaded machine took 30 s): 19 words, a pause where β = 1 cuts in, then 29 more words
with no pause, so the bot that talks on is heard talking on for ~7 s (the shipped
``--long-greeting`` pauses again 7 words later: at 200 wpm that stop came 1.9 s after
the barge-in and counted as a yield). Eleven calls a side give the ten barge-ins `check`
and `compare` need (and one spare); the two sides' bots take their calls at the same time, one at a
time each (two batches of two calls at once starved each other: 35 s a call).

Lagged calls are kept (``--keep-lagged``, as tests/check/test_check.py does): with the
suite's other workers on the same cores, 4 to 6 of a side's 11 calls lag, and what is
compared here, whether the bot stopped within ~2 s of the caller's onset, is read off
the recording's sample clock, which a late frame does not move.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from cutin_tui.cli import main
from tests.support.pipecat_bot import Bot, running_bots

pytestmark = [pytest.mark.audio, pytest.mark.slow]

REPO_ROOT = Path(__file__).resolve().parents[2]
CALLS = 11
"""Calls a side: one barge-in each; a rate needs ten events (replay/check/measures.py),
and one call a loaded machine loses (its barge-in past the hang-up) must not leave
`check` with too little data."""
SECONDS = 9
"""Each call's length: the greeting's pause comes ~6 s in (19 words at espeak-ng's 165
wpm), the caller's "Wait." and the bot's stop, or its ~2 s of talking on that makes
the verdict, by ~8.2 s on a machine with a load of 10."""
GREETING = (
    "Hello, you are through to the cutin test line, where a bot answers all of your calls,"
    " all day. —"
    " I will read you the whole of this greeting without stopping, so that a caller who"
    " cuts in can hear whether I go on talking over them or not."
)
BOT = ("--greeting", GREETING)
SCENARIO = """\
name = "bot-greeting-barge-in"
title = "The caller cuts into the bot's greeting"

[agent]
name = "the Pipecat bot"
turns = [{ text = "Hello." }]

[user]
goal = "Cut in on the greeting."
persona = "A caller in a hurry."
turns = ["Tell me about my account."]
interruptions = ["Wait."]
"""


@dataclass(frozen=True)
class BotRuns:
    on: Path
    off: Path
    seconds: float
    """Wall time of the two batches (bots started and both runs filed)."""


def simulate(scenario: Path, out: Path, bots: list[Bot], env: dict[str, str]) -> None:
    argv = [
        sys.executable, "-m", "cutin_tui", "simulate", "--scenario", str(scenario),
        "--beta", "1", "--gamma", "0", "--runs", str(CALLS), "--jobs", str(len(bots)),
        "--max-seconds", str(SECONDS), "--out", str(out), "--force",
    ]  # fmt: skip
    argv += [a for bot in bots for a in ("--agent", f"twilio:{bot.url}")]
    batch = subprocess.run(argv, env=env, capture_output=True, timeout=600)
    assert batch.returncode == 0, batch.stderr.decode(errors="replace")[-2000:]


@pytest.fixture(scope="module")
def bot_runs(tmp_path_factory: pytest.TempPathFactory) -> BotRuns:
    root = tmp_path_factory.mktemp("bot-runs")
    scenario = root / "bot-greeting-barge-in.toml"
    scenario.write_text(SCENARIO, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST_")}
    env["PYTHONPATH"] = str(REPO_ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env["CUTIN_CACHE_DIR"] = str(root / "cache")
    started = time.monotonic()
    with (
        running_bots(BOT, (*BOT, "--no-interruptions")) as (on, off),
        ThreadPoolExecutor(2) as pool,
    ):
        runs = [
            pool.submit(simulate, scenario, root / name, [bot], env)
            for name, bot in (("on", on), ("off", off))
        ]
        for run in runs:
            run.result()
    return BotRuns(root / "on", root / "off", time.monotonic() - started)


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_compare_says_the_bot_that_talks_on_regressed(
    bot_runs: BotRuns, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = cli(capsys, "compare", str(bot_runs.on), str(bot_runs.off), "--keep-lagged",
                         "--json")  # fmt: skip
    assert code == 1, err
    result = json.loads(out)
    assert result["regressed"] and result["paired"] and result["flags"] == [], result
    rows = {r["measure"]: r for r in result["rows"]}
    yield_rate = rows["yield_rate"]
    assert yield_rate["n_base"] >= 10 and yield_rate["n_new"] >= 10, yield_rate
    assert yield_rate["base"] >= 0.9 and yield_rate["new"] <= 0.1, yield_rate
    assert yield_rate["verdict"] == "regressed", yield_rate
    assert yield_rate["interval"][1] < 0, yield_rate
    # The table a person reads says the same.
    code, table, _ = cli(capsys, "compare", str(bot_runs.on), str(bot_runs.off), "--keep-lagged")
    assert code == 1
    [line] = [ln for ln in table.splitlines() if ln.startswith("yield_rate ")]
    assert "REGRESSED" in line, table
    print(table)
    print(f"both runs in {bot_runs.seconds:.0f} s")


def test_yield_rate_at_least_0_9_passes_with_interruptions_on_and_fails_off(
    bot_runs: BotRuns, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    expect = tmp_path / "expect.toml"
    expect.write_text('yield_rate = ">= 0.9"\n', encoding="utf-8")
    verdicts = {}
    for name, run in (("on", bot_runs.on), ("off", bot_runs.off)):
        code, out, err = cli(capsys, "check", str(run), "--expect", str(expect), "--keep-lagged",
                             "--json")  # fmt: skip
        assert code in (0, 1), err
        [row] = [r for r in json.loads(out)["rows"] if r["measure"] == "yield_rate"]
        assert row["n"] >= 10, row
        verdicts[name] = (code, row["verdict"])
    assert verdicts == {"on": (0, "PASS"), "off": (1, "FAIL")}
