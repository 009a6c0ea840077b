"""A call spoken with synthesized audio: :class:`AudioVoice` and its :class:`AudioSpeechTrack`.

The agent's text is synthesized sentence by sentence as it streams in, each clip
placed on the agent channel of the call's :class:`~sessions.call.timeline.CallTimeline`
right after the previous one (or as soon as it is ready), starting on the loop's
32 ms frame grid. A clip brings its words
(the TTS estimates, offset by the clip's start) and its Silero VAD probabilities,
computed once on the clip's own audio: ``speech_prob`` for a loop frame is the
probability of the clip frame under it, so the agent's real audio decides where
the 200 ms pauses are.

The caller's turns (typed text after disfluency injection) are synthesized in a
second voice on the caller channel, and their audio's length is how long the
caller holds the floor. Backchannel tokens come from a
:class:`~sessions.speech.backchannel_cache.BackchannelCache` held in memory and
are placed on the caller channel at once.

On the virtual clock everything is synchronous and deterministic (tests,
``cutin simulate --speech espeak``). In real time the agent's synthesis runs on a
worker thread, a :class:`~sessions.call.voice.audio_out.TimelinePlayer` plays the
timeline, and a stop cuts the agent's clips where the device has got to.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from sessions.call.commands import Command
from sessions.call.timeline import AGENT, CALLER, CallTimeline, Clip, to_sample
from sessions.call.voice.audio_out import LeadClock, TimelinePlayer
from sessions.call.voice.recording import CallRecording
from sessions.call.voice.speech_text import clause_pieces, pieces_to_espeak_ssml, split_sentences
from sessions.call.voice.voice import Microphone, Speaker
from sessions.clock import Clock
from sessions.speech import FRAME_S, FRAME_SAMPLES, SAMPLE_RATE
from sessions.speech.backchannel_cache import BackchannelCache, trim_silence
from sessions.speech.speech_clock import words_heard
from sessions.speech.timing import estimate_word_timings
from sessions.speech.tts import EspeakTts, Speech, Tts, speak_caller
from sessions.speech.vad import FrameVad, VadFrame, talk_over_seconds, vad_probs
from sessions.speech.words import TimedWord

Audio = npt.NDArray[np.float32]

PLACE_MARGIN_S = 0.02
"""With a device, audio is placed at least this far after what it has rendered."""
RECORD_EVERY_S = 0.25
RECORD_BEHIND_S = 0.5
"""Real time: the recording trails the device, so the microphone's blocks are in."""


@dataclass(frozen=True, slots=True)
class Prepared:
    """A synthesized sentence, not yet placed: audio, word times from its start, VAD."""

    text: str
    audio: Audio
    words: list[tuple[str, float, float]]
    probs: Audio


@dataclass(slots=True)
class Placed:
    start: float
    """Call time of the clip's first sample."""
    prepared: Prepared
    clip: Clip

    @property
    def end(self) -> float:
        return self.clip.end / SAMPLE_RATE


def synthesize_agent(tts: Tts, text: str) -> Speech:
    """The agent's voice: espeak gets SSML with short clause breaks (see speech_text)."""
    if isinstance(tts, EspeakTts):
        pieces = clause_pieces(text)
        audio = tts.synthesize_ssml(pieces_to_espeak_ssml(pieces))
        return Speech(audio, text, estimate_word_timings(pieces, audio), tts.name)
    return tts.synthesize(text)


def prepare(speech: Speech, vad: FrameVad | None) -> Prepared:
    words = [(w.word, w.start, w.end) for w in speech.words]
    probs = vad_probs(speech.audio, vad) if vad is not None else np.zeros(0, np.float32)
    return Prepared(speech.text, speech.audio, words, probs)


