"""Prompted-disfluency conditions: the text appended to a user simulator's system prompt.

Six conditions, as in the method paper's disfluency study (prompts-versus-rules,
section 4): the uninstructed baseline (``none``), the paper's own prompt at three
strengths, tau-Voice's published directives, and those directives with the
contradicting MINIMAL VERBOSITY line removed (``ablated``).
"""

from __future__ import annotations

from prompts import load_template, render

# The bracketed frequency of prompts-versus-rules Appendix A, the only text that varies
# across the three strengths; keys are the condition names the CLI accepts.
FREQUENCIES: dict[str, str] = {
    "occasionally": "Occasionally (at most once every few sentences)",
    "roughly-half": "Regularly (in roughly half of your sentences)",
    "most-sentences": "Frequently (in most sentences)",
}
MINIMAL_VERBOSITY_LINE = (
    "MINIMAL VERBOSITY: Avoid filler words, pleasantries, or elaboration unless "
    "specifically needed."
)
CONDITIONS: tuple[str, ...] = ("none", *FREQUENCIES, "tau-voice", "ablated")


def tau_voice_published() -> str:
    """tau-Voice's disfluency directives plus the MINIMAL VERBOSITY line, as published."""
    return load_template("tau_voice_disfluency")


def tau_voice_ablated() -> str:
    """The published directives with exactly the MINIMAL VERBOSITY line removed."""
    lines = tau_voice_published().splitlines()
    if MINIMAL_VERBOSITY_LINE not in lines:
        raise ValueError("tau_voice_disfluency.txt lost its MINIMAL VERBOSITY line")
    return "\n".join(line for line in lines if line != MINIMAL_VERBOSITY_LINE)


def directive(condition: str) -> str:
    """The text a condition appends to the system prompt (``""`` for ``none``)."""
    if condition == "none":
        return ""
    if condition in FREQUENCIES:
        return render("disfluency_prompted", frequency=FREQUENCIES[condition])
    if condition == "tau-voice":
        return tau_voice_published()
    if condition == "ablated":
        return tau_voice_ablated()
    raise ValueError(f"unknown disfluency condition {condition!r}; one of {', '.join(CONDITIONS)}")
