"""The HTML report's batch page (issue 30, items 3 and 4): a summary first, trials named
by scenario and dials, plots whose reference lines and points sit at the right values
(read back from the SVG through its own tick labels, as a reader reads a plot), a lagged
call marked wherever its timings appear; opened in headless Chromium with no network
request and no console message; hostile names inert.

Truth by construction: the black-box calls are written with known yield latencies
(tests/check/crafted_runs.py), the simulated batch's realized rates are counted here
from the raw log lines, not through cutin's fold."""

from __future__ import annotations

import html
import itertools
import json
import re
import subprocess
from functools import cache
from html.parser import HTMLParser
from pathlib import Path

import pytest

from replay.load import load_paths
from replay.model import Trial
from replay.report.html_page import render_html
from replay.report.plots import RatePoint, Reference, cdf_svg, nice_ticks, rates_svg
from replay.report.tau_voice_reference import REFERENCES
from tests.check.crafted_runs import write_run
from tests.gallery.test_handout import CHROMIUM_FLAGS, chromium
from tests.replay.report_page import network_references

KNOWN = [0.2, 0.4, None, 0.6]
"""Yield latencies of each β 0.5 call (None: talked on)."""
SLOW = [0.8, 1.0, 1.2]
"""…of each β 1 call."""
LAGGED = [1.4, 1.45]
"""…of the one lagged β 0.5 call: in its row, marked; never in a plot."""


# ---------------------------------------------------------------- reading an SVG back
class Svg(HTMLParser):
    """Every element of the page's plots with its attributes, and each tick's label."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.plots: list[list[tuple[str, dict[str, str]]]] = []
        self.ticks: list[dict[str, list[tuple[float, float]]]] = []
        self._tick: tuple[str, float] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "svg" and "plot" in a.get("class", "").split():
            self.plots.append([])
            self.ticks.append({"x": [], "y": []})
        if not self.plots:
            return
        self.plots[-1].append((tag, a))
        if tag == "text" and a.get("class") in ("xtick", "ytick"):
            axis = a["class"][0]
            self._tick = (axis, float(a[axis]))

    def handle_data(self, data: str) -> None:
        if self._tick is not None:
            axis, px = self._tick
            self.ticks[-1][axis].append((float(data), px))  # the label a reader sees
            self._tick = None


def value_at(ticks: list[tuple[float, float]], px: float) -> float:
    """The value at pixel ``px`` on an axis, from its first and last tick labels."""
    (v0, p0), (v1, p1) = ticks[0], ticks[-1]
    return v0 + (px - p0) / (p1 - p0) * (v1 - v0)


def read_svgs(text: str) -> Svg:
    svg = Svg()
    svg.feed(text)
    return svg


def refs_of(svg: Svg, i: int) -> list[float]:
    return [
        value_at(svg.ticks[i]["x"], float(a["x1"]))
        for t, a in svg.plots[i]
        if t == "line" and a.get("class") == "ref"
    ]


def cdf_steps(svg: Svg, i: int) -> dict[str, list[float]]:
    """Each CDF line's values: the x of every step up, read through the tick labels."""
    out: dict[str, list[float]] = {}
    for tag, a in svg.plots[i]:
        if tag == "polyline" and a.get("class") == "cdf":
            pts = [tuple(map(float, p.split(","))) for p in a["points"].split()]
            ups = [x for (x, y0), (_, y1) in itertools.pairwise(pts) if y1 < y0]
            out[a["data-series"]] = [round(value_at(svg.ticks[i]["x"], x), 3) for x in ups]
    return out


# ---------------------------------------------------------------- the plots module
def test_nice_ticks_cover_the_range_in_round_steps() -> None:
    assert nice_ticks(0, 1.94) == [0, 0.5, 1, 1.5, 2]
    assert nice_ticks(0, 0.61) == [0, 0.2, 0.4, 0.6, 0.8]
    assert nice_ticks(0, 0) == [0, 0.2, 0.4, 0.6, 0.8, 1]


