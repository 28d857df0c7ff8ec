"""Campaign plans: ids, seeds, agents, saved plans and what a resume runs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ledger import Ledger
from logomesh.battle.request import SEED_LIMIT
from logomesh.campaign.executor import default_workers
from logomesh.campaign.plan import (
    Agent,
    CampaignPlan,
    PlanError,
    Settings,
    battle_seed,
    load_plan,
    new_plan,
    parse_agents,
    resolve_tasks,
    save_plan,
)
from logomesh.campaign.runner import pending_jobs
from logomesh.tasks import all_tasks


def _plan(agents: tuple[Agent, ...] | None = None, repeat: int = 3, seed: int = 7,
          campaign_id: str | None = None) -> CampaignPlan:
    return new_plan(agents or parse_agents([], ["good"]), ("rate-limiter", "lru-cache"), repeat, seed,
                    Settings(red=False), campaign_id)


def test_every_agent_task_and_repeat_is_one_job_with_a_unique_mock_servable_id() -> None:
    plan = new_plan(parse_agents(["alice=http://127.0.0.1:1"], ["good"]), ("rate-limiter", "lru-cache"), 3, 7,
                    Settings())
    jobs = plan.jobs()
    assert len(jobs) == 2 * 2 * 3
    assert len({j.battle_id for j in jobs}) == len(jobs)
    assert [j.index for j in jobs] == list(range(len(jobs)))
    good = [j for j in jobs if j.agent.name == "good"]
    # TASK:VARIANT:... is the form the mock purple agent serves without a response file
    assert all(j.battle_id.split(":")[:2] == [j.task_id, "good"] for j in good)
    assert {(j.task_id, j.repeat) for j in good} == {(t, r) for t in ("rate-limiter", "lru-cache") for r in (1, 2, 3)}


def test_agents_meet_the_same_seed_on_the_same_task_and_repeat() -> None:
    plan = new_plan(parse_agents(["a=http://x.test"], ["good"]), ("rate-limiter",), 4, 7, Settings())
    by_repeat: dict[int, set[int]] = {}
    for job in plan.jobs():
        by_repeat.setdefault(job.repeat, set()).add(job.seed)
    assert all(len(seeds) == 1 for seeds in by_repeat.values())
    assert len({next(iter(s)) for s in by_repeat.values()}) == 4  # repeats differ
    assert all(0 <= battle_seed(s, t, r) < SEED_LIMIT for s in (0, 2**52) for t in ("a", "b") for r in range(50))


def test_the_default_campaign_id_is_a_hash_of_the_plan() -> None:
    assert _plan().campaign_id == _plan().campaign_id
    assert _plan().campaign_id != _plan(seed=8).campaign_id
    assert _plan(campaign_id="nightly-1").campaign_id == "nightly-1"


@pytest.mark.parametrize(
    ("purple", "mock", "message"),
    [
        ([], [], "at least one agent"),
        (["alice"], [], "NAME=URL"),
        (["alice=ftp://x"], [], "http:// or https://"),
        (["a b=http://x"], [], "agent name"),
        (["good=http://x"], ["good"], "given twice"),
    ],
)
def test_bad_agents_are_refused_with_the_fix(purple: list[str], mock: list[str], message: str) -> None:
    with pytest.raises(PlanError, match=message):
        parse_agents(purple, mock)


def test_bad_plans_are_refused_with_the_fix() -> None:
    with pytest.raises(PlanError, match="unknown task"):
        resolve_tasks("rate-limiter,nope")
    with pytest.raises(PlanError, match="empty"):
        resolve_tasks(" , ")
    with pytest.raises(PlanError, match="no mock variant 'nonexistent'"):
        _plan(agents=(Agent("nonexistent", mock_variant="nonexistent"),))
    with pytest.raises(PlanError, match="--repeat"):
        _plan(repeat=0)
    with pytest.raises(PlanError, match="--repeat must be from 1 to 1000, not 1001"):
        _plan(repeat=1001)
    with pytest.raises(PlanError, match="2\\*\\*53"):
        _plan(seed=SEED_LIMIT)
    with pytest.raises(PlanError, match="campaign id"):
        _plan(campaign_id="../escape")
    assert resolve_tasks("all") == tuple(t.id for t in all_tasks())


def test_a_campaign_too_large_to_enumerate_is_refused_before_any_job_is_built() -> None:
    agents = parse_agents([], ["good", "no-lock"])
    tasks = tuple(f"task-{i}" for i in range(60))
    too_many = re.escape("120,000 battles (2 agents x 60 tasks x 1000 repeats), more than 100,000")
    with pytest.raises(PlanError, match=too_many):
        CampaignPlan("c-big", agents, tasks, 1000, 0)
    # the same limit holds for a plan read back from disk, not only for one made through new_plan
    body = _plan().to_json()
    body["repeat"] = 12_700_000
    with pytest.raises(PlanError, match="--repeat must be from 1 to 1000, not 12700000"):
        CampaignPlan.from_json(body)


def test_a_saved_plan_loads_back_equal_and_a_missing_one_is_a_clear_error(tmp_path: Path) -> None:
    plan = _plan()
    save_plan(tmp_path, plan)
    assert load_plan(tmp_path, plan.campaign_id) == plan
    assert [p.name for p in (tmp_path / "campaigns").iterdir()] == [f"{plan.campaign_id}.json"]
    with pytest.raises(PlanError, match="no campaign 'other'"):
        load_plan(tmp_path, "other")
    (tmp_path / "campaigns" / "bad.json").write_text("{", encoding="utf-8")
    with pytest.raises(PlanError, match="unreadable"):
        load_plan(tmp_path, "bad")


def test_pending_jobs_are_the_plan_minus_the_ledger(tmp_path: Path) -> None:
    plan = _plan()
    jobs = plan.jobs()
    with Ledger.open(tmp_path) as led:
        for job in jobs[:4]:
            led.append(job.battle_id, {"battle_id": job.battle_id, "status": "scored", "cis_score": 0.5}, {}, {})
        led.append("unrelated", {"battle_id": "unrelated", "status": "scored", "cis_score": 0.1}, {}, {})
    pending, already = pending_jobs(plan, tmp_path)
    assert already == 4
    assert [j.battle_id for j in pending] == [j.battle_id for j in jobs[4:]]


def test_default_workers_follow_cores_and_memory() -> None:
    gib = 1024**3
    assert default_workers(cpus=2, memory=24 * gib) == 4  # half a CPU per sandbox
    assert default_workers(cpus=64, memory=2 * gib) == 2  # 768 MiB per worker and its sandbox
    assert default_workers(cpus=1, memory=100) == 1  # never zero


def test_the_senior_review_travels_with_the_plan_and_leaves_other_ids_alone(tmp_path: Path) -> None:
    import hashlib

    from ledger.canonical import canonicalize
    from logomesh.campaign.plan import default_campaign_id
    from logomesh.campaign.work import request_for
    from logomesh.scoring.config import LlmConfig

    agents, tasks = parse_agents([], ["good"]), ["fib-recursive"]
    plain = default_campaign_id(agents, tasks, 1, 0, Settings())
    before = {"agents": [{"name": "good", "url": None, "mock_variant": "good"}], "task_ids": tasks, "repeat": 1,
              "seed": 0, "settings": {"sandbox": "auto", "red": True, "red_budget_s": 10.0,
                                      "purple_timeout_s": 300.0, "protocol": None}}
    assert plain == "c-" + hashlib.sha256(canonicalize(before)).hexdigest()[:12]  # the id it had before the review
    llm = LlmConfig(base_url="http://127.0.0.1:8089/v1", model="m", timeout_s=90.0)
    plan = new_plan(agents, tasks, 1, 0, Settings(review_llm=llm))
    assert plan.campaign_id != plain
    save_plan(tmp_path, plan)
    loaded = load_plan(tmp_path, plan.campaign_id)
    assert loaded.settings.review_llm == llm
    assert request_for(loaded.jobs()[0], loaded.settings, tmp_path).review_llm == llm
