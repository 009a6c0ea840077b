"""OpenAI Realtime's side of a barge-in: which agent audio was heard, and what to cut.

:class:`AgentItems` (owned by :class:`~sessions.lines.realtime.RealtimeLine`, used on
its reader thread) follows every agent item with audio: where its samples went in the
playout timeline, so that on the caller's speech the line can flush the playout and
truncate each item at exactly the audio that was played (``audio_end_ms``), then
notice audio the model still sends for a truncated item. It also holds the event
names the line knows and :func:`summary`, the loggable part of a server event.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sessions.lines.base import LINE_RATE, PlayoutBuffer
from sessions.lines.codec import StreamResampler
from sessions.speech.wav import pcm16_to_float

WIRE_RATE = 24_000
"""The only PCM rate the Realtime API speaks."""

AUDIO_DELTA = frozenset({"response.output_audio.delta", "response.audio.delta"})
TRANSCRIPT_EVENTS = frozenset(
    {
        "response.output_audio_transcript.delta",
        "response.output_audio_transcript.done",
        "response.audio_transcript.delta",
        "response.audio_transcript.done",
    }
)
KNOWN_EVENTS = frozenset(
    {
        "session.created",
        "session.updated",
        "conversation.created",
        "conversation.item.created",
        "conversation.item.added",
        "conversation.item.done",
        "conversation.item.retrieved",
        "conversation.item.truncated",
        "conversation.item.deleted",
        "conversation.item.input_audio_transcription.delta",
        "conversation.item.input_audio_transcription.completed",
        "conversation.item.input_audio_transcription.failed",
        "conversation.item.input_audio_transcription.segment",
        "input_audio_buffer.committed",
        "input_audio_buffer.cleared",
        "input_audio_buffer.speech_started",
        "input_audio_buffer.speech_stopped",
        "input_audio_buffer.timeout_triggered",
        "output_audio_buffer.started",
        "output_audio_buffer.stopped",
        "output_audio_buffer.cleared",
        "response.created",
        "response.done",
        "response.output_item.added",
        "response.output_item.done",
        "response.content_part.added",
        "response.content_part.done",
        "response.output_audio.done",
        "response.audio.done",
        "response.output_text.delta",
        "response.output_text.done",
        "response.text.delta",
        "response.text.done",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.done",
        "rate_limits.updated",
        "error",
    }
    | AUDIO_DELTA
    | TRANSCRIPT_EVENTS
)
QUIET_EVENTS = frozenset({"conversation.item.added", "conversation.item.done"})
"""Known events not worth a notice (the same item is announced by ``created``/``output_item``)."""

_SCALARS = (str, int, float, bool, type(None))
MAX_TEXT = 500

Report = tuple[str, dict[str, Any]]
"""An AGENT_EVENT notice to give: (detail, data)."""


@dataclass
class _Segment:
    start: int
    """Position of its first sample in the playout timeline (samples ever queued)."""
    end: int
    offset: int
    """Where its first sample lies in the item's own audio (16 kHz samples)."""


@dataclass
class _Item:
    """An agent item with audio: where its samples went in the playout timeline."""

    item_id: str
    content_index: int
    response_id: str
    received: int = 0
    """16 kHz samples decoded for this item (queued or refused by a full buffer)."""
    segments: list[_Segment] = field(default_factory=list)
    active: bool = True
    """Its response is still in progress (more audio may come)."""
    truncated_ms: int | None = None
    """Where cutin truncated it (``audio_end_ms``), once it has."""
    late: int = 0
    """16 kHz samples of its audio that arrived after the truncate."""
    late_reported: bool = False

    def add(self, start: int, accepted: int, total: int) -> None:
        if accepted > 0:
            last = self.segments[-1] if self.segments else None
            if (
                last is not None
                and last.end == start
                and last.offset + (last.end - last.start) == self.received
            ):
                last.end += accepted
            else:
                self.segments.append(_Segment(start, start + accepted, self.received))
        self.received += total

    def heard_at(self, head: int) -> int:
        """How far into this item's audio playback was when the timeline reached ``head``."""
        heard = 0
        for seg in self.segments:
            if seg.start < head:
                heard = max(heard, seg.offset + min(head, seg.end) - seg.start)
        return heard

    def unplayed(self, head: int) -> bool:
        return any(seg.end > head for seg in self.segments)

    def cut(self, head: int) -> None:
        for seg in self.segments:
            seg.end = max(seg.start, min(seg.end, head))


