"""`cutin devices`: list audio devices; shared ``--input-device``/``--output-device`` options."""

from __future__ import annotations

import argparse
import json

from cutin_tui.cli import CliError

DESCRIPTION = (
    "List the audio devices PortAudio sees, with their index, channels and which are the "
    "defaults (< input, > output). Pass an index or part of a name to --input-device / "
    "--output-device. "
    "Without PortAudio or devices, calls still work in typed mode."
)


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="one JSON object per device and line")


def add_device_options(p: argparse.ArgumentParser) -> None:
    """The device options a voice command takes (resolve them with :func:`resolve_devices`)."""
    p.add_argument(
        "--input-device",
        metavar="DEVICE",
        default=None,
        help="microphone: index or part of the name (see 'cutin devices'; default: system default)",
    )
    p.add_argument(
        "--output-device",
        metavar="DEVICE",
        default=None,
        help="speaker: index or part of the name (see 'cutin devices'; default: system default)",
    )


def resolve_devices(args: argparse.Namespace) -> tuple[int | None, int | None]:
    """(input, output) device indexes from the options; :class:`CliError` on a bad choice.

    Raises ``sessions.speech.devices.AudioUnavailable`` unchanged when there is no audio
    at all, so a caller can fall back to typed mode instead of failing.
    """
    from sessions.speech.devices import AudioUnavailable, import_sounddevice, resolve_device

    import_sounddevice()  # no PortAudio: AudioUnavailable propagates to the caller
    try:
        return (
            resolve_device(getattr(args, "input_device", None), "input"),
            resolve_device(getattr(args, "output_device", None), "output"),
        )
    except AudioUnavailable as exc:
        raise CliError(str(exc)) from None


def run(args: argparse.Namespace) -> int:
    from sessions.speech.devices import AudioUnavailable, list_devices

    try:
        devices = list_devices()
    except AudioUnavailable as exc:
        raise CliError(f"{exc} (typed mode still works)") from None
    if args.json:
        for d in devices:
            print(json.dumps(d.as_dict()))
        return 0
    if not devices:
        print("no audio devices found (typed mode still works)")
        return 1
    print(f"{'':2}{'#':>3}  {'in':>3} {'out':>3}  {'rate':>6}  {'api':<8} name")
    for d in devices:
        mark = ("<" if d.default_input else " ") + (">" if d.default_output else " ")
        print(
            f"{mark}{d.index:>3}  {d.max_input_channels:>3} {d.max_output_channels:>3}  "
            f"{d.default_samplerate:>6.0f}  {d.hostapi:<8} {d.name}"
        )
    print("< default input, > default output")
    return 0
