"""A black-box call to the real Pipecat bot over Twilio Media Streams, measured.

A loopback WebSocket proxy sits between cutin and the bot (examples/pipecat_bot.py)
and stamps every media message cutin sends as it crosses, so "on the wire" is the
socket, not cutin's own idea of it. Rows:

- cutin's own reaction: the rule's decision at a short pause → the first loud caller
  audio on the wire (median, p95), beside τ-Voice's decision cadence;
- the bot's yield latency as cutin measures it (caller onset → agent audio stopped);
- cutin's CPU per second of call (this process: loop, VAD, STT, caller TTS, the proxy).
"""

from __future__ import annotations

import asyncio
import base64
import json
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench._timing import percentile

CALLS = 3
CALL_S = 60.0


class WireProxy:
    """ws://127.0.0.1:PORT/ → the bot; records (monotonic, peak) of cutin's media."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream
        self.sent: list[tuple[float, float]] = []
        self.url = ""
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        threading.Thread(target=self._run, daemon=True).start()
        self._ready.wait(10)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_until_complete(self._serve())

    async def _serve(self) -> None:
        import websockets

        async def handle(client: Any) -> None:
            async with websockets.connect(self.upstream) as bot:

                async def up() -> None:
                    async for raw in client:
                        now = time.monotonic()
                        msg = json.loads(raw)
                        if msg.get("event") == "media":
                            ulaw = np.frombuffer(
                                base64.b64decode(msg["media"]["payload"]), np.uint8
                            )
                            self.sent.append((now, float(_ulaw_peak(ulaw))))
                        await bot.send(raw)

                async def down() -> None:
                    async for raw in bot:
                        await client.send(raw)

                await asyncio.gather(up(), down(), return_exceptions=True)

        async with websockets.serve(handle, "127.0.0.1", 0) as server:
            port = server.sockets[0].getsockname()[1]
            self.url = f"ws://127.0.0.1:{port}/"
            self._ready.set()
            await asyncio.Future()

    def first_loud_after(self, mono: float, level: float = 0.02) -> float | None:
        for t, peak in list(self.sent):
            if t >= mono and peak >= level:
                return t
        return None


def _ulaw_peak(payload: bytes) -> float:
    from sessions.lines.codec import decode_ulaw

    pcm = decode_ulaw(payload)
    return float(np.abs(pcm).max(initial=0.0))


def _call(url: str, tmp: Path, seed: int) -> tuple[list[Any], Any, float, float]:
    from controls.tendencies import Tendencies
    from sessions.call.config import CallConfig
    from sessions.call.setup.line_call import RemoteSpec, build_line_call
    from sessions.callers.users import ScriptedUser
    from sessions.scenarios import load_scenario

    scenario = load_scenario("retail-order-change")
    config = CallConfig(scenario=scenario, tendencies=Tendencies(0.0, 1.0, 0.0), seed=seed)
    spec = RemoteSpec(agent=f"twilio:{url}", cache_dir=tmp / "cache")
    loop = build_line_call(spec, config, user=ScriptedUser(scenario, barge_in_with_next_line=True))
    events: list[Any] = []
    loop.listeners.append(events.append)
    cpu0 = time.process_time()
    loop.run_for(CALL_S)
    cpu = time.process_time() - cpu0
    return events, loop, cpu, loop.t


def rows() -> list[dict[str, object]]:
    from tests.support.pipecat_bot import bot_unavailable, running_bot

    reason = bot_unavailable()
    if reason:
        return [{"budget": "black-box call (Pipecat bot)", "measured": "skipped", "note": reason}]
    reactions: list[float] = []
    yields: list[float] = []
    not_yielded = 0
    cpu_total = seconds_total = 0.0
    with running_bot() as bot, tempfile.TemporaryDirectory() as d:
        proxy = WireProxy(bot.url)
        for seed in range(CALLS):
            events, loop, cpu, seconds = _call(proxy.url, Path(d), seed)
            cpu_total += cpu
            seconds_total += seconds
            for e in events:
                if e.type == "interruption":
                    wire = proxy.first_loud_after(loop.monotonic_at(e.decided_t))
                    if wire is not None:
                        reactions.append(wire - loop.monotonic_at(e.decided_t))
                elif e.type == "agent_yield" and e.after == "interruption":
                    if e.yielded and e.latency_s is not None:
                        yields.append(e.latency_s)
                    else:
                        not_yielded += 1

    def ms(values: list[float]) -> str:
        if not values:
            return "—"
        return (
            f"median {statistics.median(values) * 1000:.0f} ms · "
            f"p95 {percentile(values, 0.95) * 1000:.0f} ms (n={len(values)})"
        )

    return [
        {
            "budget": "black-box call: rule decision → caller audio on the wire (Twilio WS)",
            "target": "≤ 300 ms p95",
            "measured": ms(reactions),
            "target_value": 300,
            "measured_value": round(percentile(reactions, 0.95) * 1e3, 1) if reactions else None,
            "unit": "ms",
            "peer": "τ-Voice decides every 2.0 s of agent speech (+ its LLM calls)",
            "note": f"{CALLS} calls × {CALL_S:.0f} s to the Pipecat bot at β = 1",
        },
        {
            "budget": "black-box call: the bot's yield latency (caller onset → its audio stops)",
            "target": "measured, not a budget",
            "measured": ms(yields) + (f"; {not_yielded} did not yield" if not_yielded else ""),
            "peer": "τ-Voice's yield window: 2.0 s",
            "note": "Pipecat 1.14, Silero VAD, interruptions on",
        },
        {
            "budget": "black-box call: cutin CPU per second of call",
            "target": "< 1 core",
            "measured": f"{cpu_total / max(seconds_total, 1e-9):.2f} CPU-s per call-s",
            "peer": "",
            "note": "this process: loop, VAD, STT of the agent, caller TTS, proxy",
        },
    ]


if __name__ == "__main__":
    for row in rows():
        print(row)
