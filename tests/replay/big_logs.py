"""Big legal session logs, written fast as text (tests/replay/test_big_logs.py, and by
hand: ``python -m tests.replay.big_logs OUT.jsonl MB``).

A call of many turns, each as the call loop logs it (an agent turn of 20 words, a user
turn, a short pause, an opportunity, a backchannel) plus events of a type this cutin
does not know (a newer cutin's, say), about 400 bytes an event on average: every line
legal, so the readers must take all of it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from sessions.log.writer import dump_line
from tests.support.logs import header

_TEXT = (
    "I have your order open and I can see the address we have on file which is the Elm Street one"
)
_WORDS = _TEXT.split(" ")
_UNKNOWN_PAD = "v" * 160


def _turn(n: int, t: float) -> list[str]:
    words = [
        {"word": w, "start": round(t + i * 0.4, 2), "end": round(t + i * 0.4 + 0.35, 2), "p": None}
        for i, w in enumerate(_WORDS)
    ]
    end = round(t + len(_WORDS) * 0.4, 2)
    events = [
        {"t": t, "type": "agent_turn_start", "turn": n, "text": _TEXT, "over_caller": False},
        {"t": round(t + 2.0, 2), "type": "short_pause", "index": n,
         "silence_start": round(t + 1.8, 2), "turn": n, "became_turn_end": False},
        {"t": round(t + 2.0, 2), "type": "opportunity", "index": n, "pause_index": n, "turn": n,
         "decision": "BACKCHANNEL", "checks": [], "executed": True, "mode": "auto",
         "policy": "rules", "situation": {}},
        {"t": round(t + 2.0, 2), "type": "backchannel", "turn": n, "trigger": "auto",
         "token": "mm-hmm", "words_heard": 5},
        {"t": end, "type": "agent_words", "turn": n, "words": words},
        {"t": round(end + 0.5, 2), "type": "agent_turn_end", "turn": n, "text": _TEXT,
         "spoken": _TEXT, "unspoken": "", "interrupted": False},
        {"t": round(end + 0.6, 2), "type": "user_turn", "turn": n, "source": "typed",
         "original": "fine, thanks", "rendered": "uh, fine, thanks",
         "insertions": [{"index": 0, "kind": "filler", "token": "uh,"}], "alpha": 0.5,
         "end_t": round(end + 1.6, 2)},
    ]  # fmt: skip
    lines = [json.dumps(e, separators=(",", ":")) for e in events]
    for k in range(len(lines)):  # a newer cutin's events in between
        lines.append(
            f'{{"t":{round(t + k * 0.1, 2)},"type":"vendor.metric","turn":{n},'
            f'"data":{{"k":{k},"note":"{_UNKNOWN_PAD}"}}}}'
        )
    return lines


def write_big_log(path: Path, megabytes: float) -> tuple[int, int]:
    """A legal log of about ``megabytes`` MB at ``path``: (bytes, events)."""
    target = int(megabytes * 1_000_000)
    size = events = 0
    with path.open("w", encoding="utf-8") as out:
        head = dump_line(header("big", scenario="retail-order-change")).rstrip("\n")
        out.write(head + "\n")
        size += len(head) + 1
        n, t = 0, 0.0
        while size < target:
            lines = _turn(n, round(t, 2))
            text = "\n".join(lines) + "\n"
            out.write(text)
            size += len(text)
            events += len(lines)
            n, t = n + 1, t + 12.0
        end = f'{{"t":{round(t, 2)},"type":"end","reason":"hangup"}}\n'
        out.write(end)
    return size + len(end), events + 1


if __name__ == "__main__":
    print(write_big_log(Path(sys.argv[1]), float(sys.argv[2])))
