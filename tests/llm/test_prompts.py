"""Every prompt template renders; published prompts cite their source and match the paper."""

from __future__ import annotations

import re

import pytest

import prompts
from prompts import disfluency, interruption, tau_voice, user_sim
from tests.conftest import PAPER_APPENDICES

MINE = [n for n in prompts.template_names() if not n.startswith("judge_")]
PUBLISHED = [
    "disfluency_prompted",
    "tau_voice_disfluency",
    "tau_voice_interruption",
    "tau_voice_backchannel",
]


def test_the_expected_templates_ship() -> None:
    assert set(PUBLISHED) | {"user_sim_system", "interruption_line"} <= set(MINE)


@pytest.mark.parametrize("name", MINE)
def test_every_template_renders_and_documents_itself(name: str) -> None:
    variables = {v: f"<{v}>" for v in prompts.placeholders(name)}
    text = prompts.render(name, **variables)
    assert text.strip() and not text.startswith("#")
    for v in variables:
        assert f"<{v}>" in text
    assert prompts.template_header(name), f"{name} has no comment header"
    assert "{" + "}" not in text


@pytest.mark.parametrize("name", PUBLISHED)
def test_published_prompts_cite_their_source(name: str) -> None:
    header = prompts.template_header(name)
    assert "Source:" in header and "prompts-versus-rules" in header
    if name.startswith("tau_voice"):
        assert "Ray et al., 2026" in header
    if name in ("tau_voice_interruption", "tau_voice_backchannel"):
        assert "sierra-research/tau2-bench" in header
        assert "src/tau2/user/user_simulator_streaming.py" in header


def test_render_is_strict_about_variables() -> None:
    with pytest.raises(KeyError, match="goal"):
        prompts.render("user_sim_system", persona="p", end_mark="x")
    with pytest.raises(ValueError, match="colour"):
        prompts.render("interruption_line", agent_so_far="a", colour="red")
    with pytest.raises(KeyError, match="no prompt template"):
        prompts.load_template("does_not_exist")


def test_values_are_not_rescanned_for_placeholders() -> None:
    text = prompts.render("interruption_line", agent_so_far="say {agent_so_far} {x}")
    assert "say {agent_so_far} {x}" in text


def test_ablated_is_published_minus_exactly_the_minimal_verbosity_line() -> None:
    published = disfluency.directive("tau-voice").splitlines()
    ablated = disfluency.directive("ablated").splitlines()
    assert disfluency.MINIMAL_VERBOSITY_LINE in published
    assert len(published) == len(ablated) + 1
    removed = [line for line in published if line not in ablated]
    assert removed == [disfluency.MINIMAL_VERBOSITY_LINE]
    assert [line for line in published if line != disfluency.MINIMAL_VERBOSITY_LINE] == ablated


def test_the_three_strengths_differ_only_in_the_bracketed_frequency() -> None:
    texts = {c: disfluency.directive(c) for c in disfluency.FREQUENCIES}
    for condition, text in texts.items():
        frequency = disfluency.FREQUENCIES[condition]
        assert text.replace(frequency, "[F]") == texts["occasionally"].replace(
            disfluency.FREQUENCIES["occasionally"], "[F]"
        )
    assert disfluency.directive("none") == ""
    assert disfluency.CONDITIONS == (
        "none",
        "occasionally",
        "roughly-half",
        "most-sentences",
        "tau-voice",
        "ablated",
    )
    with pytest.raises(ValueError, match="unknown disfluency condition"):
        disfluency.directive("loud")


def test_user_sim_prompt_and_helpers() -> None:
    text = user_sim.system_prompt("Change my address.", "Dana, in a hurry.")
    assert "Change my address." in text and "Dana, in a hurry." in text
    assert "spoken aloud" in text and user_sim.END_MARK in text
    assert user_sim.split_end_mark(f"Bye now. {user_sim.END_MARK.lower()}") == ("Bye now.", True)
    assert user_sim.split_end_mark("Thanks.") == ("Thanks.", False)
    assert user_sim.agent_message("Hello", truncated=False) == "Hello"
    assert "Rebook me." in interruption.interruption_prompt("  Rebook me. ")


def test_tau_voice_history_format_matches_tau2() -> None:
    history = [("assistant", "Hello."), ("user", ""), ("user", "Hi, I need help.")]
    assert tau_voice.format_history(history, "Sure, let me") == (
        "ASSISTANT: Hello.\nUSER: Hi, I need help.\n"
        "ASSISTANT: Sure, let me [CURRENTLY SPEAKING, INCOMPLETE]"
    )
    long = [("user", f"m{i}") for i in range(150)]
    assert len(tau_voice.format_history(long, "x").splitlines()) == tau_voice.HISTORY_LIMIT
    assert tau_voice.is_yes(" yes\n") and not tau_voice.is_yes("Yes.")


# --- against the paper's own text ---------------------------------------------------


def _paper() -> str:
    """The paper's Appendix A and B, verbatim (tests/fixtures/paper, see its README)."""
    return PAPER_APPENDICES.read_text(encoding="utf-8")


def _as_sent(latex: str) -> str:
    """The paper's LaTeX-extracted typography as the characters it typesets."""
    return latex.replace("---", "—").replace("’", "'").strip()


def _appendix(paper: str, start: str, end: str | None) -> list[str]:
    """The non-blank lines from ``start`` up to ``end`` (None: to the end of the excerpt)."""
    first = paper.index(start)
    body = paper[first : paper.index(end, first) if end is not None else len(paper)]
    return [line for line in body.splitlines() if line.strip()]


def test_disfluency_prompts_match_appendix_a() -> None:
    lines = _appendix(_paper(), "Appendix A Verbatim", "Appendix B")
    ours = next(line for line in lines if line.startswith("Speech style"))
    bracket = re.search(r"\[(.*?)\]", ours)
    assert bracket is not None
    strengths = [s.strip() for s in bracket.group(1).split(" / ")]
    assert strengths == list(disfluency.FREQUENCIES.values())
    for condition, frequency in disfluency.FREQUENCIES.items():
        expected = _as_sent(ours.replace(bracket.group(0), frequency))
        assert disfluency.directive(condition) == expected
    start = lines.index("Speak naturally, as on a phone call:")
    tau_lines = [_as_sent(line) for line in lines[start : start + 4]]
    mv = next(line for line in lines if line.startswith("MINIMAL VERBOSITY"))
    assert disfluency.directive("tau-voice").splitlines() == [*tau_lines, _as_sent(mv)]


def test_classifier_prompts_contain_every_quoted_fragment_of_appendix_b() -> None:
    lines = _appendix(_paper(), "Appendix B $\\tau$-Voice", None)
    interruption_start = lines.index(next(x for x in lines if x.startswith("The agent is CURR")))
    backchannel_start = lines.index("Backchanneling:")
    quoted = {
        "tau_voice_interruption": lines[interruption_start:backchannel_start],
        "tau_voice_backchannel": lines[backchannel_start + 1 :],
    }
    for name, quote in quoted.items():
        body = " ".join(prompts.load_template(name).split())  # the paper reflows lines
        for line in quote:
            for fragment in _as_sent(line).split("[...]"):
                assert " ".join(fragment.split()) in body, f"{name} lacks {fragment.strip()!r}"
