"""How cutin hears a black-box agent: speech per frame (Silero VAD) and its words (STT).

The remote loop feeds every 32 ms frame of the agent's audio to :meth:`AgentEars.prob`
(the pause detector's input) and, while an agent turn is open, to :meth:`push`. The
turn is transcribed with faster-whisper one *segment* at a time: the audio between two
of the agent's pauses is cut at the pause (a word boundary by construction) and
transcribed once, on a worker thread, with word times on the call clock. Each piece of
audio is transcribed exactly once, so the cost stays linear in the call's length and
the worker keeps up with the agent on a small machine. On the virtual clock the work
is done inline, so a test call is repeatable.

In real time the pieces go to the process's packing worker
(:class:`~sessions.speech.packing.PackedTranscriber`, every call's waiting pieces in one
Whisper input: 0.06 CPU-s per second of audio against 0.45 one piece at a time, and
fewer wrong words, ``docs/capacity.md``); without one, each piece is transcribed alone
on the shared STT thread.

A decision at a short pause may come before the newest segment is transcribed: the
words not yet transcribed are *estimated* from their speech time at the rate this
agent has spoken so far, and the estimate is logged beside the decision
(``words_estimated`` in its situation); the real words replace it in the log
(``agent_words``) when they come back.

What is transcribed (``cutin simulate --transcribe``, :data:`TRANSCRIBE_MODES`):
``live`` every piece at its pause (above); ``end`` each turn once, when it ends (every
decision in it counts estimated words); ``off`` nothing (no transcriber: no words are
logged, every count is an estimate).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from concurrent.futures import CancelledError, Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from sessions.speech import SAMPLE_RATE
from sessions.speech.stt import Transcriber
from sessions.speech.vad import FrameVad
from sessions.speech.words import TimedWord

if TYPE_CHECKING:
    from sessions.speech.packing import PackedTranscriber, PieceResult

Audio = npt.NDArray[np.float32]
DEFAULT_WORDS_PER_S = 2.6
"""A conversational rate (~155 wpm) until this agent's own rate is known."""
PAD_S = 0.1
"""Audio kept on both sides of a segment cut, so a word's edges are not clipped."""
TRANSCRIBE_MODES = ("live", "end", "off")
"""``--transcribe``: each piece at its pause | each turn when it ends | nothing."""


@dataclass
class _TurnAudio:
    """One agent turn's audio and what of it is transcribed."""

    t0: float
    chunks: list[Audio] = field(default_factory=list)
    samples: int = 0
    cut: int = 0
    """Samples up to here are handed to STT (segment boundaries)."""
    words: list[TimedWord] = field(default_factory=list)
    speech_s: float = 0.0
    speech_at_cut: float = 0.0
    """Speech seconds up to ``cut`` (what the transcribed words cover)."""
    pending_speech_s: float = 0.0
    """Speech handed to STT whose words have not come back yet."""
    lock: threading.Lock = field(default_factory=threading.Lock)

    def audio(self, i0: int, i1: int) -> Audio:
        data = np.concatenate(self.chunks) if self.chunks else np.zeros(0, np.float32)
        self.chunks = [data]
        return data[max(0, i0) : i1].copy()


