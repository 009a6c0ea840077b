"""The replay screen's left list: one entry per call or trial, optionally only failures.

Each entry reads ``✓``/``✗`` (``·`` for a call nothing judged), the id and task on
one line, and the reward, the verdict counts and the size of the call on a second,
dimmer one.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from cutin_tui.views.turn_layout import GLYPH, NOT_JUDGED, format_time
from replay.model import ERROR, FAIL, INFO, PASS, WARN, Trial

_COUNT_ORDER = (FAIL, WARN, ERROR, PASS, INFO)
_LABEL_STYLE = {
    FAIL: "bold red",
    WARN: "yellow",
    ERROR: "magenta",
    PASS: "green",
    INFO: "dim",
}


def _short(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def trial_prompt(trial: Trial) -> Text:
    """The two-line list entry of one trial."""
    failed = trial.failed
    text = Text(no_wrap=True, overflow="ellipsis")
    if not trial.judged:
        text.append(f"{NOT_JUDGED} ", "bold")
    else:
        text.append("✗ " if failed else "✓ ", "bold red" if failed else "bold green")
    text.append(_short(trial.id, 14))
    if trial.task_id is not None:
        text.append(f" · {_short(str(trial.task_id), 16)}", "dim")
    text.append("\n  ")
    if trial.reward is not None:
        text.append(f"reward {trial.reward:g}", "red" if failed else "green")
    elif not trial.judged:
        text.append("not judged", "dim")
    else:
        text.append("no reward", "dim")
    counts = trial.verdict_counts()
    if counts:
        text.append(" ·", "dim")
    for label in _COUNT_ORDER:
        if counts.get(label):
            text.append(f" {GLYPH[label]}{counts[label]}", _LABEL_STYLE[label])
    if trial.duration is not None:
        text.append(f" · {format_time(trial.duration)}", "dim")
    return text


class TrialList(OptionList):
    """Calls and trials; :meth:`show` fills it, :attr:`shown` maps entries to trials."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.trials: list[Trial] = []
        self.failures_only = False
        self.shown: list[int] = []
        """Index into :attr:`trials` of each entry, in list order."""

    def show(
        self, trials: Sequence[Trial], *, failures_only: bool, keep: Trial | None = None
    ) -> None:
        """List ``trials`` (only the failed ones with ``failures_only``), keeping
        ``keep`` highlighted if it is still listed."""
        self.trials = list(trials)
        self.failures_only = failures_only
        self.shown = [i for i, t in enumerate(self.trials) if t.failed or not failures_only]
        self.clear_options()
        self.add_options(Option(trial_prompt(self.trials[i]), id=f"trial-{i}") for i in self.shown)
        self._update_title()
        if not self.shown:
            return
        where = 0
        if keep is not None:
            where = next((n for n, i in enumerate(self.shown) if self.trials[i] is keep), 0)
        self.highlighted = where

    def append(self, trials: Sequence[Trial]) -> None:
        """Add newly loaded trials at the end (the highlight stays where it is)."""
        start = len(self.trials)
        self.trials.extend(trials)
        new = [
            i
            for i in range(start, len(self.trials))
            if self.trials[i].failed or not self.failures_only
        ]
        self.shown.extend(new)
        self.add_options(Option(trial_prompt(self.trials[i]), id=f"trial-{i}") for i in new)
        self._update_title()
        if self.highlighted is None and self.shown:
            self.highlighted = 0

    def refresh_trial(self, trial: Trial) -> None:
        """Redraw one entry (its verdicts changed)."""
        for n, i in enumerate(self.shown):
            if self.trials[i] is trial:
                self.replace_option_prompt_at_index(n, trial_prompt(trial))
        self._update_title()

    @property
    def current(self) -> Trial | None:
        """The highlighted trial."""
        if self.highlighted is None or not 0 <= self.highlighted < len(self.shown):
            return None
        return self.trials[self.shown[self.highlighted]]

    @property
    def position(self) -> int:
        """The highlighted entry's position (0 when nothing is highlighted)."""
        return self.highlighted or 0

    def trial_at(self, position: int) -> Trial:
        return self.trials[self.shown[position]]

    def _update_title(self) -> None:
        failed = sum(1 for t in self.trials if t.failed)
        unjudged = sum(1 for t in self.trials if not t.judged)
        what = "failures" if self.failures_only else "calls"
        self.border_title = f"{what} {len(self.shown)}"
        self.border_subtitle = f"{failed} failed of {len(self.trials)}" + (
            f" · {unjudged} not judged" if unjudged else ""
        )


__all__ = ["TrialList", "trial_prompt"]
