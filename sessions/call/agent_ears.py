"""How cutin hears a black-box agent: speech per frame (Silero VAD) and its words (STT).

The remote loop feeds every 32 ms frame of the agent's audio to :meth:`AgentEars.prob`
(the pause detector's input) and, while an agent turn is open, to :meth:`push`. The
turn is transcribed with faster-whisper (word times on the call clock) by a worker
thread that catches up whenever a second of new audio is waiting or a pause asks for
it; on the virtual clock, synchronously, so a test call is repeatable.

A decision at a short pause may come before the newest audio is transcribed: the
words not yet transcribed are *estimated* from their speech time at the rate this
agent has spoken so far, and the estimate is logged beside the decision.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np
import numpy.typing as npt

from sessions.speech.stt import HeardSoFar, Transcriber
from sessions.speech.vad import FrameVad
from sessions.speech.words import TimedWord

Audio = npt.NDArray[np.float32]
DEFAULT_WORDS_PER_S = 2.6
"""A conversational rate (~155 wpm) until this agent's own rate is known."""


class AgentEars:
    def __init__(
        self,
        vad: FrameVad,
        transcriber: Transcriber | None,
        *,
        inline: bool,
        every_s: float = 1.0,
    ) -> None:
        self.vad = vad
        self.vad.reset()
        self.transcriber = transcriber
        self.inline = inline
        self.every_s = every_s
        self._heard: HeardSoFar | None = None
        self._pool: ThreadPoolExecutor | None = None
        self._job: Future[list[TimedWord]] | None = None
        self._lock = threading.Lock()
        self._turn_speech_s = 0.0
        self._transcribed_speech_s = 0.0
        self._words_total = 0
        self._speech_total_s = 0.0
        self.errors: list[str] = []

    # ---- per frame ----------------------------------------------------------------

    def prob(self, frame: Audio) -> float:
        return float(self.vad.run(frame.reshape(1, -1))[0])

    def start_turn(self, t0: float, lead: Audio | None = None) -> None:
        """A new agent turn whose audio starts at ``t0`` (``lead``: its first samples).

        Each turn has its own buffer, so the previous turn's final transcription can
        still be running on the worker while this one is heard."""
        self._turn_speech_s = 0.0
        self._transcribed_speech_s = 0.0
        if self.transcriber is not None:
            self._heard = HeardSoFar(self.transcriber, t0=t0)
            if lead is not None and lead.size:
                self._heard.push(lead)

    def push(self, frame: Audio, *, speaking: bool, frame_s: float) -> None:
        if speaking:
            self._turn_speech_s += frame_s
        if self._heard is not None:
            self._heard.push(frame)
            if not self.inline and self._heard.pending_seconds >= self.every_s:
                self.request()

    # ---- transcripts --------------------------------------------------------------

    def request(self) -> None:
        """Bring the transcript up to date (in the background in real time)."""
        heard = self._heard
        if heard is None:
            return
        speech_now = self._turn_speech_s
        if self.inline:
            self._run(heard, speech_now)
            return
        with self._lock:
            if self._job is not None and not self._job.done():
                return
            if self._pool is None:
                self._pool = ThreadPoolExecutor(1, thread_name_prefix="cutin-agent-stt")
            self._job = self._pool.submit(self._run, heard, speech_now)

    def _run(self, heard: HeardSoFar, speech_s: float) -> list[TimedWord]:
        try:
            words = heard.update()
        except Exception as exc:  # an STT failure must not end the call: log, estimate
            self.errors.append(f"{type(exc).__name__}: {exc}")
            return []
        if heard is self._heard:  # not a turn that has ended meanwhile
            self._transcribed_speech_s = speech_s
        return words

    def words(self) -> list[TimedWord]:
        """The newest transcript of the turn so far (may lag the audio)."""
        return list(self._heard.words) if self._heard is not None else []

    def close_turn(self) -> Future[list[TimedWord]]:
        """The turn is over: its whole transcript, as a future (done at once when inline).

        Counted into this agent's speaking rate when it completes."""
        heard, speech_s = self._heard, self._turn_speech_s
        self._heard = None

        def final() -> list[TimedWord]:
            words = self._run(heard, speech_s) if heard is not None else []
            self._words_total += len(words)
            self._speech_total_s += speech_s
            return words

        if self.inline or heard is None:
            done: Future[list[TimedWord]] = Future()
            done.set_result(final())
            return done
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(1, thread_name_prefix="cutin-agent-stt")
            return self._pool.submit(final)

    @property
    def turn_speech_s(self) -> float:
        return self._turn_speech_s

    def words_per_s(self) -> float:
        if self._words_total >= 10 and self._speech_total_s > 1.0:
            return self._words_total / self._speech_total_s
        return DEFAULT_WORDS_PER_S

    def heard_by(self, t: float) -> tuple[list[TimedWord], int]:
        """Words ended by ``t``, and an estimate of words in speech not yet transcribed."""
        words = [w for w in self.words() if w.end <= t + 1e-9]
        untranscribed = max(0.0, self._turn_speech_s - self._transcribed_speech_s)
        if self._heard is None:
            untranscribed = self._turn_speech_s
        return words, round(untranscribed * self.words_per_s())

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
