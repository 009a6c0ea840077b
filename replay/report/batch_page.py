"""The batch part of the HTML report (``cutin report DIR --format html``): what a
person reads first.

* **A summary across the batch**: calls, scenarios, conditions, lagged calls, and the
  expectations of the scenarios' ``[expect]`` tables, evaluated as ``cutin check``
  evaluates them (:func:`replay.check.evaluate.evaluate`);
* **per condition** (the dials, as τ-Voice's Table 2): the realized interruptions and
  backchannels per agent turn with their 95% bootstrap intervals over calls, and a
  black-box agent's yield rate, false yields and latencies (the audit's pooled row,
  :func:`replay.audit.agent_measures.condition_row`);
* **plots** (:mod:`.plots`): yield- and response-latency CDFs per condition with
  τ-Voice's published values as reference lines (:mod:`.tau_voice_reference`), and the
  realized rates per dial with their intervals;
* **the trials** named by scenario, dials and run (the session id only in a tooltip),
  in a table whose columns sort on a click (a few lines of inline script; the table
  reads the same without it).

Measures are named in words with their τ-Voice symbol; the field name is a tooltip. A
lagged call (frames processed over one frame late at p99) is marked wherever its
timings appear, and its timings are left out of the pooled figures and the plots as
the audit leaves them out (:func:`replay.audit.lag.timing_free`); its yields stay.
Every text from a log is escaped. The numbers are :mod:`.batch_data`'s.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from replay.plural import noun, plural
from replay.report.batch_data import (
    DIALS,
    CallFacts,
    ConditionRow,
    call_facts,
    condition_rows,
    expectations_result,
)
from replay.report.plots import RatePoint, cdf_svg, rates_svg
from replay.report.tau_voice_reference import RATES, REFERENCES, SOURCE

if TYPE_CHECKING:
    from replay.check.evaluate import CheckResult
    from replay.model import Trial

OutcomeCells = Callable[["Trial"], tuple[str, str, str]]
"""A trial → its (mark, reward, verdicts) ``<td>`` cells, as the report renders them."""

LAG_MARK = "⚠"

CSS = """
.batch-facts{display:flex;flex-wrap:wrap;gap:.4rem 1.4rem;padding:0;list-style:none}
.batch-facts b{font-size:1.15em}
.scroll{overflow-x:auto}
th[data-sort]{cursor:pointer;font-size:.92em}th[data-sort]:after{content:" ⇅";color:#8a939c}
td.lagged,span.lagged{color:#9a6700;background:#fff4d6}
.plots{display:flex;flex-wrap:wrap;gap:1rem 2rem;align-items:flex-start}
.plots figure{margin:0;width:min-content}
.plots figcaption{color:#55606b;font-size:.9em}
"""

SORT_SCRIPT = """<script>
document.querySelectorAll("table.sortable").forEach(function (table) {
  table.querySelectorAll("th[data-sort]").forEach(function (th, col) {
    th.addEventListener("click", function () {
      var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
      var up = th.getAttribute("aria-sort") !== "ascending";
      var num = th.getAttribute("data-sort") === "num";
      rows.sort(function (a, b) {
        var x = a.cells[col].getAttribute("data-v"), y = b.cells[col].getAttribute("data-v");
        if (num) { x = x === "" ? Number.MAX_VALUE : +x; y = y === "" ? Number.MAX_VALUE : +y; }
        return (x < y ? -1 : x > y ? 1 : 0) * (up ? 1 : -1);
      });
      rows.forEach(function (r) { body.appendChild(r); });
      table.querySelectorAll("th").forEach(function (h) { h.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", up ? "ascending" : "descending");
    });
  });
});
</script>"""
"""Sorts a ``table.sortable`` on a header click by its cells' ``data-v``. No text from a
log is in it, and nothing is fetched."""


def _h(text: object) -> str:
    return html.escape(str(text), quote=True)


# ---------------------------------------------------------------- cells
def _num(v: float | None, digits: int = 2) -> str:
    return "—" if v is None or not math.isfinite(v) else f"{v:.{digits}f}"


def _ci(ci: Sequence[float] | None, digits: int = 2, scale: float = 1.0) -> str:
    if ci is None:
        return ""
    return f'<br><span class="meta">[{scale * ci[0]:.{digits}f}, {scale * ci[1]:.{digits}f}]</span>'


def _td(text: str, sort: object, *, cls: str = "num", title: str = "") -> str:
    v = "" if sort is None else sort
    tip = f' title="{_h(title)}"' if title else ""
    return f'<td class="{cls}" data-v="{_h(v)}"{tip}>{text}</td>'


def _th(words: str, field: str | None = None, kind: str = "num") -> str:
    tip = f' title="{_h(field)}"' if field else ""
    return f'<th data-sort="{kind}"{tip}>{words}</th>'


def _lag_title(f: CallFacts) -> str:
    ms = (f.lag_p99_s or 0.0) * 1000
    return (
        f"lagged: frames processed {ms:.0f} ms late at p99 (over one 32 ms frame); "
        "this call's timings are not trusted"
    )


def _timing(f: CallFacts, value: float | None, field: str) -> str:
    """A call's timing cell, marked when the call lagged."""
    if f.lagged:
        return _td(f"{_num(value)} {LAG_MARK}", value, cls="num lagged", title=_lag_title(f))
    return _td(_num(value), value, title=field)


# ---------------------------------------------------------------- the page's parts
def summary_html(facts: Sequence[CallFacts], rows: Sequence[ConditionRow]) -> list[str]:
    """The batch summary: facts, expectations, the per-condition table."""
    scenarios = sorted({f.scenario for f in facts if f.scenario})
    lagged = [f for f in facts if f.lagged]
    black_box = sum(f.raw_call is not None for f in facts)
    out = ['<section id="summary"><h2>Batch summary</h2><ul class="batch-facts">']
    out.append(f"<li><b>{len(facts)}</b> {noun(len(facts), 'call')}</li>")
    if scenarios:
        out.append(
            f"<li><b>{len(scenarios)}</b> {noun(len(scenarios), 'scenario')}: "
            f"{_h(', '.join(scenarios))}</li>"
        )
    out.append(f"<li><b>{len(rows)}</b> {noun(len(rows), 'condition')}</li>")
    if black_box:
        out.append(f"<li><b>{black_box}</b> to a black-box agent</li>")
    cls = "warn" if lagged else "pass"
    out.append(
        f'<li class="{cls}"><b>{len(lagged)}</b> lagged '
        f"{noun(len(lagged), 'call')}"
        + (
            " (their timings not trusted: marked ⚠, left out of the pooled latencies)"
            if lagged
            else ""
        )
        + "</li>"
    )
    out.append("</ul>")
    out.extend(_expectations_html(expectations_result(facts)))
    out.extend(_conditions_html(rows))
    out.append("</section>")
    return out


def _expectations_html(result: CheckResult | None) -> list[str]:
    if result is None:
        return [
            '<p class="meta">Expectations: the scenarios have no [expect] table '
            "(cutin check --expect FILE checks a run against a file).</p>"
        ]
    counts = result.counts()
    verdict = '<b class="pass">PASS</b>' if result.passed else '<b class="fail">FAIL</b>'
    out = [
        f"<p>Expectations (the scenarios' [expect], as cutin check): {verdict} · "
        + " · ".join(f"{n} {_h(s)}" for s, n in counts.items())
        + "</p><table><tr><th>measure</th><th>expected</th><th>measured</th><th>n</th>"
        "<th>verdict</th><th>note</th></tr>"
    ]
    for r in result.rows:
        cls = {"PASS": "pass", "FAIL": "fail"}.get(r.status, "warn")
        out.append(
            f"<tr><td><code>{_h(r.measure)}</code></td><td>{_h(r.expected)}</td>"
            f'<td class="num">{_num(r.measured, 3)}</td><td class="num">{r.n}</td>'
            f'<td class="{cls}">{_h(r.status)}</td><td class="meta">{_h(r.note)}</td></tr>'
        )
    out.append("</table>")
    out.extend(f'<p class="meta">{_h(n)}</p>' for n in result.notes)
    return out


def _conditions_html(rows: Sequence[ConditionRow]) -> list[str]:
    any_agent = any(r.agent for r in rows)
    out = [
        "<h3>Per condition</h3>",
        '<div class="scroll"><table class="sortable" id="conditions"><thead><tr>',
        _th("condition", kind="text"),
        _th("calls"),
        _th("interruptions per agent turn (realized β)", "interruptions_per_agent_turn"),
        _th("backchannels per agent turn (realized γ)", "backchannels_per_agent_turn"),
    ]
    if any_agent:
        out += [
            _th("yield rate R_Y", "yield_rate"),
            _th("false yields after backchannels (1 − S_BC)", "false_yield_rate"),
            _th("yield latency L_Y, mean (s)", "yield_latency_mean"),
            _th("response latency L_R, mean (s)", "response_latency_mean"),
        ]
    out.append(_th("lagged calls"))
    out.append("</tr></thead><tbody>")
    for r in rows:
        cells = [
            _td(_h(r.label).replace(" ", "&nbsp;"), r.label, cls=""),
            _td(str(len(r.calls)), len(r.calls)),
        ]
        for value, ci, n in (r.interruptions, r.backchannels):
            cells.append(_td(_num(value, 3) + _ci(ci, 3), value, title=f"{n} events"))
        if any_agent:
            a = r.agent or {}
            lag = f" {LAG_MARK}" if r.lagged else ""
            lag_tip = (
                f"; {r.lagged} lagged {noun(r.lagged, 'call')}: its latencies left out"
                if r.lagged
                else ""
            )
            cells += [
                _td(
                    _pct(a.get("yield_rate")) + _ci(a.get("yield_rate_ci"), 1, 100),
                    a.get("yield_rate"),
                    title=f"yield_rate: {a.get('yields', 0)} of "
                    f"{a.get('yield_total', 0)} interruptions",
                ),
                _td(
                    _pct(a.get("false_yield_rate")) + _ci(a.get("false_yield_rate_ci"), 1, 100),
                    a.get("false_yield_rate"),
                    title=f"false_yield_rate: {a.get('false_yields', 0)}"
                    f" of {a.get('backchannel_total', 0)} backchannels",
                ),
                _td(
                    _num(a.get("yield_latency_mean")) + _ci(a.get("yield_latency_mean_ci")) + lag,
                    a.get("yield_latency_mean"),
                    cls="num lagged" if r.lagged else "num",
                    title="yield_latency_mean" + lag_tip,
                ),
                _td(
                    _num(a.get("response_latency_mean"))
                    + _ci(a.get("response_latency_mean_ci"))
                    + lag,
                    a.get("response_latency_mean"),
                    cls="num lagged" if r.lagged else "num",
                    title="response_latency_mean" + lag_tip,
                ),
            ]
        cells.append(_td(str(r.lagged), r.lagged, cls="num lagged" if r.lagged else "num"))
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</tbody></table></div>")
    out.append(
        '<p class="meta">Realized per agent turn, pooled over the condition\'s calls; '
        "[95% bootstrap interval over calls]. "
        + (
            f"τ-Voice's published rates ({_h(SOURCE)}): yield rate R_Y {RATES['yield_rate']:g}, "
            f"backchannel selectivity S_BC {RATES['selectivity_backchannel']:g}."
            if any_agent
            else ""
        )
        + "</p>"
    )
    return out


def _pct(v: float | None) -> str:
    return "—" if v is None or not math.isfinite(v) else f"{100 * v:.1f}%"


def plots_html(facts: Sequence[CallFacts], rows: Sequence[ConditionRow]) -> list[str]:
    """Latency CDFs per condition with the reference lines, realized rates per dial."""
    figures: list[str] = []
    for key, words, attr in (
        ("yield_latency", "yield latency L_Y", "yield_latencies"),
        ("response_latency", "response latency L_R", "response_latencies"),
    ):
        series = [
            (
                r.label,
                [
                    v
                    for f in r.calls
                    if f.agent_call is not None
                    for v in getattr(f.agent_call, attr)
                ],
            )
            for r in rows
        ]
        svg = cdf_svg(words, series, REFERENCES[key])
        if svg:
            figures.append(
                f'<figure id="plot-{key}">{svg}<figcaption>{_h(words)}: the share of events at '
                f"or under each time, a line per condition; dashed: {_h(SOURCE)}.</figcaption>"
                "</figure>"
            )
    for dial, letter, index, words in (
        ("beta", "β", 0, "interruptions per agent turn"),
        ("gamma", "γ", 1, "backchannels per agent turn"),
    ):
        points = []
        for r in rows:
            configured = dict(r.condition).get(dial)
            value, ci, n = (r.interruptions, r.backchannels)[index]
            if configured is not None:
                points.append(RatePoint(r.label, configured, value, ci, n))
        if len({p.configured for p in points}) < 2:
            continue  # one level: nothing to draw against
        svg = rates_svg(words, letter, points)
        if svg:
            figures.append(
                f'<figure id="plot-{dial}">{svg}<figcaption>{_h(words)} realized at each '
                f"configured {letter} (τ-Voice's Table 2 shape), a point per condition; bars: 95% "
                "bootstrap intervals over calls.</figcaption></figure>"
            )
    if not figures:
        return []
    lagged = sum(f.lagged for f in facts)
    note = (
        f'<p class="meta">{plural(lagged, "lagged call")} left out of the latency plots '
        "(their timings are not trusted).</p>"
        if lagged
        else ""
    )
    return [
        '<section id="plots"><h2>Plots</h2><div class="plots">',
        *figures,
        "</div>",
        note,
        "</section>",
    ]


def trials_table_html(facts: Sequence[CallFacts], outcome: OutcomeCells) -> list[str]:
    """The trials, named by scenario, dials and run; ``outcome`` gives the report's own
    cells of a trial (its mark, its reward, its verdicts)."""
    out = [
        '<h2>Trials</h2><p class="meta">Click a column to sort; a trial\'s name opens it below.'
        "</p>",
        '<div class="scroll"><table class="sortable" id="trials"><thead><tr>',
        _th("", kind="text"),
        _th("call (scenario · dials · run)", kind="text"),
        _th("agent", kind="text"),
        *(_th(letter, f"tendencies.{k}") for k, letter in DIALS),
        _th("turns"),
        _th("interruptions (realized)", "realized_counts.interruptions"),
        _th("backchannels (realized)", "realized_counts.backchannels"),
        _th("yields R_Y", "yields / yield_total"),
        _th("yield latency L_Y, mean (s)", "yield_latency_mean"),
        _th("response latency L_R, mean (s)", "response_latency_mean"),
        _th("reward"),
        _th("verdicts", kind="text"),
        "</tr></thead><tbody>",
    ]
    for f in facts:
        mark, reward, verdicts = outcome(f.trial)
        real = f.realized or {}
        raw = f.raw_call
        ly = (
            sum(raw.yield_latencies) / len(raw.yield_latencies)
            if raw is not None and raw.yield_latencies
            else None
        )
        lr = (
            sum(raw.response_latencies) / len(raw.response_latencies)
            if raw is not None and raw.response_latencies
            else None
        )
        name = f'<a href="#t{f.index}">{_h(f.name)}</a>'
        if f.lagged:
            name += f' <span class="lagged" title="{_h(_lag_title(f))}">{LAG_MARK} lagged</span>'
        cells = [
            mark,
            _td(name, f.name, cls="", title=f"session {f.trial.id}"),
            _td(_h(f.agent), f.agent, cls=""),
            *(
                _td(
                    _num(f.dials.get(k), 2).rstrip("0").rstrip(".") if k in f.dials else "—",
                    f.dials.get(k),
                )
                for k, _ in DIALS
            ),
            _td(str(len(f.trial.turns)), len(f.trial.turns)),
            _td(str(real.get("interruptions", "—")), real.get("interruptions")),
            _td(str(real.get("backchannels", "—")), real.get("backchannels")),
            _td(
                f"{raw.yields}/{raw.yield_total}" if raw is not None and raw.yield_total else "—",
                raw.yields / raw.yield_total if raw is not None and raw.yield_total else None,
                title="yields / yield_total",
            ),
            _timing(f, ly, "yield_latency_mean") if raw is not None else _td("—", None),
            _timing(f, lr, "response_latency_mean") if raw is not None else _td("—", None),
            reward,
            verdicts,
        ]
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</tbody></table></div>")
    return out


def batch_html(trials: Sequence[Trial], outcome: OutcomeCells) -> list[str]:
    """The summary, the plots and the trials table, in that order."""
    facts = call_facts(trials)
    rows = condition_rows(facts)
    return [
        *summary_html(facts, rows),
        *plots_html(facts, rows),
        *trials_table_html(facts, outcome),
    ]


__all__ = [
    "CSS",
    "SORT_SCRIPT",
    "CallFacts",
    "batch_html",
    "call_facts",
    "condition_rows",
]
