"""The known-behaviour agent (examples/known_agent.py) as a subprocess for tests.

    with running_known_agent("--yield-after-ms", "300") as agent:
        line = TwilioLine(agent.url)
        ...
        agent.truth()                       # its ground truth, parsed
        agent.events("stop", call=0)        # one kind, one connection

It listens on a free port of 127.0.0.1; the context waits for its ready line
(``cutin-known-agent: listening ws://...``) and fails with its stderr if none comes.
Its truth file is in a temporary folder that lives as long as the context. Every
time in the truth is on the line's sample clock: the agent's n-th sample heard left
cutin at n / 8000 s of call time, exactly; its n-th sample sent plays at n / 8000 s as
long as cutin's playout never ran dry. On a loaded machine cutin's frame loop can stall
and catch up faster than the agent answers, and its playout pads the gap with silence,
so the agent's later audio plays later than its own clock says. :meth:`KnownAgent.on_line`
finds where a truth time of the agent's own audio really played, by matching the audio
the agent sent around it (it saves its rendered speech beside the truth) against the
call's recording: an alignment of known audio, not a measure of cutin's. On exit the
agent gets SIGINT, then SIGKILL.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from sessions.lines.codec import StreamResampler
from tests.support.process import ChildProcess

REPO_ROOT = Path(__file__).resolve().parents[2]
AGENT = REPO_ROOT / "examples" / "known_agent.py"
READY_PREFIX = "cutin-known-agent: listening "
START_TIMEOUT_S = 60.0
RATE = 8000


@dataclass
class KnownAgent:
    url: str
    child: ChildProcess
    truth_path: Path
    _speech: dict[str, np.ndarray] = field(default_factory=dict)

    def truth(self) -> list[dict[str, Any]]:
        """Every truth record written so far (a torn last line is left out)."""
        try:
            text = self.truth_path.read_text(encoding="utf-8")
        except OSError:
            return []
        out = []
        for line in text.splitlines():
            try:
                out.append(json.loads(line))
            except ValueError:
                break
        return out

    def events(self, kind: str, call: int | None = None) -> list[dict[str, Any]]:
        return [
            r for r in self.truth() if r["event"] == kind and (call is None or r["call"] == call)
        ]

    def wait_for(self, kind: str, timeout: float = 30.0, call: int | None = None) -> None:
        """Until the truth holds an event of ``kind`` (e.g. ``call_end`` after a hang-up)."""
        deadline = time.monotonic() + timeout
        while not self.events(kind, call):
            if time.monotonic() > deadline:
                raise AssertionError(f"the known agent wrote no {kind!r} within {timeout} s")
            time.sleep(0.05)

    def speech(self) -> dict[str, np.ndarray]:
        """Its rendered speech (greeting, reply, burst), loaded once (it outlives the
        temporary folder)."""
        if not self._speech:
            with np.load(self.truth_path.with_suffix(".speech.npz")) as z:
                self._speech.update({k: z[k] for k in z.files})
        return self._speech

    def output(self, records: list[dict[str, Any]]) -> np.ndarray:
        """The agent's audio of one call as it sent it, at 8 kHz on its own clock."""
        speech = self.speech()
        end = max((r["t"] for r in records), default=0.0) + 20.0
        out = np.zeros(int(end * RATE) + 1, dtype=np.float32)
        speaks = [r for r in records if r["event"] == "speak"]
        cuts = [round(r["decided_t"] * RATE) for r in records if r["event"] == "stop"]
        stalls = [r for r in records if r["event"] == "stall"]
        for i, r in enumerate(speaks):
            audio = speech["greeting" if r["why"] == "greeting" else "reply"]
            start = round(r["t"] * RATE)
            nxt = round(speaks[i + 1]["t"] * RATE) if i + 1 < len(speaks) else None
            for stall in stalls:  # nothing sent there; the turn goes on after it
                k = round(stall["t"] * RATE) - start
                if 0 <= k < audio.size and (nxt is None or k + start < nxt):
                    gap = np.zeros(round(stall["length_s"] * RATE), np.float32)
                    audio = np.concatenate([audio[:k], gap, audio[k:]])
            until = start + audio.size
            if nxt is not None:
                until = min(until, nxt)
            until = min([until, *[c for c in cuts if c >= start]])
            out[start:until] = audio[: until - start]
        for r in records:
            if r["event"] == "resume":
                r0, n = round(r["t"] * RATE), round(r["length_s"] * RATE)
                out[r0 : r0 + n] = speech["burst"][:n]
        return out

    def on_line(
        self,
        t: float,
        records: list[dict[str, Any]],
        recording: np.ndarray,
        *,
        before: bool = True,
        max_late_s: float = 1.0,
    ) -> float:
        """Where the agent's own truth time ``t`` played in the call's 16 kHz recording of
        the agent's channel: the 0.4 s of its audio before (or after) ``t`` is found in
        the recording, at most ``max_late_s`` late (cutin's playout only ever delays)."""
        sent = self.output(records)
        down = StreamResampler(16000, RATE)
        heard = down.process(recording)
        span = round(0.4 * RATE)
        i = round(t * RATE)
        a, b = (i - span, i) if before else (i, i + span)
        a = max(a, 0)
        seg = sent[a:b].astype(np.float64)
        if not np.any(np.abs(seg) > 0.02):
            raise AssertionError(f"no agent audio around {t} s to align")
        early, late = round(0.05 * RATE), round(max_late_s * RATE)
        lo = max(0, a - early)
        region = heard[lo : b + late].astype(np.float64)
        if region.size < seg.size:
            raise AssertionError(f"the agent's audio at {t} s is past the recording's end")
        corr = np.correlate(region, seg, mode="valid")
        energy = np.sqrt(np.convolve(region**2, np.ones(seg.size), mode="valid")) + 1e-9
        cos = corr / energy / (np.linalg.norm(seg) + 1e-9)
        # The earliest good match: the agent says the same words again later.
        lag = int(np.flatnonzero(cos >= cos.max() - 0.05)[0]) + lo - a
        return t + lag / RATE - down.delay_s

    def stderr_tail(self, n: int = 30) -> str:
        return self.child.stderr_tail(n)


@contextmanager
def running_known_agent(
    *args: str, start_timeout_s: float = START_TIMEOUT_S
) -> Iterator[KnownAgent]:
    """Start the agent with ``args`` on a free port; stop it afterwards."""
    with tempfile.TemporaryDirectory(prefix="cutin-known-agent-") as tmp:
        truth = Path(tmp) / "truth.jsonl"
        argv = [sys.executable, str(AGENT), "--port", "0", "--truth", str(truth), *args]
        with ChildProcess(argv, name="the known agent", cwd=REPO_ROOT) as child:
            ready = child.wait_ready(READY_PREFIX, start_timeout_s)
            yield KnownAgent(ready[len(READY_PREFIX) :].strip(), child, truth)