def test_a_cdf_draws_its_values_and_references_where_the_axis_says() -> None:
    text = cdf_svg(
        "yield latency",
        [("a", [0.3, 0.9, float("nan"), None]), ("b", [2.5])],
        [Reference("model X", 0.61), Reference("bad", float("inf"))],
    )
    svg = read_svgs(text)
    assert refs_of(svg, 0) == pytest.approx([0.61], abs=1e-3)
    assert cdf_steps(svg, 0) == {"a": [0.3, 0.9], "b": [2.5]}
    assert not re.search(r"\b(nan|inf|infinity)\b", text, re.IGNORECASE)
    assert cdf_svg("empty", [("a", [float("nan")])]) == ""


def test_a_rate_point_and_its_interval_sit_at_their_values() -> None:
    text = rates_svg("per turn", "β", [RatePoint("c", 0.5, 0.42, (0.3, 0.55), 12)])
    svg = read_svgs(text)
    (pt,) = [a for t, a in svg.plots[0] if t == "circle"]
    assert value_at(svg.ticks[0]["x"], float(pt["cx"])) == pytest.approx(0.5)
    assert value_at(svg.ticks[0]["y"], float(pt["cy"])) == pytest.approx(0.42, abs=1e-3)
    (bar,) = [a for t, a in svg.plots[0] if t == "line" and a.get("class") == "ci"]
    ends = sorted(value_at(svg.ticks[0]["y"], float(bar[k])) for k in ("y1", "y2"))
    assert ends == pytest.approx([0.3, 0.55], abs=1e-3)


def test_plot_text_is_escaped() -> None:
    text = cdf_svg("</svg><script>x</script>", [("\x1b[31m<b>", [1.0])])
    assert "<script>" not in text and "<b>" not in text and "&lt;script&gt;" in text


# ---------------------------------------------------------------- the batch page
@cache
def _simulated(root: str) -> list[Path]:
    from cutin_tui.cli import main

    out = Path(root) / "sim"
    code = main(
        [
            "simulate",
            "--scenario",
            "airline-rebooking",
            "--beta",
            "0,1",
            "--gamma",
            "1",
            "--runs",
            "2",
            "--seed",
            "3",
            "--out",
            str(out),
        ]
    )
    assert code == 0
    return sorted(out.glob("*.jsonl"))


@pytest.fixture(scope="module")
def batch(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Trial], list[Path], str]:
    root = tmp_path_factory.mktemp("batchpage")
    known = write_run(root / "known", [KNOWN, KNOWN, LAGGED], beta=0.5, lagged=[2])
    slow = write_run(root / "slow", [SLOW, SLOW], beta=1.0, first_seed=10)
    sim = _simulated(str(root))
    paths = [known, slow, *sim]
    trials = load_paths(paths)
    return trials, sim, render_html(trials)


def _section(text: str, start: str, end: str) -> str:
    return text[text.index(start) : text.index(end, text.index(start))]


def test_the_summary_comes_first_and_counts_the_batch(
    batch: tuple[list[Trial], list[Path], str],
) -> None:
    _, sim, text = batch
    summary, plots, trials = (text.index(s) for s in ('id="summary"', 'id="plots"', 'id="trials"'))
    assert summary < plots < trials < text.index("<details")
    head = re.sub(r"<[^>]+>", "", _section(text, 'id="summary"', "</ul>"))
    calls = 3 + 2 + len(sim)
    assert f"{calls} calls" in head and "5 to a black-box agent" in head
    assert "1 lagged call" in head
    assert "2 scenarios: airline-rebooking, retail-order-change" in head


def test_trials_are_named_by_scenario_and_dials_not_hashes(
    batch: tuple[list[Trial], list[Path], str],
) -> None:
    trials, _, text = batch
    table = _section(text, 'id="trials"', "</table>")
    names = re.findall(r'<a href="#t\d+">([^<]+)</a>', table)
    assert len(names) == len(trials)
    assert "airline-rebooking · α 0.5 · β 1 · γ 1 · run 2" in names
    assert "retail-order-change · α 0 · β 0.5 · γ 0" in names
    for t in trials:  # the session id only in a tooltip
        assert t.id not in names and f'title="session {t.id}"' in table
    # Measures in words with the τ-Voice symbol, the field in the tooltip.
    assert (
        '<th data-sort="num" title="yield_latency_mean">yield latency L_Y, mean (s)</th>' in table
    )
    assert "<th>field</th>" not in text


