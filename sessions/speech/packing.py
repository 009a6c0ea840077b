"""Speech-to-text that pays for audio, not padding: waiting pieces packed into one input.

faster-whisper pads every input to 30 s, so a 1.3 s piece of an agent's turn pays for a
30 s encoder pass (issue 28: 0.45–0.51 CPU-s per second of audio, against 0.046 for the
same pieces as one input). :class:`PackedTranscriber` runs one worker thread for every
call in the process: the pieces waiting from all calls (and the consecutive pieces of
one call's turn) go into one input of at most :data:`PACK_S` seconds, each followed by
:data:`GAP_S` of silence, and the words come back to each piece by timestamp.

- **Only speech goes in.** The worker finds each piece's speech with faster-whisper's
  own filter (:func:`find_speech`: silences of 300 ms or more out, 50 ms kept at each
  edge) and packs only that, each piece's stretches back to back; Whisper then hears
  the pack unfiltered. Before, the filter ran on the pack and removed the pauses after
  they had taken room in it. A word's times map back through its piece's stretches.

- **Whose word is it.** A word belongs to the piece whose span in the packed input
  holds its midpoint; a word whose midpoint lies in a gap of silence goes to the piece
  it overlaps most (Whisper stretches a last word over the silence after it), and one
  wholly in a gap is dropped. A word is only ever shifted back onto the clock of the
  piece that holds it, so one call's words never reach another call (:func:`assign_words`).
- **How long a piece waits.** When the worker is idle, the first piece waits at most
  :data:`MAX_WAIT_S` for others to join it (:data:`BATCH_WAIT_S` when several calls'
  pieces wait: a pack costs about the same nearly empty or full); then the pack runs
  with what is there (a full pack runs at once, and a worker busy with a pack collects
  the next one meanwhile). The rule does not wait for words: at a pause it counts the
  words not yet back from the turn's speech time at the agent's measured rate, logs that
  estimate beside the decision, and the real words replace it in the log when they
  arrive (:class:`~sessions.call.far_ends.agent_ears.AgentEars`).
- **No temperature fallback, a loop guard.** With the fallback on, a window of similar
  lines from several calls fell back to sampling and one run spun for 8 CPU-minutes.
  Each window is decoded once; :func:`repetition_loop` watches the words as segments
  come out and a loop (an n-gram repeated back to back within one piece: the same line
  from several calls, packed together, is no loop) is cut where it starts, logged for
  each call whose piece it touched (a ``line`` event ``stt_cut``: the call goes on), and
  decoding stops there. Pieces that lay wholly after the cut go round once more in a
  later pack; a second loop leaves them without words (their speech stays estimated).

Measured against the text the known agent really speaks (``bench/bench_stt_pack.py``,
``docs/capacity.md``, "Speech-to-text").
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from sessions.hostile.inert_text import terminal_line
from sessions.speech import SAMPLE_RATE
from sessions.speech.stt import Transcriber, speech_filter
from sessions.speech.words import TimedWord

Audio = npt.NDArray[np.float32]
log = logging.getLogger(__name__)

PACK_S = 24.0
"""At most this much audio (speech and gaps) in one input. Not the whole 30 s window: a
pack that fills it often spills (its last segment runs past the window, and Whisper
decodes the rest again in a second window: a second encoder pass). 24 s was cheaper per
second of speech than 26 or 29, and no worse in words (``bench/bench_stt_pack.py``)."""
GAP_S = 0.2
"""Silence after each piece in a pack (its speech keeps 50 ms of its own silence at each
end too)."""
MAX_WAIT_S = 1.5
"""The longest an idle worker lets a piece wait for others before it runs the pack."""
BATCH_WAIT_S = 3.0
"""... when pieces of several calls are waiting (a batch): a pack costs about the same
whether it holds 5 s of speech or 24 (Whisper's 30 s encoder pass and its set-up), so in
a batch a fuller pack is worth a longer wait; the rule estimates the words meanwhile."""
LOOP_REPEATS = 4
"""An n-gram said this many times back to back is a loop (people repeat a word or two,
"no, no, no", rarely four times)..."""
LOOP_MIN_TOKENS = 8
"""... once the repeats cover at least this many words (a single word needs 8)."""
LOOP_MAX_NGRAM = 8
MAX_WORDS_PER_S = 7.0
"""More words than this per second of audio in a pack (+ 20) is a runaway: cut there.
Fast speech is 4-5 words per second."""


@dataclass(frozen=True)
class PackSpan:
    """Where a piece lies in a packed input, in seconds from its start."""

    start: float
    end: float


@dataclass(frozen=True)
class PieceResult:
    words: list[TimedWord]
    """The piece's words on its own clock (its ``t0`` + seconds into the piece)."""
    note: str | None = None
    """A loop cut in the pack this piece was in: one line to log (the call goes on)."""
    error: str | None = None
    """The model failed on this pack: one line to log as an error."""


# ---- pure parts -----------------------------------------------------------------------


def _norm(token: str) -> str:
    return "".join(c for c in token.lower() if c.isalnum() or c == "'")


def repetition_loop(
    tokens: Sequence[str],
    *,
    repeats: int = LOOP_REPEATS,
    min_tokens: int = LOOP_MIN_TOKENS,
    max_ngram: int = LOOP_MAX_NGRAM,
) -> tuple[int, int, int] | None:
    """The first repetition loop in ``tokens``: (index where the cut starts, the n-gram's
    length, how many times it is said back to back); None without one.

    A loop is an n-gram (1..``max_ngram`` words, compared lower-case without punctuation)
    said at least ``repeats`` times back to back, covering at least ``min_tokens`` words.
    The cut keeps its first saying and drops everything from the second on. Pure and
    O(len × max_ngram)."""
    words = [_norm(t) for t in tokens]
    size = len(words)
    best: tuple[int, int, int] | None = None
    for n in range(1, max_ngram + 1):
        need = max(repeats, -(-min_tokens // n))
        if need * n > size:
            break
        run = 0  # how many positions in a row, ending at i, have words[p] == words[p + n]
        for i in range(size - n):
            run = run + 1 if words[i] and words[i] == words[i + n] else 0
            if run >= (need - 1) * n:
                start = i - run + 1  # the first saying starts here
                if best is None or start + n < best[0]:
                    j = i
                    while j + 1 + n < size and words[j + 1] and words[j + 1] == words[j + 1 + n]:
                        j += 1
                    best = (start + n, n, 1 + (j - start + 1) // n)
                break
    return best


class LoopGuard:
    """A :data:`~sessions.speech.stt.WordsGuard` for a pack of ``audio_s`` seconds: cuts
    at a repetition loop, or at more words than any speaker says in that time
    (:data:`MAX_WORDS_PER_S`). ``cut_t`` is where it cut (seconds into the pack).

    With ``spans`` (the pieces' places in the pack), each piece's words are checked on
    their own: the same line said by several calls at once, packed one after another,
    is several sayings, not a loop. A loop the model falls into runs on within a piece
    (or spills into the next one's span, where it is caught again)."""

    def __init__(self, audio_s: float, spans: Sequence[PackSpan] = ()) -> None:
        self.audio_s = audio_s
        self.spans = list(spans) or [PackSpan(0.0, audio_s)]
        self.limit = round(MAX_WORDS_PER_S * audio_s) + 20
        self.cut_t: float | None = None

    def __call__(self, words: Sequence[TimedWord]) -> tuple[int, str] | None:
        by_piece: dict[int, list[int]] = {}
        for i, w in enumerate(words):
            k = piece_of(w, self.spans)
            if k is not None:
                by_piece.setdefault(k, []).append(i)
        found: tuple[int, str] | None = None
        for k, indices in by_piece.items():
            span = self.spans[k]
            loop = repetition_loop([words[i].word for i in indices])
            if loop is not None:
                cut, n, count = loop
                said = terminal_line(" ".join(words[i].word for i in indices[cut - n : cut]))
                said = said if len(said) <= 120 else said[:119] + "…"  # the agent's audio's
                why = f"speech-to-text repeated {said!r} {count} times (a repetition loop)"
                if found is None or indices[cut] < found[0]:
                    found = (indices[cut], why)
            most = round(MAX_WORDS_PER_S * (span.end - span.start)) + 10
            if len(indices) > most and (found is None or indices[most] < found[0]):
                found = (
                    indices[most],
                    f"speech-to-text heard over {most} words in {span.end - span.start:.1f} s "
                    "of audio (a runaway)",
                )
        if found is None and len(words) > self.limit:
            found = (
                self.limit,
                f"speech-to-text produced over {self.limit} words for {self.audio_s:.1f} s "
                "of audio (a runaway)",
            )
        if found is None:
            return None
        index, why = found
        self.cut_t = words[index].start
        return index, f"{why}: cut at {self.cut_t:.2f} s into its input, not decoded further"


def fits(durations: Sequence[float], *, pack_s: float = PACK_S, gap_s: float = GAP_S) -> int:
    """How many of the first pieces go into one pack: as many as fit in ``pack_s`` with
    a gap after each, and always at least one (a longer piece goes alone)."""
    total = 0.0
    for n, d in enumerate(durations):
        total += d + gap_s
        if total > pack_s + 1e-9:
            return max(1, n)
    return len(durations)


Speech = list[tuple[int, int]]
"""Where a piece has speech: sample ranges, in order."""


def find_speech(audio: Audio, skip_silence_ms: int | None) -> Speech:
    """Where ``audio`` has speech, as the transcriber's own filter finds it
    (:func:`~sessions.speech.stt.speech_filter`). None: the whole piece (no filter)."""
    if audio.size == 0:
        return []
    if skip_silence_ms is None:
        return [(0, audio.size)]
    from faster_whisper.vad import VadOptions, get_speech_timestamps

    found = get_speech_timestamps(audio, VadOptions(**speech_filter(skip_silence_ms)))
    return [(int(t["start"]), int(t["end"])) for t in found if int(t["end"]) > int(t["start"])]


@dataclass(frozen=True)
class PackStretch:
    """One stretch of a piece's speech in a pack."""

    piece: int
    at: float
    """Seconds into the pack."""
    src: float
    """Seconds into the piece."""
    length: float


@dataclass(frozen=True)
class Pack:
    """One Whisper input: the pieces' speech one after another."""

    audio: Audio
    spans: list[PackSpan]
    """Each piece's place, from its first stretch's start to its last one's end (empty
    for a piece without speech)."""
    stretches: list[PackStretch]

    @property
    def seconds(self) -> float:
        return self.audio.size / SAMPLE_RATE


def pack(
    pieces: Sequence[Audio], speech: Sequence[Speech] | None = None, *, gap_s: float = GAP_S
) -> Pack:
    """The pieces one after another, each followed by ``gap_s`` of silence. With
    ``speech``, only each piece's speech goes in, its stretches back to back (as
    faster-whisper's filter joins them): a pack's room goes to speech, not to pauses the
    filter would drop anyway."""
    gap = np.zeros(round(gap_s * SAMPLE_RATE), np.float32)
    parts: list[Audio] = []
    spans: list[PackSpan] = []
    stretches: list[PackStretch] = []
    at = 0
    for k, piece in enumerate(pieces):
        arr = np.asarray(piece, dtype=np.float32).reshape(-1)
        ranges = speech[k] if speech is not None else [(0, arr.size)]
        first = at
        for a, b in ranges:
            a, b = max(0, a), min(arr.size, b)
            if b <= a:
                continue
            parts.append(arr[a:b])
            seconds = (at / SAMPLE_RATE, a / SAMPLE_RATE, (b - a) / SAMPLE_RATE)
            stretches.append(PackStretch(k, *seconds))
            at += b - a
        spans.append(PackSpan(first / SAMPLE_RATE, at / SAMPLE_RATE))
        parts.append(gap)
        at += gap.size
    audio = np.concatenate(parts) if parts else np.zeros(0, np.float32)
    return Pack(audio, spans, stretches)


def _piece_time(t: float, own: Sequence[PackStretch]) -> float:
    """A pack time as seconds into the piece whose stretches are ``own``: through the
    stretch that holds it, else the nearest one (clipped to it)."""

    def distance(s: PackStretch) -> float:
        return max(s.at - t, t - (s.at + s.length), 0.0)

    near = min(own, key=distance)
    inside = min(max(t, near.at), near.at + near.length)
    return near.src + (inside - near.at)


def assign_words(
    words: Sequence[TimedWord], packed: Pack, t0s: Sequence[float]
) -> list[list[TimedWord]]:
    """Each piece's words, on its own clock: a word goes to the piece whose span holds its
    midpoint, its times mapped through that piece's stretches back to the piece (clipped
    to them) and shifted by the piece's ``t0``. A word whose midpoint is in a gap goes to
    the piece it overlaps most: Whisper stretches a piece's last word over the silence
    after it (the known agent's "open here" came back as "here" 0.76-1.16 s for a span
    ending at 0.90). A word wholly in a gap, or past every span, is dropped."""
    spans = packed.spans
    own: list[list[PackStretch]] = [[] for _ in spans]
    for s in packed.stretches:
        own[s.piece].append(s)
    out: list[list[TimedWord]] = [[] for _ in spans]
    for w in words:
        k = piece_of(w, spans)
        if k is None:
            continue
        start = _piece_time(w.start, own[k])
        end = max(start, _piece_time(w.end, own[k]))
        out[k].append(TimedWord(w.word, start + t0s[k], end + t0s[k], w.probability))
    return out


def piece_of(w: TimedWord, spans: Sequence[PackSpan]) -> int | None:
    """The piece a word of the pack belongs to (see :func:`assign_words`): the span that
    holds its midpoint, else the one it overlaps most, else none. A piece without speech
    has an empty span, which neither holds nor overlaps anything."""
    mid = (w.start + w.end) / 2
    best, most = None, 0.0
    for k, span in enumerate(spans):
        if span.start <= mid < span.end:
            return k
        overlap = min(w.end, span.end) - max(w.start, span.start)
        if overlap > most:
            best, most = k, overlap
    return best


def by_call(items: Sequence[WaitingPiece]) -> list[WaitingPiece]:
    """The pieces with each call's side by side (calls in the order they first appear,
    each call's pieces in the order given; a piece without a key is a call of its own).
    Calls to one agent often say the same line at the same moment; packed one after
    another, identical lines make Whisper repeat itself (bench/bench_stt_pack.py: 43.3%
    word error rate in step, 31.9% sorted by call)."""
    first: dict[int, int] = {}
    rank: list[int] = []
    for n, item in enumerate(items):
        call = id(item.key) if item.key is not None else -1 - n
        rank.append(first.setdefault(call, n))
    return [items[n] for n in sorted(range(len(items)), key=lambda n: (rank[n], n))]


# ---- the shared worker ----------------------------------------------------------------


def _lower_priority() -> None:
    """The worker thread itself runs :data:`~sessions.speech.stt.STT_NICE` nicer (Linux)."""
    import contextlib
    import os

    from sessions.speech.stt import STT_NICE

    with contextlib.suppress(AttributeError, OSError):
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, os.getpriority(os.PRIO_PROCESS, tid) + STT_NICE)


@dataclass(eq=False)
class WaitingPiece:
    """A piece in the packing worker's queue, and what it is waiting for."""

    audio: Audio
    t0: float
    future: Future[PieceResult]
    since: float
    key: object = None
    """The call the piece is from: a pack keeps each call's pieces side by side."""
    retried: bool = False
    started: bool = False
    speech: Speech | None = None
    """Where it has speech (found by the worker, off the caller's thread)."""

    @property
    def seconds(self) -> float:
        """What it takes in a pack: its speech (all of it until that is found)."""
        if self.speech is None:
            return self.audio.size / SAMPLE_RATE
        return sum(b - a for a, b in self.speech) / SAMPLE_RATE


@dataclass
class PackStats:
    """What the worker has done (for benches and tests)."""

    packs: int = 0
    pieces: int = 0
    audio_s: float = 0.0
    loops: int = 0
    notes: list[str] = field(default_factory=list)


class PackedTranscriber:
    """One worker thread that transcribes every call's pieces in packs (module docstring).

    :meth:`submit` is cheap and thread-safe; the future it returns is done when the
    piece's words are back (callbacks run on the worker thread; one call's pieces in the
    order it submitted them). A cancelled future's piece is left out of the next pack."""

    def __init__(
        self,
        transcriber: Transcriber,
        *,
        pack_s: float = PACK_S,
        gap_s: float = GAP_S,
        max_wait_s: float = MAX_WAIT_S,
        batch_wait_s: float = BATCH_WAIT_S,
    ) -> None:
        self.transcriber = transcriber
        self.pack_s = pack_s
        self.gap_s = gap_s
        self.max_wait_s = max_wait_s
        self.batch_wait_s = max(batch_wait_s, max_wait_s)
        self.stats = PackStats()
        self._queue: deque[WaitingPiece] = deque()
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None

    def submit(self, audio: Audio, t0: float, key: object = None) -> Future[PieceResult]:
        """Queue a piece (16 kHz mono) whose first sample is at ``t0`` on its call's clock;
        ``key`` names the call (pieces of one call go side by side in a pack)."""
        future: Future[PieceResult] = Future()
        arr = np.ascontiguousarray(audio, dtype=np.float32).reshape(-1)
        with self._cond:
            self._queue.append(WaitingPiece(arr, t0, future, time.monotonic(), key))
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="cutin-stt-pack", daemon=True
                )
                self._thread.start()
            self._cond.notify()
        return future

    def _run(self) -> None:
        _lower_priority()
        while True:
            batch = self._next_pack()
            try:
                self.run_pack(batch)
            except Exception as exc:  # the worker must go on serving the other calls
                for item in batch:
                    if not item.future.done():
                        item.future.set_result(
                            PieceResult([], error=f"{type(exc).__name__}: {exc}")
                        )

    def _next_pack(self) -> list[WaitingPiece]:
        """Wait for pieces; return the next pack once it is full or its first piece has
        waited :attr:`max_wait_s` (:attr:`batch_wait_s` when several calls' pieces wait)."""
        while True:
            with self._cond:
                while self._queue and self._queue[0].future.cancelled():
                    self._queue.popleft()
                if not self._queue:
                    self._cond.wait()
                    continue
                new = [w for w in self._queue if w.speech is None]
                if not new:
                    durations = [w.seconds for w in self._queue]
                    n = fits(durations, pack_s=self.pack_s, gap_s=self.gap_s)
                    waited = time.monotonic() - self._queue[0].since
                    calls = {id(w.key) if w.key is not None else id(w) for w in self._queue}
                    wait = self.batch_wait_s if len(calls) > 1 else self.max_wait_s
                    if n < len(durations) or waited >= wait:
                        return [self._queue.popleft() for _ in range(n)]
                    self._cond.wait(wait - waited)
                    continue
            # Off the lock: submit stays cheap for the calls' threads meanwhile.
            for item in new:
                try:
                    item.speech = find_speech(item.audio, self.transcriber.skip_silence_ms)
                except Exception:  # the filter failing must not lose the piece: all of it
                    item.speech = [(0, item.audio.size)]

    def run_pack(self, batch: Sequence[WaitingPiece]) -> None:
        """Transcribe one pack and hand each piece its words (the pieces a loop cut left
        untranscribed go round once more, first in the queue)."""
        live = [w for w in batch if w.started or w.future.set_running_or_notify_cancel()]
        if not live:
            return
        live = by_call(live)
        for item in live:
            item.started = True
        results, untouched = self.transcribe_pieces(
            [w.audio for w in live], [w.t0 for w in live], [w.speech for w in live]
        )
        again = [item for item in live[untouched:] if not item.retried]
        for k, (item, result) in enumerate(zip(live, results, strict=True)):
            if k < untouched or item.retried:
                item.future.set_result(result)
        if again:
            with self._cond:
                for item in reversed(again):
                    item.retried = True
                    self._queue.appendleft(item)
                self._cond.notify()

    def transcribe_pieces(
        self,
        pieces: Sequence[Audio],
        t0s: Sequence[float],
        speech: Sequence[Speech | None] | None = None,
    ) -> tuple[list[PieceResult], int]:
        """One packed pass over ``pieces`` (synchronous; benches and tests call it
        directly): each piece's result, and the index of the first piece that lay wholly
        after a loop cut (``len(pieces)`` when nothing was cut). ``speech``: where each
        piece has speech, if already found (else it is found here)."""
        skip = self.transcriber.skip_silence_ms
        found = [
            s if s is not None else find_speech(np.asarray(p, dtype=np.float32).reshape(-1), skip)
            for p, s in zip(pieces, speech or [None] * len(pieces), strict=True)
        ]
        packed = pack(pieces, found, gap_s=self.gap_s)
        seconds = packed.seconds
        spans = packed.spans
        guard = LoopGuard(seconds, spans)
        try:
            # The silences are already out: Whisper hears exactly the pack.
            transcript = self.transcriber.transcribe(
                packed.audio, fallback=False, guard=guard, skip_silence=False
            )
        except Exception as exc:  # an STT failure must not end a call: logged, estimated
            failed = f"{type(exc).__name__}: {exc}"
            return [PieceResult([], error=failed) for _ in pieces], len(pieces)
        self.stats.packs += 1
        self.stats.pieces += len(pieces)
        self.stats.audio_s += seconds
        per_piece = assign_words(transcript.words, packed, t0s)
        note, cut_t = transcript.note, guard.cut_t
        if note is None or cut_t is None:
            return [PieceResult(words) for words in per_piece], len(pieces)
        self.stats.loops += 1
        self.stats.notes.append(note)
        log.info("%s", note)  # the calls log it (each piece carries the note)
        # The pieces that lost words: the one the cut fell in and every one after it.
        touched = next((k for k, s in enumerate(spans) if s.end > cut_t), len(pieces))
        untouched = next((k for k, s in enumerate(spans) if s.start >= cut_t), len(pieces))
        results = [
            PieceResult(words, note if k >= touched else None) for k, words in enumerate(per_piece)
        ]
        return results, untouched
