"""The "last decision" panel: what the rule decided at the latest short pause, and why."""

from __future__ import annotations

from rich.text import Text
from textual.widget import Widget

from cutin_tui.views.call_view import DecisionView, llm_cost
from cutin_tui.views.explain import RULES, outcome_words, rule_checks

_RULE_LABEL = {"interrupt": "interrupt", "backchannel": "backchannel"}
LABEL = 12
EMPTY = "No short pause yet. At each 200 ms pause in the agent's speech the rule decides here."


class DecisionLine(Widget, can_focus=False):
    """Shows a :class:`DecisionView`; set :attr:`decision` and refresh."""

    COMPONENT_CLASSES = {"decision--pass", "decision--fail", "decision--head", "decision--rule"}

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.decision: DecisionView | None = None

    def on_mount(self) -> None:
        self.border_title = "last decision"

    def show(self, decision: DecisionView | None) -> None:
        self.decision = decision
        self.refresh(layout=True)  # the height follows the text on small terminals

    def render(self) -> Text:
        d = self.decision
        if d is None:
            return Text(EMPTY, self.get_component_rich_style("decision--rule", partial=True))
        head = self.get_component_rich_style("decision--head", partial=True)
        ok = self.get_component_rich_style("decision--pass", partial=True)
        bad = self.get_component_rich_style("decision--fail", partial=True)
        rule_style = self.get_component_rich_style("decision--rule", partial=True)
        where = f"short pause #{d.pause_index + 1}" if d.pause_index is not None else "poll"
        out = Text()
        out.append(f"{d.t:.1f} s · {where} · agent turn {d.turn + 1} → ", head)
        out.append(
            outcome_words(
                d.decision, executed=d.executed, autos=d.autos, at_turn_end=d.at_turn_end
            ),
            head,
        )
        if d.outcome:
            out.append(f" · {d.outcome}", rule_style)
        if d.policy != "rules":
            cost = llm_cost(d.llm)
            out.append(f"  (policy {d.policy}{' · ' + cost if cost else ''})", rule_style)
        width = max(40, self.content_region.width or 100)
        for rule in RULES:
            checks = rule_checks(d.checks, rule, estimated=d.words_estimated)
            if not checks:
                continue
            out.append("\n")
            out.append(_RULE_LABEL[rule].ljust(LABEL), rule_style)
            used = LABEL
            for n, check in enumerate(checks):
                piece = len(check.text) + 2
                if n and used + 2 + piece > width:
                    # Wrap whole checks, never inside one, under the first check.
                    out.append("\n" + " " * LABEL)
                    used = LABEL
                elif n:
                    out.append("  ")
                    used += 2
                out.append("✓ " if check.passed else "✗ ", ok if check.passed else bad)
                out.append(check.text)
                used += piece
        if d.adapt:
            out.append("\n")
            out.append(d.adapt, rule_style)
        if d.shadow is not None:
            out.append("\n")
            out.append(f"shadow {d.shadow.policy} ".ljust(LABEL), rule_style)
            out.append(f"→ {d.shadow.decision}", head)
            cost = llm_cost(d.shadow.llm)
            if cost:
                out.append(f"  ({cost})", rule_style)
        return out