def test_the_lagged_call_is_marked_wherever_its_timings_appear(
    batch: tuple[list[Trial], list[Path], str],
) -> None:
    _, _, text = batch
    rows = _section(text, 'id="trials"', "</table>").split("<tr>")
    lagged = [r for r in rows if "⚠ lagged" in r]
    assert len(lagged) == 1
    mean = sum(LAGGED) / len(LAGGED)
    assert f'class="num lagged" data-v="{mean}"' in lagged[0] and "not trusted" in lagged[0]
    cond = [r for r in _section(text, 'id="conditions"', "</table>").split("<tr>") if "β 0.5" in r]
    assert len(cond) == 1 and cond[0].count("⚠") == 2  # both its latency means
    # Its yields count (2 of 2 + 3 of 4 twice), its latencies do not.
    assert "80.0%" in cond[0]  # 8 of 10 yields
    known = [v for v in KNOWN if v is not None]
    assert f"{sum(known) / len(known):.2f}" in cond[0]


def test_latency_plots_hold_the_known_latencies_and_the_published_references(
    batch: tuple[list[Trial], list[Path], str],
) -> None:
    _, _, text = batch
    svg = read_svgs(_section(text, 'id="plots"', "</section>"))
    lines = {a["aria-label"]: i for i, p in enumerate(svg.plots) for t, a in p[:1]}
    ly, lr = lines["yield latency L_Y"], lines["response latency L_R"]
    assert refs_of(svg, ly) == pytest.approx([REFERENCES["yield_latency"][0].value], abs=2e-3)
    assert refs_of(svg, lr) == pytest.approx([1.94], abs=2e-3)
    assert REFERENCES["yield_latency"][0].value == 0.61
    steps = cdf_steps(svg, ly)
    known = sorted(v for v in KNOWN if v is not None)
    assert steps["α 0 · β 0.5 · γ 0"] == pytest.approx(sorted(known * 2), abs=2e-3)  # no 1.4
    assert steps["α 0 · β 1 · γ 0"] == pytest.approx(sorted(SLOW * 2), abs=2e-3)
    assert "1 lagged call left out of the latency plots" in text


def _counted(log: Path) -> tuple[int, int]:
    """Executed interruptions and agent turns, counted on the raw lines."""
    kinds = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    turns = sum(k.get("type") == "agent_turn_start" for k in kinds)
    cuts = sum(k.get("type") == "interruption" and k.get("trigger") == "auto" for k in kinds)
    return cuts, turns


def test_realized_rates_per_dial_sit_at_the_counted_rates(
    batch: tuple[list[Trial], list[Path], str],
) -> None:
    _, sim, text = batch
    svg = read_svgs(_section(text, 'id="plots"', "</section>"))
    (i,) = [i for i, p in enumerate(svg.plots) if p[0][1]["aria-label"].endswith("configured β")]
    for beta in (0.0, 1.0):
        logs = [p for p in sim if f"_b{beta:g}_" in p.name]
        cuts, turns = map(sum, zip(*(_counted(p) for p in logs), strict=True))
        points = [
            a for t, a in svg.plots[i] if t == "circle" and a["data-configured"] == f"{beta:g}"
        ]
        ys = [value_at(svg.ticks[i]["y"], float(a["cy"])) for a in points]
        assert any(abs(y - cuts / turns) < 2e-3 for y in ys), (beta, cuts, turns, ys)
    assert cuts > 0  # β 1 did interrupt


def test_hostile_names_render_inert(tmp_path: Path) -> None:
    from sessions.log.models import AgentInfo
    from tests.check.crafted_runs import call_events
    from tests.support.logs import header, tendencies, write_log

    evil = "\x1b[31m</script><script>alert(1)</script>\u2028"
    for i in range(2):
        head = header(
            f"h{i}",
            agent=AgentInfo(kind="twilio", name=evil),
            scenario=evil,
            tendencies=tendencies(0.0, 1.0, 0.0),
        )
        write_log(tmp_path / f"h{i}.jsonl", call_events([0.3, 0.5]), head)
    text = render_html(load_paths([tmp_path]))
    assert "\x1b" not in text and "alert(1)</script>" not in text
    assert text.count("<script>") == 1  # the page's own sorter, nothing from the log
    assert network_references(text) == []


