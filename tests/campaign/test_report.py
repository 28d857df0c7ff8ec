"""Campaign reports: the scoring policy, reading the ledger, the renderings (statistics: test_report_stats)."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from typing import Any

import pytest

from logomesh.campaign.aggregate import build_report
from logomesh.campaign.html_report import render_html
from logomesh.campaign.model import BattleRow, CampaignReport, RecordedBattle
from logomesh.campaign.plan import Agent, CampaignPlan
from logomesh.campaign.reading import input_digests, parse_result, rows_from_ledger
from logomesh.campaign.report_json import report_json
from logomesh.campaign.report_text import render_table

TASKS = ("t-alpha", "t-beta")


def _plan(agents: tuple[str, ...] = ("good", "flawed"), repeat: int = 3) -> CampaignPlan:
    return CampaignPlan(
        campaign_id="c-test",
        agents=tuple(Agent(name=name, mock_variant=name) for name in agents),
        task_ids=TASKS,
        repeat=repeat,
        seed=7,
    )


def _vuln(family: str, severity: str) -> dict[str, Any]:
    return {"family": family, "severity": severity, "cwe": "CWE-20", "summary": "s", "reproducer": "r",
            "confirmations": 1, "attempts": 1}


def _scored(cis: float, passed: int = 4, total: int = 4, vulns: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    found = vulns or []
    return {
        "rationale_score": cis, "architecture_score": cis, "testing_score": cis, "logic_score": cis,
        "cis_score": cis, "red_penalty_applied": 0.0, "intent_penalty": 1.0,
        "red_analysis": {"attack_successful": bool(found), "vulnerability_count": len(found),
                         "max_severity": "low", "vulnerabilities": found},
        "tests": {"hidden": {"passed": passed, "failed": total - passed, "total": total},
                  "purple": {"passed": 0, "failed": 0, "total": 0}},
        "status": "scored",
    }


def _failed(stage: str, reason: str) -> dict[str, Any]:
    body = _scored(0.0, 0, 0)
    body.update(status="failed", failed_stage=stage, reason=reason)
    return body


def _rows(plan: CampaignPlan, results: dict[tuple[str, str, int], dict[str, Any]],
          attempts: dict[tuple[str, str, int], int] | None = None) -> list[BattleRow]:
    """BattleRows for the jobs named in ``results`` (keyed by agent, task, repeat)."""
    rows = []
    for job in plan.jobs():
        key = (job.agent.name, job.task_id, job.repeat)
        if key in results:
            result = dict(results[key], battle_id=job.battle_id, task_id=job.task_id)
            rows.append(BattleRow(job.battle_id, job.agent.name, job.task_id, job.repeat, parse_result(result, {}),
                                  (attempts or {}).get(key, 1)))
    return rows


def _full(plan: CampaignPlan, cis: dict[str, list[float]]) -> dict[tuple[str, str, int], dict[str, Any]]:
    """Every battle of the plan scored: agent -> CIS per repeat, the same on every task."""
    return {(a.name, t, r): _scored(cis[a.name][r - 1]) for a in plan.agents for t in plan.task_ids
            for r in range(1, plan.repeat + 1)}


def _cell(report: CampaignReport, agent: str, task: str) -> Any:
    return next(c for c in report.cells if c.agent == agent and c.task_id == task)


# ---------------------------------------------------------------- intervals


def test_cells_show_the_range_of_their_repeats_and_no_interval() -> None:
    plan = _plan(repeat=3)
    results = _full(plan, {"good": [0.95, 1.0, 0.2], "flawed": [0.3, 0.9, 0.1]})
    results[("flawed", "t-beta", 3)] = _failed("sandbox", "broke")  # two counted battles left
    report = build_report(plan, _rows(plan, results))
    wide = _cell(report, "good", "t-alpha")
    assert wide.counted == 3 and (wide.cis_min, wide.cis_max) == (0.2, 1.0)
    two = _cell(report, "flawed", "t-beta")
    assert two.counted == 2 and two.mean_cis == pytest.approx(0.6) and (two.cis_min, two.cis_max) == (0.3, 0.9)
    body = report_json(report)
    flawed_beta = next(c for c in body["cells"] if (c["agent"], c["task_id"]) == ("flawed", "t-beta"))
    assert (flawed_beta["cis_min"], flawed_beta["cis_max"]) == (0.3, 0.9)
    assert "0.300–0.900" in render_table(report)


def test_leaderboard_interval_is_refused_with_its_reason_below_two_tasks() -> None:
    plan = CampaignPlan(campaign_id="c-test", agents=(Agent(name="solo", mock_variant="solo"),),
                        task_ids=("t-alpha",), repeat=3, seed=7)
    report = build_report(plan, _rows(plan, {("solo", "t-alpha", r): _scored(0.2 * r) for r in (1, 2, 3)}))
    (row,) = report.leaderboard
    assert (row.mean_cis, row.ci_low, row.ci_high) == (pytest.approx(0.4), None, None)
    assert report_json(report)["leaderboard"][0]["ci"] == {"low": None, "high": None, "n": 1,
                                                           "reason": row.interval.reason}
    assert "n/a" in render_table(report) and "n/a" in render_html(report)
    assert "1 task" in render_html(report)


def _cancelled(stage: str) -> dict[str, Any]:
    """A cancelled battle as the engine records it: status ``cancelled`` and the ``stage`` it was stopped in."""
    body = _scored(0.0, 0, 0)
    body.update(status="cancelled", stage=stage, reason="cancelled by the user")
    return body


def test_cancelled_battles_are_counted_apart_from_agent_and_infrastructure_failures() -> None:
    plan = _plan()
    results = _full(plan, {"good": [0.9, 0.6, 0.6], "flawed": [0.3, 0.3, 0.3]})
    results[("good", "t-alpha", 3)] = _cancelled("red")
    results[("good", "t-beta", 2)] = _cancelled("purple")  # stopped while the agent worked: not its failure
    results[("flawed", "t-alpha", 1)] = _failed("purple", "timed out")
    report = build_report(plan, _rows(plan, results))

    cell = _cell(report, "good", "t-alpha")
    assert (cell.counted, cell.scored, cell.agent_failed, cell.infra_failed, cell.cancelled) == (2, 2, 0, 0, 1)
    assert cell.mean_cis == pytest.approx(0.75)  # the cancelled battle neither counts as 0 nor as a score
    assert cell.scored_share == pytest.approx(2 / 3)
    assert (report.agent_failures, report.infra_failures, report.cancelled) == (1, 0, 2)
    assert [(g.kind, g.stage) for g in report.failures] == [("agent", "purple")]
    assert [(g.stage, g.count) for g in report.cancellations] == [("purple", 1), ("red", 1)]
    board = {r.agent: r for r in report.leaderboard}
    assert (board["good"].battles, board["good"].scored, board["good"].failed, board["good"].cancelled) == (6, 4, 0, 2)
    assert board["good"].mean_cis == pytest.approx((0.9 + 0.6 + 0.9 + 0.6) / 4)
    assert (board["flawed"].failed, board["flawed"].cancelled) == (1, 0)

    body = report_json(report)
    assert body["cancelled"]["count"] == 2 and body["failures"]["agent"] == 1
    assert next(b for b in body["battles"] if b["outcome"] == "cancelled")["cis"] is None
    text = render_table(report)
    assert "Cancelled: 2" in text and "in stage red" in text
    assert "cancelled." in render_html(report)


# ---------------------------------------------------------------- reading the ledger


def test_rows_from_ledger_maps_jobs_ignores_strangers_and_reads_attempts() -> None:
    plan = _plan()
    jobs = plan.jobs()
    digest = {"solution.py": "ab" * 32}
    raw = [
        RecordedBattle(9, jobs[3].battle_id, parse_result(_scored(0.5), None), {"attempts": "2", "seed": "7"}, digest),
        RecordedBattle(3, "other:agent:c-else:r1", parse_result(_scored(0.9), None), {}, {}),
        RecordedBattle(4, jobs[0].battle_id, parse_result(_scored(0.1), None), {"attempts": "junk"}, {}),
        RecordedBattle(5, jobs[0].battle_id, parse_result(_scored(0.7), None), {}, {}),  # again: the first wins
        RecordedBattle(6, jobs[1].battle_id, None, {}, {}),  # the signed result is no battle result
    ]
    rows = rows_from_ledger(plan, raw)
    assert [r.battle_id for r in rows] == [jobs[0].battle_id, jobs[1].battle_id, jobs[3].battle_id]
    assert [(r.agent, r.task_id, r.repeat) for r in rows] == [
        (jobs[i].agent.name, jobs[i].task_id, jobs[i].repeat) for i in (0, 1, 3)]
    assert [r.attempts for r in rows] == [1, 1, 2]
    assert rows[0].result is not None and rows[0].result.cis_score == 0.1
    assert rows[1].result is None
    assert rows[2].result is not None and rows[2].result.cis_score == 0.5
    assert [r.sequence for r in rows] == [4, 6, 9]
    assert rows[2].attributes == {"attempts": "2", "seed": "7"} and rows[2].input_digests == {"solution.py": "ab" * 32}


def test_input_digests_are_read_from_the_signed_inputs_block_and_malformed_entries_left_out() -> None:
    block = {"solution.py": {"sha256": "ab" * 32, "bytes": 10}, "broken": "not an input record",
             "undigested": {"bytes": 3}, "numeric": {"sha256": 7}}
    assert input_digests(block) == {"solution.py": "ab" * 32}
    assert input_digests(["not", "a", "block"]) == {} and input_digests(None) == {}


# ---------------------------------------------------------------- policy and aggregation


def test_leaderboard_orders_by_mean_and_name_and_two_tasks_cannot_separate_anyone() -> None:
    plan = _plan(agents=("zed", "bob", "amy"))
    report = build_report(plan, _rows(plan, _full(plan, {
        "zed": [0.4, 0.5, 0.6], "bob": [0.9, 0.8, 0.7], "amy": [0.6, 0.5, 0.4],
    })))
    # two shared tasks are too few for a paired bootstrap: every comparison is refused, so all tie at rank 1
    assert [(r.rank, r.tied, r.agent) for r in report.leaderboard] == [(1, True, "bob"), (1, True, "amy"),
                                                                       (1, True, "zed")]
    assert all(c.verdict == "tie" and "2 shared tasks" in (c.interval.reason or "") for c in report.comparisons)
    top = report.leaderboard[0]
    assert top.mean_cis == pytest.approx(0.8)
    assert (top.battles, top.scored, top.failed, top.tasks) == (6, 6, 0, 2)
    assert (top.ci_low, top.ci_high) == (None, None)  # both tasks have mean 0.8: no spread between tasks


def test_purple_failure_counts_as_zero_and_infrastructure_failure_is_excluded() -> None:
    plan = _plan()
    results = _full(plan, {"good": [0.9, 0.6, 0.6], "flawed": [0.9, 0.6, 0.6]})
    results[("good", "t-alpha", 3)] = _failed("purple", "purple agent http://x: timed out")
    results[("flawed", "t-alpha", 3)] = _failed("sandbox", "the sandbox broke: OOM")
    report = build_report(plan, _rows(plan, results))

    purple_cell = _cell(report, "good", "t-alpha")
    assert (purple_cell.counted, purple_cell.agent_failed, purple_cell.infra_failed) == (3, 1, 0)
    assert purple_cell.mean_cis == pytest.approx(0.5)
    infra_cell = _cell(report, "flawed", "t-alpha")
    assert (infra_cell.counted, infra_cell.agent_failed, infra_cell.infra_failed) == (2, 0, 1)
    assert infra_cell.mean_cis == pytest.approx(0.75)

    board = {r.agent: r for r in report.leaderboard}
    assert board["good"].mean_cis == pytest.approx((0.9 + 0.6 + 0.0 + 0.9 + 0.6 + 0.6) / 6)
    assert board["flawed"].mean_cis == pytest.approx(((0.9 + 0.6) / 2 + (0.9 + 0.6 + 0.6) / 3) / 2)
    assert (board["flawed"].battles, board["flawed"].scored, board["flawed"].failed) == (6, 5, 1)
    assert [r.agent for r in report.leaderboard] == ["flawed", "good"]
    assert (report.agent_failures, report.infra_failures) == (1, 1)


def test_result_without_numeric_cis_is_an_infrastructure_failure() -> None:
    plan = _plan()
    broken = _scored(0.5)
    broken["cis_score"] = "NaN"
    report = build_report(plan, _rows(plan, {("good", "t-alpha", 1): broken, ("good", "t-alpha", 2): _scored(0.3)}))
    cell = _cell(report, "good", "t-alpha")
    assert (cell.counted, cell.infra_failed, cell.mean_cis) == (1, 1, 0.3)
    assert report.failures[0].stage == "report"


def test_agent_with_only_infrastructure_failures_is_unranked() -> None:
    plan = _plan()
    results = {("good", "t-alpha", 1): _scored(0.5), ("flawed", "t-alpha", 1): _failed("engine", "worker lost")}
    report = build_report(plan, _rows(plan, results))
    assert [r.agent for r in report.leaderboard] == ["good"]
    assert report.unranked == ["flawed"]
    assert _cell(report, "flawed", "t-alpha").mean_cis is None


def test_pass_rate_sums_hidden_tests_over_scored_battles() -> None:
    plan = _plan()
    results = {
        ("good", "t-beta", 1): _scored(0.8, passed=3, total=4),
        ("good", "t-beta", 2): _scored(0.8, passed=5, total=6),
        ("good", "t-beta", 3): _failed("purple", "no answer"),
    }
    cell = _cell(build_report(plan, _rows(plan, results)), "good", "t-beta")
    assert (cell.hidden_passed, cell.hidden_total) == (8, 10)
    assert cell.pass_rate == pytest.approx(0.8)
    assert cell.scored_share == pytest.approx(2 / 3)
    assert _cell(build_report(plan, _rows(plan, results)), "flawed", "t-beta").pass_rate is None


def test_findings_are_counted_by_family_and_severity() -> None:
    plan = _plan()
    results = {
        ("good", "t-alpha", 1): _scored(0.7, vulns=[_vuln("injection", "high"), _vuln("injection", "critical")]),
        ("flawed", "t-alpha", 1): _scored(0.2, vulns=[_vuln("injection", "high"), _vuln("dos", "low")]),
        ("flawed", "t-beta", 1): _scored(0.2, vulns=[_vuln("path", "medium")]),
    }
    report = build_report(plan, _rows(plan, results))
    assert report.findings_total == 5
    assert report.findings_by_severity == {"critical": 1, "high": 2, "medium": 1, "low": 1}
    assert [(f.family, f.total, f.by_severity) for f in report.findings_by_family] == [
        ("injection", 3, {"critical": 1, "high": 2}),
        ("dos", 1, {"low": 1}),
        ("path", 1, {"medium": 1}),
    ]
    assert _cell(report, "flawed", "t-alpha").findings == 2


def test_a_finding_whose_severity_is_none_of_the_four_is_listed_as_unknown_after_them() -> None:
    plan = _plan()
    bare = {"cwe": "CWE-89", "summary": "s", "reproducer": "r"}  # a hand-made or damaged entry: no family, no severity
    results = {("good", "t-alpha", 1): _scored(0.7, vulns=[_vuln("dos", "low"), bare, {**bare, "severity": 3},
                                                           {**bare, "family": "injection", "severity": "severe"}])}
    report = build_report(plan, _rows(plan, results))
    assert [f.finding.severity for f in report.findings] == ["low", None, None, None]
    assert report.findings_by_severity == {"critical": 0, "high": 0, "medium": 0, "low": 1, "unknown": 3}
    assert [(f.family, f.total, f.by_severity) for f in report.findings_by_family] == [
        ("unknown", 2, {"unknown": 2}), ("dos", 1, {"low": 1}), ("injection", 1, {"unknown": 1})]
    listed = report_json(report)["findings"]["list"]
    assert [(f["family"], f["severity"], f["cwe"]) for f in listed] == [
        ("dos", "low", "CWE-20"), ("unknown", "unknown", "CWE-89"), ("unknown", "unknown", "CWE-89"),
        ("injection", "unknown", "CWE-89")]
    assert "Findings: 4 (low 1, unknown 3)" in render_table(report)


def test_failure_reasons_are_grouped_by_stage_and_reason() -> None:
    plan = _plan()
    results = {
        ("good", "t-alpha", 1): _failed("sandbox", "image missing"),
        ("good", "t-alpha", 2): _failed("sandbox", "image missing"),
        ("flawed", "t-alpha", 1): _failed("engine", "image missing"),
        ("flawed", "t-beta", 1): _failed("purple", "refused"),
    }
    report = build_report(plan, _rows(plan, results))
    assert [(g.kind, g.stage, g.reason, g.count) for g in report.failures] == [
        ("agent", "purple", "refused", 1),
        ("infrastructure", "sandbox", "image missing", 2),
        ("infrastructure", "engine", "image missing", 1),
    ]
    assert len(report.failures[1].battle_ids) == 2


def test_missing_battles_and_retries_are_reported() -> None:
    plan = _plan()
    results = _full(plan, {"good": [0.5] * 3, "flawed": [0.5] * 3})
    del results[("good", "t-beta", 3)]
    del results[("flawed", "t-alpha", 2)]
    report = build_report(plan, _rows(plan, results, attempts={("good", "t-alpha", 1): 3}))
    jobs = {(j.agent.name, j.task_id, j.repeat): j.battle_id for j in plan.jobs()}
    assert (report.planned, report.recorded) == (12, 10)
    assert sorted(report.missing) == sorted([jobs[("good", "t-beta", 3)], jobs[("flawed", "t-alpha", 2)]])
    assert [(r.battle_id, r.attempts) for r in report.retries] == [(jobs[("good", "t-alpha", 1)], 3)]
    text = render_table(report)
    assert "Missing: 2 of 12" in text
    assert jobs[("good", "t-beta", 3)] in text
    assert "Retried: 1" in text


# ---------------------------------------------------------------- renderings


def _mixed_report(reason: str = "purple agent: <script>alert(1)</script> & \x1b[31mred") -> CampaignReport:
    plan = _plan()
    results = _full(plan, {"good": [0.9, 0.8, 0.85], "flawed": [0.3, 0.1, 0.2]})
    results[("flawed", "t-beta", 2)] = _failed("purple", reason)
    results[("good", "t-beta", 1)] = _scored(0.7, vulns=[_vuln("<b>family</b>", "high")])
    return build_report(plan, _rows(plan, results))


def test_report_json_is_deterministic_rounded_and_json_safe() -> None:
    plan = _plan()
    results = _full(plan, {"good": [1 / 3, 2 / 3, 0.5], "flawed": [0.1, 0.2, 0.3]})
    rows = _rows(plan, results)
    first = json.dumps(report_json(build_report(plan, rows)), allow_nan=False)
    second = json.dumps(report_json(build_report(plan, list(reversed(rows)))), allow_nan=False)
    assert first == second
    body = json.loads(first)
    assert body["leaderboard"][0]["agent"] == "good"
    assert body["leaderboard"][0]["mean_cis"] == 0.5
    assert body["format"] == "logomesh-campaign-report/2"
    assert body["battles"][0]["cis"] == 0.3333
    assert body["cells"][0]["pass_rate"] == 1.0
    assert body["missing"] == {"count": 0, "battle_ids": []}


def test_render_table_is_plain_readable_and_neutralises_control_characters() -> None:
    text = render_table(_mixed_report())
    assert "\x1b" not in text
    assert "\\x1b[31mred" in text
    assert "Leaderboard" in text and "good" in text and "flawed" in text
    body = [line for line in text.splitlines() if "purple agent:" not in line]
    assert max(len(line) for line in body) <= 105


def test_html_escapes_untrusted_text_and_draws_svg() -> None:
    report = _mixed_report()
    page = render_html(report)
    # one script element: the inert JSON data block, which holds the report exactly and no raw '<'
    assert page.count("<script") == 1 and page.count("</script>") == 1
    block = re.search(r'<script type="application/json" id="logomesh-report">(.*?)</script>', page, re.S)
    assert block is not None and "<" not in block.group(1)
    assert json.loads(block.group(1)) == json.loads(json.dumps(report_json(report)))
    page = page.replace(block.group(0), "")
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp;" in page
    assert "<b>family</b>" not in page and "&lt;b&gt;family&lt;/b&gt;" in page
    svgs = re.findall(r"<svg.*?</svg>", page, re.S)
    assert len(svgs) == 3  # per task, per agent, findings per family
    for svg in svgs:  # well-formed: every data string inside was escaped
        ET.fromstring(svg)
    assert not re.search(r"(src|href)\s*=", page)
    # per agent, one dot per counted battle: 12 battles, all counted (one purple failure drawn at 0)
    assert page.count('r="4"') == 12
    # per task: each repeat hollow (12) and each (agent, task) mean filled (4)
    assert page.count('r="3"') == 12 and page.count('<circle cx="') - page.count('r="4"') - 12 == 4 + 2
    assert render_html(report) == render_html(_mixed_report())


def test_a_campaign_with_nothing_recorded_still_renders() -> None:
    plan = _plan()
    report = build_report(plan, [])
    assert (report.recorded, len(report.missing), report.leaderboard) == (0, 12, [])
    assert report.unranked == ["good", "flawed"]
    assert "no agent has a counted battle" in render_table(report)
    assert report_json(report)["cells"][0]["mean_cis"] is None
    assert "<svg" in render_html(report)


def test_a_row_that_holds_no_battle_result_is_an_infrastructure_failure() -> None:
    plan = _plan()
    no_status = {k: v for k, v in _scored(0.5).items() if k != "status"}
    report = build_report(plan, _rows(plan, {("good", "t-alpha", 1): no_status, ("good", "t-alpha", 2): _scored(0.3)}))
    cell = _cell(report, "good", "t-alpha")
    assert (cell.counted, cell.infra_failed, cell.mean_cis) == (1, 1, 0.3)
    assert (report.failures[0].stage, report.failures[0].reason) == (
        "report", "the recorded result is no battle result (it has no status scored, failed or cancelled)")
