"""The tester hears the line: the agent's audio and the caller's, on the local speaker.

Optional (``cutin call --agent ... --listen``): a call to a black-box agent needs no
audio device, but a tester exploring an agent wants to hear it. The remote loop hands
every frame it exchanged with the line to :meth:`LineMonitor.push` (a non-blocking
append to the player's buffer); the device plays it a few tens of milliseconds later.
What the agent hears and what is measured never depend on this device.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from sessions.speech.audio import Player

Audio = npt.NDArray[np.float32]


class LineMonitor:
    def __init__(self, device: int | str | None = None) -> None:
        self.player = Player(device, blocksize=512)

    def start(self) -> LineMonitor:
        """Open the output device (:class:`~sessions.speech.devices.AudioUnavailable`)."""
        self.player.start()
        self.player.play(np.zeros(0, dtype=np.float32), more_coming=True)
        return self

    def push(self, agent: npt.NDArray[Any], caller: npt.NDArray[Any]) -> None:
        mixed = np.clip(np.asarray(agent, np.float32) + np.asarray(caller, np.float32), -1, 1)
        self.player.append(mixed)

    def close(self) -> None:
        self.player.close()