@pytest.mark.slow
def test_the_batch_page_opens_in_headless_chromium(
    batch: tuple[list[Trial], list[Path], str], tmp_path: Path
) -> None:
    browser = chromium()
    if browser is None:
        pytest.skip("chromium is not installed (apt-get install chromium)")
    _, _, text = batch
    assert network_references(text) == []
    page = tmp_path / "batch.html"
    page.write_text(text, encoding="utf-8")
    proc = subprocess.run(
        [
            browser,
            *CHROMIUM_FLAGS,
            f"--user-data-dir={tmp_path / 'profile'}",
            "--enable-logging=stderr",
            "--v=0",
            "--dump-dom",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    dom, log = proc.stdout, proc.stderr
    assert "CONSOLE" not in log, log[-2000:]  # no console message (an error would be one)
    assert "ERR_" not in log and "Failed to load" not in log, log[-2000:]
    # The browser built it: the summary, every plot and the sortable tables are in its DOM.
    assert dom.index('id="summary"') < dom.index('id="plots"') < dom.index('id="trials"')
    assert dom.count('class="plot"') == text.count('class="plot"') >= 4
    assert dom.count('<line class="ref"') == 2


def test_the_summary_holds_the_scenarios_expectations_as_cutin_check_judges_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from types import SimpleNamespace

    import sessions.scenarios
    from sessions.scenarios.expect import parse_expect

    expect = parse_expect({"yield_rate": ">= 0.9", "yield_latency_mean": "<= 0.5"})
    monkeypatch.setattr(
        sessions.scenarios, "load_scenario", lambda name: SimpleNamespace(expectations=expect)
    )
    run = write_run(tmp_path / "known", [KNOWN] * 6 + [LAGGED], beta=0.5, lagged=[6])
    text = render_html(load_paths([run]))
    summary = re.sub(r"<[^>]+>", " ", _section(text, 'id="summary"', 'id="conditions"'))
    summary = html.unescape(" ".join(summary.split()))
    # 18 of 24 interruptions yielded in the calls that did not lag: 0.75 < 0.9.
    assert "Expectations (the scenarios' [expect], as cutin check): FAIL" in summary
    assert "yield_rate >= 0.9 0.750 24 FAIL" in summary
    assert "yield_latency_mean <= 0.5 0.400 18 PASS" in summary
    assert "1 of 7 calls lagged" in summary


@pytest.mark.slow
def test_a_click_sorts_the_trials_in_chromium(
    batch: tuple[list[Trial], list[Path], str], tmp_path: Path
) -> None:
    browser = chromium()
    if browser is None:
        pytest.skip("chromium is not installed (apt-get install chromium)")
    _, _, text = batch
    # The test clicks the β header twice (the page's own sorter does the rest).
    click = "<script>var th=document.querySelectorAll('#trials th')[4];th.click();</script>"
    orders = []
    for clicks in (1, 2):
        page = tmp_path / f"sorted{clicks}.html"
        page.write_text(text.replace("</body>", click * clicks + "</body>"), encoding="utf-8")
        dom = subprocess.run(
            [browser, *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'profile'}",
             "--dump-dom", page.as_uri()],
            capture_output=True, text=True, timeout=120,
        ).stdout  # fmt: skip
        table = dom[dom.index('id="trials"') : dom.index("</table>", dom.index('id="trials"'))]
        rows = table.split("<tr>")[2:]
        betas = [float(re.findall(r'data-v="([^"]*)"', r)[4]) for r in rows]
        assert len(betas) == text.count('<details id="t')
        orders.append(betas)
    assert orders[0] == sorted(orders[0]) and orders[1] == sorted(orders[1], reverse=True)
    assert orders[0] != orders[1]
