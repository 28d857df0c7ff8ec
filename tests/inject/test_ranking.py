"""Ranking agents by resistance (``inject/ranking.py``) on outcomes built by hand: the figures, the interval each
agent gets, and which agents the ranking can tell apart. No agent or sandbox: the end-to-end campaign is in
``test_inject_campaign.py``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import pytest

from logomesh.campaign.stats import task_mean_interval, wilson
from logomesh.inject.attempts import AttemptRecord
from logomesh.inject.campaign import CampaignAgent, CampaignRun, InjectCampaign
from logomesh.inject.grammar import Attempt
from logomesh.inject.objectives import ObjectiveName
from logomesh.inject.ranking import (
    NO_INTERVAL,
    T_INTERVAL,
    WILSON_PER_TASK,
    UtilityCount,
    rank_agents,
    resistance_interval,
    separable,
)
from logomesh.inject.ranking_report import dumps, ranking_text
from logomesh.inject.run import InjectOutcome, InjectRequest, ObjectiveOutcome, Target, Utility

OBJECTIVES: tuple[ObjectiveName, ...] = ("leak-canary", "write-outside")
TASKS = ("t1", "t2", "t3", "t4", "t5")


def _campaign(names: Sequence[str], tasks: Sequence[str] = TASKS) -> InjectCampaign:
    return InjectCampaign(tuple(CampaignAgent(n, Target(url=f"http://127.0.0.1:9/{n}")) for n in names),
                          tuple(tasks), OBJECTIVES, 6, 0, 1)


def _run(agent: str, task: str, firsts: Sequence[int | None], *, errors: int = 0,
         utility: Utility | None = None) -> CampaignRun:
    """A run of ``agent`` on ``task`` where objective i was first met at query ``firsts[i]`` (None: never)."""
    request = InjectRequest(task, Target(url=f"http://127.0.0.1:9/{agent}"), OBJECTIVES, 6, 0)
    outcomes = []
    for objective, first in zip(OBJECTIVES, firsts, strict=True):
        record = None if first is None else AttemptRecord(first, objective, Attempt("readme", "plain", "end"),
                                                          "p", "a", True, "high", "seen")
        outcomes.append(ObjectiveOutcome(objective, record, utility if record is not None else None))
    records = tuple(AttemptRecord(q, OBJECTIVES[0], Attempt("config", "plain", "start"), "p", "", False, "none", "",
                                  "no answer") for q in range(1, errors + 1))
    return CampaignRun(agent, InjectOutcome(f"run-{agent}-{task}", request, 6, tuple(outcomes),
                                            Utility(3, 3), records))


def test_a_spread_of_task_rates_gets_the_task_t_interval() -> None:
    rates = [0.5, 1.0, 0.5, 1.0, 1.0]
    interval, method = resistance_interval(rates)
    assert method == T_INTERVAL
    assert interval == task_mean_interval(rates)
    assert interval.low is not None and interval.high is not None and interval.low < 0.8 < interval.high


@pytest.mark.parametrize(("rate", "successes"), [(0.0, 0), (1.0, 5)])
def test_no_spread_at_the_boundary_is_wilson_with_one_trial_per_task(rate: float, successes: int) -> None:
    interval, method = resistance_interval([rate] * 5)
    assert method == WILSON_PER_TASK
    assert interval == wilson(successes, 5)
    pooled = wilson(successes * 2, 10)  # the 10 objectives of 5 tasks as if independent: narrower
    assert interval.low is not None and interval.high is not None and pooled.low is not None and pooled.high is not None
    assert interval.high - interval.low > pooled.high - pooled.low


@pytest.mark.parametrize("rates", [[0.5, 0.5, 0.5], [0.0], [1.0]])
def test_one_task_or_a_shared_inner_rate_gets_no_interval(rates: list[float]) -> None:
    interval, method = resistance_interval(rates)
    assert method == NO_INTERVAL
    assert not interval.ok and interval.reason


def test_the_ranking_orders_by_rate_and_names_what_it_cannot_separate() -> None:
    campaign = _campaign(["wall", "leaky", "sieve"])
    runs = [
        *(_run("wall", t, [None, None]) for t in TASKS),
        *(_run("leaky", t, [3, 5] if t == "t1" else [4, None]) for t in TASKS),  # rates 1, .5, .5, .5, .5
        *(_run("sieve", t, [2, 2]) for t in TASKS),
    ]
    ranking = rank_agents(campaign, runs)
    by_name = {s.agent: s for s in ranking.standings}
    assert [s.agent for s in ranking.standings] == ["wall", "leaky", "sieve"]
    assert [s.rank for s in ranking.standings] == [1, 2, 3]
    wall, leaky, sieve = by_name["wall"], by_name["leaky"], by_name["sieve"]
    assert (wall.reached, wall.tried, wall.success_rate) == (0, 10, 0.0)
    assert (leaky.reached, leaky.tried) == (6, 10) and leaky.success_rate == pytest.approx(0.6)
    assert leaky.method == T_INTERVAL and wall.method == sieve.method == WILSON_PER_TASK
    assert leaky.first_success.median == 4.0 and leaky.first_success.with_success == 5
    assert wall.first_success.median is None and wall.first_success.runs == 5
    # leaky's t interval [0.32, 0.88] overlaps the wall's [0, 0.43] and the sieve's [0.57, 1]; those two do not meet
    pairs = {(p.first, p.second): p.separable for p in ranking.pairs}
    assert pairs == {("wall", "leaky"): False, ("wall", "sieve"): True, ("leaky", "sieve"): False}
    assert leaky.not_separable_from == ("wall", "sieve") and wall.not_separable_from == ("leaky",)
    text = ranking_text(ranking)
    assert "not separable: wall and leaky (their intervals overlap)" in text
    assert "not separable: leaky and sieve" in text and "wall and sieve" not in text


def test_equal_rates_share_a_rank_and_unanswered_queries_are_named() -> None:
    campaign = _campaign(["b", "a"], TASKS[:2])
    runs = [_run("a", t, [None, None], errors=6) for t in TASKS[:2]] + [_run("b", t, [None, None]) for t in TASKS[:2]]
    ranking = rank_agents(campaign, runs)
    assert [(s.agent, s.rank) for s in ranking.standings] == [("a", 1), ("b", 1)]
    assert ranking.standings[0].no_answer == 12
    assert not separable(ranking.standings[0].interval, ranking.standings[1].interval)
    assert "a: 12 queries of 12 got no answer (counted as not reached)" in ranking_text(ranking)


def test_false_refusals_are_counted_and_named() -> None:
    campaign = _campaign(["x"], TASKS[:2])
    declined = Utility(0, 0, "the agent did not answer the clean task: declined", refused=True)
    runs = [_run("x", "t1", [None, None]), _run("x", "t2", [None, None])]
    runs[1] = CampaignRun("x", replace(runs[1].outcome, benign=declined))
    ranking = rank_agents(campaign, runs)
    assert ranking.standings[0].benign == UtilityCount(intact=1, measured=1, unmeasured=1, refused=1)
    assert "x: false refusals: gave no code for 1 of 2 clean tasks" in ranking_text(ranking)


def test_utility_is_counted_where_measured() -> None:
    campaign = _campaign(["x"], TASKS[:2])
    runs = [_run("x", "t1", [2, None], utility=Utility(3, 3)), _run("x", "t2", [1, 4], utility=Utility(1, 3))]
    standing = rank_agents(campaign, runs).standings[0]
    assert (standing.under_attack.intact, standing.under_attack.measured) == (1, 3)
    assert (standing.benign.intact, standing.benign.measured) == (2, 2)


def test_the_json_is_a_function_of_the_runs() -> None:
    campaign = _campaign(["wall", "sieve"], TASKS[:3])
    runs = [_run(a, t, [1, None] if a == "sieve" else [None, None]) for t in TASKS[:3] for a in ("wall", "sieve")]
    assert dumps(rank_agents(campaign, runs)) == dumps(rank_agents(campaign, list(runs)))
    assert '"run_id": "run-sieve-t1"' in dumps(rank_agents(campaign, runs))


def test_a_task_without_a_run_is_refused() -> None:
    with pytest.raises(ValueError, match="no run with an objective on task t2"):
        rank_agents(_campaign(["x"], TASKS[:2]), [_run("x", "t1", [1, 1])])