class AgentEars:
    def __init__(
        self,
        vad: FrameVad,
        transcriber: Transcriber | None,
        *,
        inline: bool,
        packer: PackedTranscriber | None = None,
        transcribe: str = "live",
    ) -> None:
        if transcribe not in TRANSCRIBE_MODES:
            raise ValueError(f"transcribe must be one of {', '.join(TRANSCRIBE_MODES)}")
        self.vad = vad
        self.vad.reset()
        self.transcribe = transcribe
        self.transcriber = None if transcribe == "off" else transcriber
        self.inline = inline
        self.packer = None if inline else packer
        """Real time only: the virtual clock transcribes inline, one piece at a time, so a
        test call repeats itself exactly."""
        self._last: Future[None] | None = None
        """The latest piece of this call handed to the packer (its words in order)."""
        self._turn: _TurnAudio | None = None
        self._pool: ThreadPoolExecutor | None = None
        self._futures: list[Future[Any]] = []
        self._lock = threading.Lock()
        self._words_total = 0
        self._speech_total_s = 0.0
        self.errors: list[str] = []
        self.notes: list[str] = []
        """Words cut from a transcript (a repetition loop): logged, the call goes on."""
        self._abandoned = False

    # ---- per frame ----------------------------------------------------------------

    def prob(self, frame: Audio) -> float:
        return float(self.vad.run(frame.reshape(1, -1))[0])

    def start_turn(self, t0: float, lead: Audio | None = None) -> None:
        """A new agent turn whose audio (``lead`` first, if given) starts at ``t0``."""
        self._turn = _TurnAudio(t0)
        if lead is not None and lead.size:
            self._append(lead)

    def push(self, frame: Audio, *, speaking: bool, frame_s: float) -> None:
        if self._turn is None:
            return
        if speaking:
            self._turn.speech_s += frame_s
        self._append(frame)

    def _append(self, samples: Audio) -> None:
        turn = self._turn
        assert turn is not None
        chunk = np.asarray(samples, dtype=np.float32).reshape(-1).copy()
        turn.chunks.append(chunk)
        turn.samples += chunk.size

    # ---- transcripts --------------------------------------------------------------

    def segment(self, boundary_t: float) -> None:
        """Transcribe the turn's audio up to ``boundary_t`` (a pause's silence start)."""
        turn = self._turn
        if turn is None or self.transcribe != "live":
            return
        self._submit(turn, round((boundary_t - turn.t0) * SAMPLE_RATE))

    def _submit(self, turn: _TurnAudio, upto: int) -> Future[None]:
        upto = min(upto + round(PAD_S * SAMPLE_RATE), turn.samples)
        done: Future[None] = Future()
        if self._abandoned:  # the call is being given up: nothing more is transcribed
            done.set_result(None)
            return done
        if upto <= turn.cut or self.transcriber is None:
            if self.packer is not None:
                return self._after_packed()
            if self.inline or self._pool is None:
                done.set_result(None)
                return done
            return self._queue(lambda: None)  # after the segments already queued
        start = turn.cut
        audio = turn.audio(start - round(PAD_S * SAMPLE_RATE), upto)
        offset = turn.t0 + max(0, start - round(PAD_S * SAMPLE_RATE)) / SAMPLE_RATE
        turn.cut = upto
        speech = turn.speech_s - turn.speech_at_cut
        turn.speech_at_cut = turn.speech_s
        turn.pending_speech_s += speech
        skip_before = turn.t0 + start / SAMPLE_RATE

        def work() -> None:
            words = self._transcribe(audio, offset)
            # Words whose middle falls in the padding belong to the previous segment.
            kept = [w for w in words if (w.start + w.end) / 2 >= skip_before - 1e-6]
            with turn.lock:
                turn.words.extend(kept)
                turn.pending_speech_s -= speech

        if self.inline:
            work()
            done.set_result(None)
            return done
        if self.packer is not None:
            return self._pack(audio, offset, skip_before, turn, speech)
        return self._queue(work)

    def _pack(
        self, audio: Audio, offset: float, skip_before: float, turn: _TurnAudio, speech: float
    ) -> Future[None]:
        """The piece goes to the shared packing worker; its words join the turn when they
        come back (a cancelled piece's speech stays estimated)."""
        assert self.packer is not None
        piece = self.packer.submit(audio, offset, key=self)
        done: Future[None] = Future()

        def back(f: Future[PieceResult]) -> None:
            note = error = None
            try:
                result = f.result()
                words, note, error = result.words, result.note, result.error
            except CancelledError:
                words = []
            except Exception as exc:  # the worker sets results only; never the call's end
                words, error = [], f"{type(exc).__name__}: {exc}"
            if note is not None:
                self.notes.append(note)
            if error is not None:
                self.errors.append(error)
            kept = [w for w in words if (w.start + w.end) / 2 >= skip_before - 1e-6]
            with turn.lock:
                turn.words.extend(kept)
                turn.pending_speech_s -= speech
            done.set_result(None)

        piece.add_done_callback(back)
        with self._lock:
            self._futures = [f for f in self._futures if not f.done()]
            self._futures.append(piece)
            self._last = done
        return done

    def _after_packed(self) -> Future[None]:
        """Done once this call's pieces handed to the packer so far are back."""
        done: Future[None] = Future()
        with self._lock:
            last = self._last
        if last is None:
            done.set_result(None)
        else:
            last.add_done_callback(lambda _: done.set_result(None))
        return done

    def _queue(self, work: Callable[[], None]) -> Future[None]:
        """On the process's one STT thread (shared by every call), remembered so that
        :meth:`close` cancels only this call's pending work."""
        future = self._worker().submit(work)
        with self._lock:
            self._futures = [f for f in self._futures if not f.done()]
            self._futures.append(future)
        return future

    def _worker(self) -> ThreadPoolExecutor:
        if self._pool is None:
            from sessions.speech.shared import stt_worker

            self._pool = stt_worker()
        return self._pool

    def _transcribe(self, audio: Audio, t0: float) -> list[TimedWord]:
        assert self.transcriber is not None
        try:
            return self.transcriber.transcribe(audio, t0=t0).words
        except Exception as exc:  # an STT failure must not end the call: log, estimate
            self.errors.append(f"{type(exc).__name__}: {exc}")
            return []

    def close_turn(self) -> Future[list[TimedWord]]:
        """The turn is over: its whole transcript, as a future (done at once when inline).

        The rest of its audio is transcribed after the segments already queued; the
        turn's words then count towards this agent's speaking rate."""
        turn = self._turn
        self._turn = None
        result: Future[list[TimedWord]] = Future()
        if turn is None:
            result.set_result([])
            return result
        last = self._submit(turn, turn.samples)

        def finish(_: object) -> None:
            words = sorted(turn.words, key=lambda w: w.start)
            self._words_total += len(words)
            self._speech_total_s += turn.speech_s
            result.set_result(words)

        last.add_done_callback(finish)
        return result

    @property
    def turn_speech_s(self) -> float:
        return self._turn.speech_s if self._turn is not None else 0.0

    def words(self) -> list[TimedWord]:
        """The current turn's words transcribed so far (they lag the audio)."""
        turn = self._turn
        if turn is None:
            return []
        with turn.lock:
            return sorted(turn.words, key=lambda w: w.start)

    def word_count(self) -> int:
        """How many words of the current turn have come back (cheap: no copy, no sort)."""
        turn = self._turn
        return len(turn.words) if turn is not None else 0

    def words_per_s(self) -> float:
        if self._words_total >= 10 and self._speech_total_s > 1.0:
            return self._words_total / self._speech_total_s
        return DEFAULT_WORDS_PER_S

    def heard_by(self, t: float) -> tuple[list[TimedWord], int]:
        """Words ended by ``t``, and an estimate of words in speech not yet transcribed."""
        turn = self._turn
        if turn is None:
            return [], 0
        words = [w for w in self.words() if w.end <= t + 1e-9]
        with turn.lock:
            untranscribed = turn.speech_s - turn.speech_at_cut + turn.pending_speech_s
        if self.transcriber is None:
            untranscribed = turn.speech_s
        return words, round(max(0.0, untranscribed) * self.words_per_s())

    def abandon(self) -> None:
        """The call is being given up (a batch's Ctrl-C): its queued audio is not
        transcribed and no more is queued, so hanging up waits at most for the segment
        the STT worker is on, not for every call's backlog (a turn's transcript is then
        what came back so far)."""
        self._abandoned = True
        self.close()

    def close(self) -> None:
        with self._lock:
            futures, self._futures = self._futures, []
        for future in futures:
            future.cancel()  # the shared worker goes on serving the other calls


def give_up_transcripts(call: object) -> None:
    """Give up a call's pending transcription (:meth:`AgentEars.abandon`) if its far end
    has ears (a line); anything else has nothing to give up. For a hang-up that cannot
    wait for the ears' backlog: a batch's Ctrl-C, or quitting a live call whose ears are
    seconds behind, so the call still ends and its log still gets its ``end``."""
    ears = getattr(getattr(call, "far", None), "ears", None)
    if isinstance(ears, AgentEars):
        with contextlib.suppress(Exception):
            ears.abandon()
