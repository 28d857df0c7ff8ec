"""The report's statistics on constructed campaigns whose true differences are known, checked against statsmodels.

Every expected interval or p-value here is computed independently of
``logomesh.campaign.stats``: statsmodels' cluster-robust OLS, its Wilson
interval and exact McNemar test, a numpy bootstrap, and binomial coefficients.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
import statsmodels.api as sm
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.proportion import proportion_confint

from logomesh.battle.result import BattleResult
from logomesh.campaign.aggregate import build_report
from logomesh.campaign.model import BattleRow, CampaignReport
from logomesh.campaign.plan import Agent, CampaignPlan
from logomesh.campaign.report_json import report_json
from logomesh.campaign.report_text import render_table
from logomesh.campaign.stats import pass_at_k, pass_hat_k, stable_seed

TASKS = tuple(f"task-{i}" for i in range(8))
BASE = (0.35, 0.8, 0.55, 0.2, 0.65, 0.45, 0.7, 0.3)
"""Each task's difficulty: the level both agents score around, far more spread than any gap between them."""


def _plan(agents: tuple[str, ...], repeat: int, tasks: tuple[str, ...] = TASKS) -> CampaignPlan:
    return CampaignPlan(campaign_id="c-stats", agents=tuple(Agent(name=a, mock_variant=a) for a in agents),
                        task_ids=tasks, repeat=repeat, seed=11)


def _result(cis: float, passed: int = 4, total: int = 4) -> dict[str, Any]:
    return {"cis_score": cis, "status": "scored", "rationale_score": cis, "architecture_score": cis,
            "testing_score": cis, "logic_score": cis, "red_penalty_applied": 0.0, "intent_penalty": 1.0,
            "tests": {"hidden": {"passed": passed, "failed": total - passed, "total": total}}}


def _report(plan: CampaignPlan, score: dict[str, Any]) -> CampaignReport:
    """``score[agent](task_index, repeat)`` -> (cis, hidden passed of 4)."""
    rows = []
    for job in plan.jobs():
        cis, passed = score[job.agent.name](plan.task_ids.index(job.task_id), job.repeat)
        rows.append(BattleRow(job.battle_id, job.agent.name, job.task_id, job.repeat,
                              BattleResult.from_json(_result(cis, passed))))
    return build_report(plan, rows)


def _noise(task: int, repeat: int, agent: int) -> float:
    """A fixed, zero-centred wobble: the same inputs give the same value."""
    return 0.03 * math.sin(1.7 * task + 2.3 * repeat + 0.9 * agent)


def test_agents_that_differ_on_every_task_are_separated() -> None:
    plan = _plan(("weak", "strong"), repeat=2)
    report = _report(plan, {
        "strong": lambda t, r: (BASE[t] + 0.15 + _noise(t, r, 0), 4),
        "weak": lambda t, r: (BASE[t] + _noise(t, r, 1), 4 if t % 2 else 2),
    })
    (comp,) = report.comparisons
    assert (comp.first, comp.second, comp.shared_tasks) == ("strong", "weak", 8)
    assert comp.verdict == "strong"
    assert comp.interval.low is not None and comp.interval.low > 0.1
    assert comp.interval.high is not None and comp.interval.high < 0.2
    assert [(r.agent, r.rank, r.tied) for r in report.leaderboard] == [("strong", 1, False), ("weak", 2, False)]
    # the pooled per-agent intervals overlap (the tasks differ far more than the agents): only the pairing separates
    strong, weak = report.leaderboard
    assert strong.ci_low is not None and weak.ci_high is not None and strong.ci_low < weak.ci_high


def test_agents_that_differ_only_by_noise_are_a_tie() -> None:
    plan = _plan(("amy", "bob"), repeat=2)
    report = _report(plan, {
        "amy": lambda t, r: (BASE[t] + _noise(t, r, 0), 4),
        "bob": lambda t, r: (BASE[t] + _noise(t, r, 1), 4),
    })
    (comp,) = report.comparisons
    assert comp.verdict == "tie" and comp.interval.ok and comp.interval.contains(0.0)
    assert [(r.rank, r.tied) for r in report.leaderboard] == [(1, True), (1, True)]
    assert render_table(report).count(" =1 ") == 2


def test_paired_interval_is_the_percentile_bootstrap_over_tasks() -> None:
    plan = _plan(("weak", "strong"), repeat=1)
    report = _report(plan, {"strong": lambda t, r: (BASE[t] + 0.1 + _noise(t, 0, 0), 4),
                            "weak": lambda t, r: (BASE[t] + _noise(t, 0, 1), 4)})
    (comp,) = report.comparisons
    diffs = np.array([(BASE[t] + 0.1 + _noise(t, 0, 0)) - (BASE[t] + _noise(t, 0, 1)) for t in range(8)])
    assert comp.mean_difference == pytest.approx(diffs.mean())
    # an independent bootstrap: numpy draws of task indices, many more resamples than the report uses
    rng = np.random.default_rng(2024)
    means = diffs[rng.integers(0, len(diffs), size=(200_000, len(diffs)))].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    assert comp.interval.low == pytest.approx(low, abs=0.004)
    assert comp.interval.high == pytest.approx(high, abs=0.004)
    # seeded: the same campaign gives the same interval, a different pair of names a different seed
    again = _report(plan, {"strong": lambda t, r: (BASE[t] + 0.1 + _noise(t, 0, 0), 4),
                           "weak": lambda t, r: (BASE[t] + _noise(t, 0, 1), 4)})
    assert again.comparisons[0].interval == comp.interval
    assert stable_seed(11, "strong", "weak") != stable_seed(11, "weak", "strong")


