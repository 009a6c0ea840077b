"""Command palette provider: every action of the screen it is opened from.

A screen opts in by having ``palette_entries()`` returning (title, help, action)
triples; the action is a Textual action string run on that screen. The call
screen lists its key bindings there (one source of truth) plus "set dial to"
entries, so everything the keys do can also be found by name.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Protocol, runtime_checkable

from textual.command import DiscoveryHit, Hit, Hits, Provider

PaletteEntry = tuple[str, str, str]
"""(title, help, action string)."""


@runtime_checkable
class HasPaletteEntries(Protocol):
    def palette_entries(self) -> list[PaletteEntry]: ...


class ScreenActions(Provider):
    """Offers the current screen's :meth:`palette_entries`."""

    def _entries(self) -> list[tuple[str, str, Callable[[], object]]]:
        screen = self.screen
        if not isinstance(screen, HasPaletteEntries):
            return []
        return [
            (title, help_text, partial(screen.run_action, action))
            for title, help_text, action in screen.palette_entries()
        ]

    async def discover(self) -> Hits:
        for title, help_text, run in self._entries():
            yield DiscoveryHit(title, run, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, run in self._entries():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), run, text=title, help=help_text)