class AgentItems:
    """The agent's audio items on the playout timeline (reader thread only)."""

    def __init__(self, playout: PlayoutBuffer, *, play_after_truncate: bool) -> None:
        self.playout = playout
        self.play_after_truncate = play_after_truncate
        self._down = StreamResampler(WIRE_RATE, LINE_RATE)
        self._down_item: str | None = None
        self._queued = 0
        """Samples ever accepted into the playout buffer (its timeline's end)."""
        self._items: dict[str, _Item] = {}

    def audio(self, event: dict[str, Any], pcm: bytes) -> list[Report]:
        """A delta of ``pcm`` (24 kHz PCM16) for an item: queue it (or drop it, if the
        item was truncated), and say what is worth saying."""
        reports: list[Report] = []
        item_id = str(event.get("item_id", ""))
        item = self._items.get(item_id)
        first = item is None
        if item is None:
            item = _Item(
                item_id, int(event.get("content_index", 0)), str(event.get("response_id", ""))
            )
            self._items[item_id] = item
            self._prune()
        if item.truncated_ms is not None:
            first_late = item.late == 0
            item.late += len(pcm) // 2 * LINE_RATE // WIRE_RATE
            if first_late:
                reports.append(
                    (
                        "agent audio after truncate",
                        {"item_id": item_id, "audio_end_ms": item.truncated_ms},
                    )
                )
            if not self.play_after_truncate:
                return reports
        if self._down_item != item_id:
            self._down.reset()
            self._down_item = item_id
        audio = self._down.process(pcm16_to_float(pcm))
        before = self.playout.dropped
        self.playout.push(audio)
        accepted = audio.size - (self.playout.dropped - before)
        item.add(self._queued, accepted, audio.size)
        self._queued += accepted
        if first:
            reports.append(
                (
                    "agent audio started",
                    {
                        "type": event["type"],
                        "item_id": item_id,
                        "response_id": item.response_id,
                        "first": True,
                    },
                )
            )
        return reports

    def barge_in(self) -> tuple[int, list[dict[str, Any]]]:
        """The caller started speaking: flush the playout; returns the samples dropped
        and the ``conversation.item.truncate`` events for what was not heard."""
        dropped = self.playout.clear()
        head = self._queued - dropped
        truncates: list[dict[str, Any]] = []
        for item in self._items.values():
            if not (item.active or item.unplayed(head)):
                continue
            if item.truncated_ms is not None and not self.play_after_truncate:
                continue  # cut before, and nothing of it has played since
            end_ms = item.heard_at(head) * 1000 // LINE_RATE
            item.cut(head)
            item.truncated_ms = end_ms
            truncates.append(
                {
                    "type": "conversation.item.truncate",
                    "item_id": item.item_id,
                    "content_index": item.content_index,
                    "audio_end_ms": end_ms,
                }
            )
        return dropped, truncates

    def finish(self, event: dict[str, Any]) -> list[Report]:
        """A response or item is done: its items get no more audio; report any that
        talked on after their truncate."""
        if event["type"] == "response.output_item.done":
            done = event.get("item")
            ended = (
                [self._items[done["id"]]]
                if isinstance(done, dict) and done.get("id") in self._items
                else []
            )
        else:
            response = event.get("response")
            response_id = response.get("id") if isinstance(response, dict) else None
            ended = [i for i in self._items.values() if response_id in (None, i.response_id)]
        reports: list[Report] = []
        for item in ended:
            item.active = False
            if item.late and not item.late_reported:
                item.late_reported = True
                reports.append(
                    (
                        "agent talked on after truncate",
                        {
                            "item_id": item.item_id,
                            "audio_end_ms": item.truncated_ms,
                            "late_s": item.late / LINE_RATE,
                            "played": self.play_after_truncate,
                        },
                    )
                )
        return reports

    def _prune(self, keep: int = 8) -> None:
        while len(self._items) > keep:
            oldest = next(iter(self._items))
            del self._items[oldest]


def summary(event: dict[str, Any]) -> dict[str, Any]:
    """The loggable part of a server event: its scalars and the ids of what it carries.

    Strings are cut one past :data:`MAX_TEXT`, so the line's notice board (which bounds
    and cleans all notice data) still sees, marks and counts that they were longer."""
    out: dict[str, Any] = {}
    for key, value in event.items():
        if isinstance(value, str):
            out[key] = value[: MAX_TEXT + 1]
        elif isinstance(value, _SCALARS):
            out[key] = value
    for key in ("response", "item", "error", "part"):
        value = event.get(key)
        if isinstance(value, dict):
            out[key] = {
                k: (v[: MAX_TEXT + 1] if isinstance(v, str) else v)
                for k, v in value.items()
                if isinstance(v, _SCALARS) or k == "status_details"
            }
    return out