def test_identical_repeats_never_give_a_zero_width_interval() -> None:
    plan = _plan(("steady",), repeat=3, tasks=TASKS[:5])
    report = _report(plan, {"steady": lambda t, r: (BASE[t], 4)})  # every repeat of a task scores alike
    (row,) = report.leaderboard
    assert (row.tasks, row.battles) == (5, 15)
    assert row.ci_low is not None and row.ci_high is not None and row.ci_high - row.ci_low > 0.2
    # statsmodels: OLS on a constant, standard errors clustered by task, t with tasks - 1 df
    y = np.array([BASE[t] for t in range(5) for _ in range(3)])
    groups = np.array([t for t in range(5) for _ in range(3)])
    fit = sm.OLS(y, np.ones_like(y)).fit(cov_type="cluster", cov_kwds={"groups": groups}, use_t=True)
    low, high = fit.conf_int(alpha=0.05)[0]
    assert row.mean_cis == pytest.approx(fit.params[0])
    assert (row.ci_low, row.ci_high) == (pytest.approx(low), pytest.approx(high))
    # naive independent repeats would give a narrower interval: the cluster is what keeps it honest
    naive = sm.OLS(y, np.ones_like(y)).fit().conf_int(alpha=0.05)[0]
    assert naive[1] - naive[0] < high - low


def test_differences_alike_but_for_float_rounding_are_refused_not_a_zero_width_interval() -> None:
    plan = _plan(("a", "b"), repeat=1)
    report = _report(plan, {"a": lambda t, r: (round(BASE[t] + 0.2, 4), 4), "b": lambda t, r: (BASE[t], 4)})
    (comp,) = report.comparisons
    assert len({(BASE[t] + 0.2 - BASE[t]) for t in range(8)}) > 1  # the floats do differ in their last bits
    assert comp.verdict == "tie" and "no spread" in (comp.interval.reason or "")


def test_every_task_alike_or_one_task_refuses_the_interval_and_says_why() -> None:
    flat = _report(_plan(("flat",), repeat=3, tasks=TASKS[:4]), {"flat": lambda t, r: (0.8188, 4)})
    (row,) = flat.leaderboard
    assert (row.ci_low, row.ci_high) == (None, None)
    assert row.interval.reason is not None and "same mean" in row.interval.reason
    one = _report(_plan(("solo", "duo"), repeat=4, tasks=TASKS[:1]), {
        "solo": lambda t, r: (0.2 * r, 4), "duo": lambda t, r: (0.1 * r, 4)})
    for row in one.leaderboard:
        assert row.interval.ok is False and "1 task" in (row.interval.reason or "")
    (comp,) = one.comparisons
    assert comp.verdict == "tie" and "at least 5" in (comp.interval.reason or "")
    body = report_json(one)
    assert body["leaderboard"][0]["ci"]["low"] is None and "1 task" in body["leaderboard"][0]["ci"]["reason"]
    text = render_table(one)
    assert "no interval: 1 task" in text and "n/a" in text


def test_wilson_mcnemar_and_pass_at_k_agree_with_statsmodels_and_combinatorics() -> None:
    plan = _plan(("a", "b"), repeat=3)
    # a solves tasks 0-5 every time; b solves 0-1 always, 2-3 on two repeats of three, none of 4-7
    report = _report(plan, {
        "a": lambda t, r: (0.7, 4 if t < 6 else 1),
        "b": lambda t, r: (0.5, 4 if t < 2 or (t < 4 and r < 3) else 0),
    })
    board = {r.agent: r for r in report.leaderboard}
    assert (board["a"].solved_tasks, board["b"].solved_tasks) == (6, 2)
    low, high = proportion_confint(6, 8, alpha=0.05, method="wilson")
    assert (board["a"].solved_interval.low, board["a"].solved_interval.high) == (pytest.approx(low),
                                                                                 pytest.approx(high))
    (comp,) = report.comparisons
    assert (comp.first_only, comp.second_only) == (4, 0)
    table = [[2, comp.first_only], [comp.second_only, 2]]
    assert comp.mcnemar_p == pytest.approx(mcnemar(table, exact=True).pvalue)
    # pass@3 / pass^3 for b: tasks 0-1 three of three, 2-3 two of three, 4-7 none
    k = board["b"].pass_k
    assert k is not None and (k.k, k.tasks) == (3, 8)
    assert k.pass_at_k == pytest.approx(4 / 8)
    assert k.pass_hat_k == pytest.approx(2 / 8)
    assert pass_at_k(5, 2, 2) == pytest.approx(1 - math.comb(3, 2) / math.comb(5, 2))
    assert pass_hat_k(5, 2, 2) == pytest.approx(math.comb(2, 2) / math.comb(5, 2))
    cell = next(c for c in report.cells if (c.agent, c.task_id) == ("b", "task-2"))
    low, high = proportion_confint(8, 12, alpha=0.05, method="wilson")
    assert (cell.pass_interval.low, cell.pass_interval.high) == (pytest.approx(low), pytest.approx(high))


def test_a_three_way_ranking_ties_only_what_the_comparisons_cannot_separate() -> None:
    plan = _plan(("low", "mid", "top"), repeat=1)
    report = _report(plan, {
        "top": lambda t, r: (BASE[t] + 0.2 + _noise(t, 1, 0), 4),
        "mid": lambda t, r: (BASE[t] + 0.19 + _noise(t, 1, 1), 4),
        "low": lambda t, r: (BASE[t] + _noise(t, 1, 2), 4),
    })
    verdicts = {(c.first, c.second): c.verdict for c in report.comparisons}
    assert verdicts[("top", "mid")] == "tie"
    assert verdicts[("top", "low")] == "top" and verdicts[("mid", "low")] == "mid"
    assert [(r.agent, r.rank, r.tied) for r in report.leaderboard] == [
        ("top", 1, True), ("mid", 1, True), ("low", 3, False)]
