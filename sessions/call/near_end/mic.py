"""The tester's microphone in a call: capture -> utterances -> STT -> loop commands.

Threads, none of them the audio callback's (which only queues blocks):

- *capture*: maps each recorded block to the call clock, records it on the caller
  channel of the timeline (recorded, never played back), and cuts utterances --
  hands-free with VAD (:class:`~sessions.speech.segmenter.UtteranceSegmenter`), or
  between two presses of the talk key (:class:`~sessions.speech.segmenter.PushToTalk`;
  a terminal reports no key releases, so the key toggles). The onset of speech is
  submitted at once as :class:`CallerSpeechStart` (the loop cuts a speaking agent
  there);
- *stt*: transcribes each utterance and submits :class:`CallerUtterance`.

Blocks are timed by counting samples from the first one; if the input loses samples
(an overrun under load), every block of a window arrives late, and the missing
stretch is filled with silence so later speech keeps its call time
(:class:`~sessions.call.voice.audio_out.LatenessWatch`).

Speakers feed the agent back into an open microphone; use headphones (there is no
echo cancellation), or every agent sentence reads as the tester barging in.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from controls import PauseEventKind
from sessions.call.commands import CallerSpeechStart, CallerUtterance, Command
from sessions.call.timeline import CALLER, CallTimeline, to_sample
from sessions.call.voice.audio_out import LatenessWatch, LeadClock
from sessions.speech import SAMPLE_RATE
from sessions.speech.audio import MicRecorder, RecordedBlock
from sessions.speech.devices import AudioUnavailable
from sessions.speech.segmenter import PushToTalk, SpeechSegment, UtteranceSegmenter
from sessions.speech.stt import Transcriber
from sessions.speech.vad import FrameVad

Submit = Callable[[Command], None]


class MicInput:
    """Microphone -> commands for a call loop; :meth:`open`, then :meth:`start`."""

    def __init__(
        self,
        transcriber: Transcriber,
        *,
        device: int | str | None = None,
        vad: FrameVad | None = None,
        push_to_talk: bool = False,
        timeline: CallTimeline | None = None,
        tap: Callable[[npt.NDArray[np.float32]], None] | None = None,
    ) -> None:
        if vad is None and not push_to_talk:
            raise ValueError("hands-free input needs a VAD")
        self.transcriber = transcriber
        self.recorder = MicRecorder(device, blocksize=256)
        self.vad = vad
        self.push_to_talk = push_to_talk
        self.timeline = timeline
        self.tap = tap
        """Gets every captured block (lost stretches as silence), e.g. to send the
        tester's voice into a line to a black-box agent."""
        self.segmenter: UtteranceSegmenter | None = None
        self.ptt = PushToTalk()
        self._toggles: queue.SimpleQueue[bool] = queue.SimpleQueue()
        self._utterances: queue.Queue[SpeechSegment | None] = queue.Queue()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._submit: Submit | None = None
        self._clock: LeadClock | None = None
        self._t_first: float | None = None
        self._first_index = 0
        self._heard_until = 0.0
        self._watch = LatenessWatch(window_s=1.0, threshold_s=0.1)
        self.lost_s = 0.0
        """Seconds of input the device lost (filled with silence)."""
        self.talking = False
        """Push-to-talk: the talk key is on."""
        self.error: BaseException | None = None

    def open(self, timeout: float = 10.0) -> MicInput:
        """Start capturing (blocks before :meth:`start` are dropped)."""
        self.recorder.start()
        if not self.recorder.started.wait(timeout):
            self.recorder.stop()
            raise AudioUnavailable(f"the input device did not start within {timeout:g} s")
        return self

    def start(self, clock: LeadClock, submit: Submit) -> None:
        """Begin turning speech into commands for ``submit`` (the loop's)."""
        self._clock = clock
        self._submit = submit
        self.recorder.drain()
        for target, name in ((self._capture, "mic-capture"), (self._transcribe, "mic-stt")):
            thread = threading.Thread(target=target, name=name, daemon=True)
            thread.start()
            self._threads.append(thread)

    def toggle_talk(self) -> bool:
        """Push-to-talk: start or stop an utterance; returns whether talking now."""
        self.talking = not self.talking
        self._toggles.put(self.talking)
        return self.talking

    # -- capture thread

    def _call_time(self, block: RecordedBlock) -> float:
        """Call time of the block's first sample (fixed by the first block)."""
        if self._t_first is None:
            assert self._clock is not None
            captured = block.received - block.samples.size / SAMPLE_RATE
            self._t_first = captured - self.recorder.input_latency_s - self._clock.t0
            self._first_index = block.index
            if self.vad is not None and not self.push_to_talk:
                self.segmenter = UtteranceSegmenter(self.vad, t0=self._t_first)
        return self._t_first + (block.index - self._first_index) / SAMPLE_RATE

    def _capture(self) -> None:
        try:
            while not self._stop.is_set():
                self._handle_toggles()
                try:
                    block = self.recorder.blocks.get(timeout=0.02)
                except queue.Empty:
                    continue
                self._block(block)
        except BaseException as exc:  # kept for the owner; the call goes on typed
            self.error = exc

    def _block(self, block: RecordedBlock) -> None:
        t = self._call_time(block)
        end = t + block.samples.size / SAMPLE_RATE
        assert self._clock is not None
        due = self._clock.t0 + end + self.recorder.input_latency_s
        lost = self._watch.update(end, block.received - due)
        if lost:
            # Samples the device never delivered: silence, so what follows keeps its time.
            gap = np.zeros(round(lost * SAMPLE_RATE), dtype=np.float32)
            if self.tap is not None:
                self.tap(gap)
            self._feed(gap)
            assert self._t_first is not None
            self._t_first += gap.size / SAMPLE_RATE
            self.lost_s += gap.size / SAMPLE_RATE
            t = self._call_time(block)
            end = t + block.samples.size / SAMPLE_RATE
        self._heard_until = end
        if self.timeline is not None:
            self.timeline.place(CALLER, to_sample(t), block.samples, audible=False)
        if self.tap is not None:
            self.tap(block.samples)
        self._feed(block.samples)

    def _feed(self, samples: npt.NDArray[np.float32]) -> None:
        if self.push_to_talk:
            self.ptt.push(samples)
            return
        segmenter = self.segmenter
        assert segmenter is not None
        seen = len(segmenter.events)
        done = segmenter.push(samples)
        for ev in segmenter.events[seen:]:
            if ev.kind is PauseEventKind.SPEECH_START:
                self._send(CallerSpeechStart(at=round(ev.t, 4)))
        for utterance in done:
            self._utterances.put(utterance)

    def _handle_toggles(self) -> None:
        while True:
            try:
                on = self._toggles.get_nowait()
            except queue.Empty:
                return
            now = self._heard_until
            if on and not self.ptt.held:
                self.ptt.press(now)
                self._send(CallerSpeechStart(at=round(now, 4)))
            elif not on and self.ptt.held:
                utterance = self.ptt.release(now)
                if utterance is None:
                    self._send(CallerUtterance("", now, now))
                else:
                    self._utterances.put(utterance)

    def _send(self, command: Command) -> None:
        if self._submit is not None:
            self._submit(command)

    # -- stt thread

    def _transcribe(self) -> None:
        while True:
            utterance = self._utterances.get()
            if utterance is None:
                return
            try:
                heard = self.transcriber.transcribe(utterance.audio, t0=utterance.start)
                text = heard.text
                words = tuple((w.word, round(w.start, 4), round(w.end, 4)) for w in heard.words)
            except Exception as exc:  # one bad utterance must not end the tester's input
                self.error = exc
                text, words = "", ()
            self._send(CallerUtterance(text, utterance.speech_start, utterance.end, words))

    def finish(self, timeout: float = 10.0) -> list[Command]:
        """The call is ending: stop capturing, end an utterance still open, and wait (at
        most ``timeout`` seconds) for the words of every utterance heard so far.

        Returns the commands they make, for the call to apply before its end: its loop no
        longer reads ``submit``, and a tester's last sentence must not be lost because
        speech-to-text was still busy with it when the call hung up."""
        held: list[Command] = []
        self._submit = held.append
        self._stop.set()
        stt = [t for t in self._threads if t.name == "mic-stt"]
        for thread in self._threads:
            if thread not in stt:
                thread.join(timeout=2.0)
        if self.segmenter is not None:
            for utterance in self.segmenter.flush():
                self._utterances.put(utterance)
        elif self.push_to_talk and self.ptt.held:
            held_down = self.ptt.release(self._heard_until)
            if held_down is not None:
                self._utterances.put(held_down)
        self._utterances.put(None)
        for thread in stt:
            thread.join(timeout=timeout)
        self._threads.clear()
        return list(held)

    def close(self) -> None:
        """Stop capturing and transcribing (what is being transcribed is finished first)."""
        self._stop.set()
        self._utterances.put(None)
        for thread in self._threads:
            thread.join(timeout=10.0)
        self._threads.clear()
        self.recorder.stop()
