"""Audio devices through sounddevice (PortAudio): import guard, listing, selection.

``import sounddevice`` raises ``OSError`` when the PortAudio library is missing;
every caller goes through :func:`import_sounddevice`, which turns that into an
:class:`AudioUnavailable` with the fix, so a call can fall back to typed mode.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

Kind = Literal["input", "output"]

PORTAUDIO_FIX = "install PortAudio (Debian/Ubuntu: apt-get install libportaudio2)"


class AudioUnavailable(RuntimeError):
    """No usable audio: PortAudio missing, no device, or a device that will not open."""


_sd: Any = None


def import_sounddevice() -> Any:
    """The ``sounddevice`` module, or :class:`AudioUnavailable` saying how to get it."""
    global _sd
    if _sd is None:
        try:
            import sounddevice
        except OSError as exc:  # the module is there, the PortAudio library is not
            raise AudioUnavailable(
                f"no audio: PortAudio not found ({exc}); {PORTAUDIO_FIX}"
            ) from None
        except ImportError:
            raise AudioUnavailable(
                "no audio: the sounddevice package is missing; pip install sounddevice"
            ) from None
        _sd = sounddevice
    return _sd


@dataclass(frozen=True, slots=True)
class DeviceInfo:
    index: int
    name: str
    hostapi: str
    max_input_channels: int
    max_output_channels: int
    default_samplerate: float
    default_input: bool
    default_output: bool

    def as_dict(self) -> dict[str, object]:
        return asdict(self)

    def has(self, kind: Kind) -> bool:
        return (self.max_input_channels if kind == "input" else self.max_output_channels) > 0


def list_devices() -> list[DeviceInfo]:
    """Every PortAudio device, with which ones are the defaults."""
    sd = import_sounddevice()
    try:
        raw = list(sd.query_devices())
        apis = [str(a["name"]) for a in sd.query_hostapis()]
        default_in, default_out = (int(x) for x in sd.default.device)
    except Exception as exc:  # PortAudio errors come in several types
        raise AudioUnavailable(f"cannot list audio devices: {exc}") from None
    out: list[DeviceInfo] = []
    for i, d in enumerate(raw):
        api_index = int(d.get("hostapi", -1))
        out.append(
            DeviceInfo(
                index=i,
                name=str(d["name"]),
                hostapi=apis[api_index] if 0 <= api_index < len(apis) else "?",
                max_input_channels=int(d["max_input_channels"]),
                max_output_channels=int(d["max_output_channels"]),
                default_samplerate=float(d["default_samplerate"]),
                default_input=i == default_in,
                default_output=i == default_out,
            )
        )
    return out


def resolve_device(spec: str | int | None, kind: Kind) -> int | None:
    """A device index for ``--input-device``/``--output-device`` (None = system default).

    ``spec`` is an index or a case-insensitive part of the device name; it must
    name exactly one device with ``kind`` channels (an exact name match wins).
    """
    devices = list_devices()
    usable = [d for d in devices if d.has(kind)]
    if not usable:
        raise AudioUnavailable(f"no audio {kind} device found (typed mode still works)")
    if spec is None or str(spec).strip() == "":
        if not any(d.default_input if kind == "input" else d.default_output for d in usable):
            return usable[0].index
        return None
    text = str(spec).strip()
    if text.lstrip("-").isdigit():
        index = int(text)
        match = [d for d in usable if d.index == index]
        if not match:
            raise AudioUnavailable(f"no {kind} device with index {index} ({_choices(usable)})")
        return index
    exact = [d for d in usable if d.name.lower() == text.lower()]
    if len(exact) == 1:
        return exact[0].index
    part = [d for d in usable if text.lower() in d.name.lower()]
    if len(part) == 1:
        return part[0].index
    if not part:
        raise AudioUnavailable(f"no {kind} device matches {text!r} ({_choices(usable)})")
    raise AudioUnavailable(
        f"{text!r} matches several {kind} devices ({_choices(part)}); use an index"
    )


def _choices(devices: list[DeviceInfo]) -> str:
    return "choose from: " + ", ".join(f"{d.index} {d.name!r}" for d in devices)
