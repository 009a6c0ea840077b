"""A simulated agent's turn: its reply stream on a voice track, what has been heard of
it, and where it is cut."""

from __future__ import annotations

from dataclasses import dataclass

from sessions.agents.base import ReplyStream
from sessions.call.context import AgentTurn
from sessions.call.voice.voice import VoiceTrack
from sessions.log.models import AgentWords, WordTiming


@dataclass
class SimulatedTurn(AgentTurn):
    stream: ReplyStream | None = None
    track: VoiceTrack | None = None
    started: bool = False
    full_text: str = ""

    @property
    def voice_track(self) -> VoiceTrack:
        assert self.track is not None
        return self.track

    def heard_text(self, t: float) -> tuple[int, str]:
        track = self.voice_track
        n = track.heard(t)
        return n, " ".join(w.word for w in track.words[:n])

    def take_text(self, t: float, *, virtual: bool, cut: bool = False) -> str | None:
        """Take what the agent has streamed; returns the stream's error once it is done.

        On the virtual clock an LLM is "infinitely fast": wait for text when the voice
        has nothing left to say (or, at a cut, for the whole reply, so what was not said
        is logged as unspoken); in real time, take what has arrived."""
        stream, track = self.stream, self.voice_track
        assert stream is not None
        error = None
        while not track.stream_done:
            must_wait = virtual and (cut or t + 1e-9 >= (track.end if track.words else t))
            chunks = stream.poll(block=must_wait, timeout=60.0 if must_wait else None)
            for chunk in chunks:
                self.full_text += chunk
                track.add_text(chunk, t)
            if stream.done:
                track.finish(t)
                if stream.error is not None:
                    error = str(stream.error)
            if not cut or not virtual or not chunks:
                break
        return error

    def words_heard(self, until: float) -> AgentWords | None:
        """The words newly played by ``until`` (never past a stop), as a log event."""
        track = self.voice_track
        n = track.heard(until)
        if track.stopped_at is not None:
            n = min(n, track.heard(track.stopped_at))
        if n <= self.words_reported:
            return None
        new = track.words[self.words_reported : n]
        event = AgentWords(
            t=new[-1].end,
            turn=self.index,
            first_index=self.words_reported,
            words=[
                WordTiming(word=w.word, start=round(w.start, 4), end=round(w.end, 4)) for w in new
            ],
        )
        self.words_reported = n
        return event

    def stop(self, t: float, at: float | None = None) -> Cut:
        """Stop the agent's playback now; the words it had finished by the cut are spoken.

        The cut is at ``at`` (the caller's onset) or where the audio really stopped,
        whichever is earlier; audio played after the cut is the agent's talk-over.
        """
        track = self.voice_track
        stop_t = track.stopped_at
        if stop_t is None:
            stop_t = track.stop(t)
        cut_t = stop_t if at is None else min(at, stop_t)
        n, spoken = self.heard_text(cut_t)
        return Cut(cut_t, stop_t, n, spoken)

    def talked_over(self, cut_t: float) -> Cut:
        """An agent that does not yield: the cut is where the caller began, and it goes on."""
        n, spoken = self.heard_text(cut_t)
        return Cut(cut_t, cut_t, n, spoken)

    def planned_words(self) -> list[str]:
        """Everything the agent meant to say this turn (placed, and given but not placed)."""
        track = self.voice_track
        planned = [w.word for w in track.words]
        pending = track.pending_text
        if pending.strip():
            planned.extend(pending.split())
        return planned


@dataclass(frozen=True, slots=True)
class Cut:
    """Where an agent turn was cut: the words spoken by ``cut_t``, audio on until ``stop_t``."""

    cut_t: float
    stop_t: float
    cut_word: int
    spoken: str

    @property
    def talk_over_s(self) -> float:
        return round(max(0.0, self.stop_t - self.cut_t), 4)
