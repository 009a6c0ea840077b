"""`cutin vad`: run VAD and the pause detector over a recording."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import TYPE_CHECKING

from cutin_tui.cli import CliError

if TYPE_CHECKING:
    from controls import PauseEvent

DESCRIPTION = (
    "Run Silero VAD and the pause detector over a WAV recording and list when speech "
    "starts, when a short pause fires (silence reached --pause-ms mid-turn) and when a "
    "turn ends (silence reached --turn-end-ms). Times are seconds from the start of the "
    "file, at the moment each event fires. Any sample rate or channel count is accepted "
    "(resampled to 16 kHz, mixed down to mono)."
)


def _probability(name: str) -> Callable[[str], float]:
    def parse(value: str) -> float:
        try:
            x = float(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a number, got {value!r}") from None
        if not 0.0 <= x <= 1.0:
            raise argparse.ArgumentTypeError(f"{name} must be between 0 and 1, got {value}")
        return x

    parse.__name__ = name
    return parse


def _milliseconds(value: str) -> float:
    try:
        x = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected milliseconds, got {value!r}") from None
    if x <= 0:
        raise argparse.ArgumentTypeError(f"milliseconds must be positive, got {value}")
    return x


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", metavar="FILE.wav", help="the recording to analyse")
    p.add_argument("--json", action="store_true", help="one JSON object per event and line")
    p.add_argument(
        "--pause-ms",
        type=_milliseconds,
        default=200.0,
        help="short pause after this much silence (200)",
    )
    p.add_argument(
        "--turn-end-ms",
        type=_milliseconds,
        default=500.0,
        help="turn end after this much silence (500)",
    )
    p.add_argument(
        "--speech-threshold",
        type=_probability("speech threshold"),
        default=0.5,
        help="speech starts at this probability (0.5)",
    )
    p.add_argument(
        "--silence-threshold",
        type=_probability("silence threshold"),
        default=0.35,
        help="speech stops below this probability (0.35)",
    )
    p.add_argument(
        "--vad",
        choices=("onnx", "silero-torch"),
        default="onnx",
        help="onnx: the model faster-whisper ships (default); silero-torch: needs cutin[silero]",
    )


def _describe(ev: PauseEvent) -> str:
    line = f"{ev.t:9.3f}  {ev.kind!s:<12}"
    if ev.silence_start is not None:
        line += f"  silence from {ev.silence_start:.3f} s"
    return line


def run(args: argparse.Namespace) -> int:
    from sessions.speech import SAMPLE_RATE
    from sessions.speech.vad import PauseSettings, VadError, detect_pauses, load_vad
    from sessions.speech.wav import WavError, read_wav

    if args.silence_threshold > args.speech_threshold:
        raise CliError("--silence-threshold must not exceed --speech-threshold")
    if args.pause_ms >= args.turn_end_ms:
        raise CliError("--pause-ms must be shorter than --turn-end-ms")
    settings = PauseSettings(
        pause_ms=args.pause_ms,
        turn_end_ms=args.turn_end_ms,
        speech_threshold=args.speech_threshold,
        silence_threshold=args.silence_threshold,
    )
    try:
        audio = read_wav(args.file)
    except WavError as exc:
        raise CliError(str(exc)) from None
    try:
        vad = load_vad(args.vad)
    except VadError as exc:
        raise CliError(str(exc)) from None
    analysis = detect_pauses(audio, vad, settings)
    events = analysis.events
    if args.json:
        for ev in events:
            print(json.dumps(ev.as_dict()))
        return 0
    duration = audio.size / SAMPLE_RATE
    print(f"{args.file}: {duration:.2f} s, {len(analysis.frames)} frames of 32 ms, vad {vad.name}")
    if not events:
        print("no speech found")
    for ev in events:
        print(_describe(ev))
    return 0