class AudioSpeechTrack:
    """One turn of one speaker as synthesized audio on the call timeline."""

    def __init__(self, voice: AudioVoice, speaker: Speaker) -> None:
        self.voice = voice
        self.speaker = speaker
        self.words: list[TimedWord] = []
        self.stream_done = False
        self.stopped_at: float | None = None
        self._buffer = ""
        self._jobs: deque[tuple[str, Future[Prepared]]] = deque()
        self._placed: list[Placed] = []

    # -- the protocol

    @property
    def onset(self) -> float | None:
        return self.words[0].start if self.words else None

    @property
    def end(self) -> float:
        if self.stopped_at is not None:
            return self.stopped_at
        return self.words[-1].end if self.words else 0.0

    @property
    def pending_text(self) -> str:
        waiting = [text for text, _ in self._jobs]
        return " ".join([*waiting, self._buffer.strip()]).strip()

    def add_text(self, text: str, now: float, *, final: bool = False) -> list[TimedWord]:
        self._buffer += text
        if final:
            self.stream_done = True
        if self.stopped_at is not None:
            return []  # kept as unspoken text, never synthesized
        sentences, self._buffer = split_sentences(self._buffer, final=final)
        for sentence in sentences:
            self._jobs.append((sentence, self.voice.synthesis(self.speaker, sentence)))
        return self._collect(now)

    def finish(self, now: float) -> list[TimedWord]:
        return self.add_text("", now, final=True)

    def tick(self, now: float) -> None:
        if self.stopped_at is None:
            self._collect(now)

    def speech_prob(self, t0: float, t1: float) -> float:
        total = 0.0
        for placed in reversed(self._placed):
            end = placed.end
            if end <= t0:
                break  # clips follow one another: earlier ones ended earlier
            lo, hi = max(t0, placed.start), min(t1, end)
            if lo >= hi:
                continue
            probs = placed.prepared.probs
            first = int((lo - placed.start) / FRAME_S)
            last = min(probs.size, math.ceil((hi - placed.start) / FRAME_S))
            for j in range(max(0, first), last):
                a = placed.start + j * FRAME_S
                overlap = min(hi, a + FRAME_S) - max(lo, a)
                if overlap > 0:
                    total += overlap * float(probs[j])
        return min(1.0, total / (t1 - t0))

    def heard(self, t: float) -> int:
        return words_heard(self.words, t)

    def finished(self, t: float) -> bool:
        return self.stream_done and not self._buffer.strip() and not self._jobs and t >= self.end

    def stop(self, t: float) -> float:
        if self.stopped_at is not None:
            return self.stopped_at
        at = self.voice.timeline.cut([p.clip for p in self._placed], to_sample(t))
        self.stopped_at = at / SAMPLE_RATE
        for _text, job in self._jobs:
            job.cancel()
        return self.stopped_at

    def talk_over(self, cut_t: float) -> float:
        frames: list[VadFrame] = []
        for placed in self._placed:
            for j, p in enumerate(placed.prepared.probs):
                start = placed.start + j * FRAME_S
                if start < placed.end:
                    frames.append(VadFrame(start, float(p)))
        return talk_over_seconds(frames, cut_t)

    # -- placing synthesized sentences

    def _collect(self, now: float) -> list[TimedWord]:
        added: list[TimedWord] = []
        while self._jobs and self._jobs[0][1].done():
            _text, job = self._jobs.popleft()
            added += self._place(job.result(), now)
        return added

    def _place(self, prepared: Prepared, now: float) -> list[TimedWord]:
        earliest = self.voice.earliest(now)
        follow = self._placed[-1].end if self._placed else earliest
        start_sample = to_sample(max(follow, earliest))
        channel = AGENT if self.speaker == "agent" else CALLER
        if channel == AGENT:
            # On the loop's frame grid, so each loop frame reads exactly one VAD frame of
            # the clip (a sentence pause grows by under 32 ms).
            start_sample = -(-start_sample // FRAME_SAMPLES) * FRAME_SAMPLES
        start = start_sample / SAMPLE_RATE
        clip = self.voice.timeline.place(channel, start_sample, prepared.audio)
        self._placed.append(Placed(start, prepared, clip))
        added = [TimedWord(w, start + a, start + b) for w, a, b in prepared.words]
        self.words.extend(added)
        return added


class _Done(Future[Prepared]):
    """A result computed on the spot (the virtual clock, the caller's words)."""

    def __init__(self, value: Prepared) -> None:
        super().__init__()
        self.set_result(value)


class AudioVoice:
    """Synthesized speech for both sides of a call, on one timeline (and one device)."""

    def __init__(
        self,
        *,
        name: str,
        agent_tts: Tts,
        caller_tts: Tts,
        vad: FrameVad,
        backchannels: BackchannelCache | None = None,
        player: TimelinePlayer | None = None,
        mic: Microphone | None = None,
        timeline: CallTimeline | None = None,
    ) -> None:
        self.name = name
        self.agent_tts = agent_tts
        self.caller_tts = caller_tts
        self.caller_hesitations = False
        self.vad = vad
        self.backchannels = backchannels
        self.timeline = timeline if timeline is not None else CallTimeline()
        self.player = player
        self.mic = mic
        self.recording: CallRecording | None = None
        self.clock: LeadClock | None = None
        self._worker: ThreadPoolExecutor | None = None
        self._last_t = 0.0
        self._recorded_at = 0.0
        self._closed = False

    @property
    def realtime(self) -> bool:
        return self.player is not None

    def record_to(self, recording: CallRecording) -> None:
        """Write both channels to ``recording`` as the call goes."""
        self.recording = recording

    # -- the protocol

    def track(self, speaker: Speaker, index: int, seed: int) -> AudioSpeechTrack:
        return AudioSpeechTrack(self, speaker)

    def tick(self, t: float) -> None:
        self._last_t = t
        if self.recording is None or t - self._recorded_at < RECORD_EVERY_S:
            return
        self._recorded_at = t
        if self.realtime:
            until = self.timeline.rendered - to_sample(RECORD_BEHIND_S)
        else:
            until = to_sample(t)
        if until > self.timeline.written:
            self.recording.push(*self.timeline.take(until))

    def backchannel(self, token: str, t: float) -> float | None:
        cache = self.backchannels
        if cache is not None and token in cache:
            audio = cache.get(token)
        else:  # a token the cache was not built with (a policy's own): made on the spot
            audio = trim_silence(self.caller_tts.synthesize(token).audio)
        self.timeline.place(CALLER, to_sample(self.earliest(t)), audio)
        return audio.size / SAMPLE_RATE

    def start(self, submit: Callable[[Command], None]) -> Clock:
        """Real time: align the device with a new call clock, start the microphone."""
        import time

        if self.player is None:
            raise RuntimeError("a virtual-clock voice has no device to start")
        t0 = time.monotonic()
        self.player.align(t0)
        self.clock = LeadClock(t0, self.player.lead_s)
        if self.mic is not None:
            self.mic.start(self.clock, submit)
        return self.clock

    def close(self) -> None:
        """Stop the devices and finish the recording (idempotent)."""
        if self._closed:
            return
        self._closed = True
        if self.mic is not None:
            self.mic.close()
        if self.player is not None:
            self.player.close()
        if self._worker is not None:
            self._worker.shutdown(wait=False, cancel_futures=True)
        if self.recording is not None:
            if self.realtime:
                until = self.timeline.rendered
            else:
                until = max(to_sample(self._last_t), self.timeline.latest_end())
            if until > self.timeline.written:
                self.recording.push(*self.timeline.take(until))
            self.recording.close()

    # -- for the tracks

    def earliest(self, t: float) -> float:
        """The first call time audio placed at loop time ``t`` can still be heard."""
        if not self.timeline.device:
            return t
        return max(t, self.timeline.rendered / SAMPLE_RATE + PLACE_MARGIN_S)

    def synthesis(self, speaker: Speaker, text: str) -> Future[Prepared]:
        """Synthesize ``text`` for ``speaker``: now (virtual clock, caller), else on a worker."""
        if speaker == "caller":
            speech = speak_caller(self.caller_tts, text, hesitations=self.caller_hesitations)
            return _Done(prepare(speech, None))
        if not self.realtime:
            return _Done(prepare(synthesize_agent(self.agent_tts, text), self.vad))
        if self._worker is None:
            self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="agent-tts")
        return self._worker.submit(
            lambda: prepare(synthesize_agent(self.agent_tts, text), self.vad)
        )
