"""Command palette entries of the replay screen (ctrl+p while replaying).

Each entry runs one of the screen's actions, so the palette, the keys and the
footer always do the same thing.
"""

from __future__ import annotations

from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

REPLAY_COMMANDS: tuple[tuple[str, str, str], ...] = (
    ("Next failure", "jump to the next failed turn or trial (n)", "next_failure"),
    ("Previous failure", "jump to the previous failed turn or trial (N)", "previous_failure"),
    ("Next cut", "jump to the next agent turn the tester cut (c)", "next_cut"),
    ("Previous cut", "jump to the previous cut (C)", "previous_cut"),
    ("Filter failures", "list only failed calls and trials, or all again (f)", "filter_failures"),
    ("Toggle verdict columns", "show or hide every judge column (v)", "toggle_columns"),
    ("Toggle rules column", "show or hide the rule judge's column (1)", "toggle_judge('rules')"),
    ("Toggle LLM column", "show or hide the LLM judge's column (2)", "toggle_judge('llm')"),
    ("Toggle τ2 column", "show or hide τ2's reward and review column (3)", "toggle_judge('tau2')"),
    ("Play turn audio", "play the focused turn from the call's recording (space)", "play_turn"),
    (
        "Run the rule judge",
        "judge the shown call with the rule judge now (kept in memory, not written)",
        "judge_rules",
    ),
    (
        "Write report",
        "write an HTML report of the listed calls and say where it is (r)",
        "write_report",
    ),
    ("Open report", "write the HTML report and open it in a browser", "open_report"),
    ("Reload", "load the calls again from disk", "reload"),
)
"""(title, help, screen action) of every palette entry."""


class ReplayCommands(Provider):
    """The replay actions, searchable by name."""

    def _hits(self) -> list[tuple[str, str, str]]:
        return list(REPLAY_COMMANDS)

    async def discover(self) -> Hits:
        for title, help_text, action in self._hits():
            yield DiscoveryHit(title, partial(self.screen.run_action, action), help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, action in self._hits():
            score = matcher.match(title)
            if score > 0:
                yield Hit(
                    score,
                    matcher.highlight(title),
                    partial(self.screen.run_action, action),
                    text=title,
                    help=help_text,
                )


__all__ = ["REPLAY_COMMANDS", "ReplayCommands"]
