"""``logomesh verify report``: a report is checked against the signed ledger entries it rests on, number by number.

The campaign is written as real ledger entries (``Ledger.append``, signed and
Merkle-chained) with constructed results; no battle is played.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from ledger import Ledger
from logomesh.campaign.plan import Agent, CampaignPlan, Settings, save_plan
from logomesh.cli import app

TASKS = tuple(f"task-{i}" for i in range(5))


def _invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    assert "Traceback" not in result.output
    return result.exit_code, result.output


def _result(battle_id: str, task_id: str, cis: float, vulns: list[dict[str, Any]]) -> dict[str, Any]:
    return {"battle_id": battle_id, "task_id": task_id, "status": "scored", "cis_score": cis,
            "rationale_score": cis, "architecture_score": 0.9, "testing_score": 0.8, "logic_score": cis,
            "red_penalty_applied": 0.25 if vulns else 0.0, "intent_penalty": 1.0, "behaviour_penalty": 1.0,
            "seed": 7, "tests": {"hidden": {"passed": 4, "failed": 0, "total": 4}},
            "red_analysis": {"vulnerabilities": vulns}}


def _campaign(home: Path) -> CampaignPlan:
    plan = CampaignPlan(campaign_id="c-verify", agents=(Agent("good", mock_variant="good"),
                                                         Agent("weak", mock_variant="weak")),
                        task_ids=TASKS, repeat=2, seed=5, settings=Settings(red_budget_s=4.0))
    save_plan(home, plan)
    with Ledger.open(home) as led:
        led.append("unrelated:battle", {"battle_id": "unrelated:battle", "cis_score": 0.1, "status": "scored"}, {}, {})
        for job in plan.jobs():
            level = 0.3 + 0.1 * TASKS.index(job.task_id)
            lead = 0.2 + 0.03 * (TASKS.index(job.task_id) % 3) if job.agent.name == "good" else 0.0
            cis = round(level + lead + 0.01 * job.repeat, 4)
            vulns = [{"family": "injection", "severity": "high", "cwe": "CWE-89", "summary": "s",
                      "reproducer": "q=' OR 1=1"}] if job.agent.name == "weak" and job.repeat == 1 else []
            led.append(job.battle_id, _result(job.battle_id, job.task_id, cis, vulns),
                       {"task_spec": f"spec {job.task_id}".encode()},
                       {"campaign_id": plan.campaign_id, "scorer_config_sha256": "ab" * 32, "seed": "7"})
    return plan


def _report(home: Path, fmt: str = "json") -> Path:
    out = home / f"report.{fmt}"
    code, output = _invoke("campaign", "report", "c-verify", "--format", fmt, "--out", str(out), "--home", str(home))
    assert code == 0, output
    return out


@pytest.fixture
def home(tmp_path: Path) -> Path:
    _campaign(tmp_path)
    return tmp_path


def test_a_fresh_report_verifies_and_states_its_provenance(home: Path) -> None:
    path = _report(home)
    body = json.loads(path.read_text())
    provenance = body["provenance"]
    assert provenance["checkpoint"]["tree_size"] == 21  # the unrelated entry + 20 battles
    assert len(provenance["checkpoint"]["root"]) == 64 and provenance["checkpoint"]["note"]
    assert (provenance["red_budget_s"], provenance["campaign_seed"]) == (4.0, 5)
    assert provenance["scoring_config_sha256"] == ["ab" * 32]
    assert sorted(provenance["task_inputs"]) == list(TASKS) and len(provenance["task_library_sha256"]) == 64
    assert [b["sequence"] for b in body["battles"]] == list(range(1, 21))
    assert body["findings"]["list"][0]["reproducer"] == "q=' OR 1=1"
    assert body["leaderboard"][0]["agent"] == "good" and body["comparisons"][0]["verdict"] == "good"
    code, output = _invoke("verify", "report", str(path), "--home", str(home))
    assert code == 0, output
    assert "report OK: campaign c-verify, 20 entries proven under checkpoint 21" in output
    code, output = _invoke("verify", "report", str(_report(home, "html")), "--home", str(home))
    assert code == 0, output


def test_entries_after_the_checkpoint_are_not_in_the_report(home: Path) -> None:
    path = _report(home)
    with Ledger.open(home) as led:
        led.append("later:one", {"battle_id": "later:one", "cis_score": 0.5, "status": "scored"}, {},
                   {"campaign_id": "c-verify"})
    code, output = _invoke("verify", "report", str(path), "--home", str(home))
    assert code == 0, output


@pytest.mark.parametrize(
    ("edit", "needle"),
    [
        (lambda b: b["leaderboard"][0].__setitem__("mean_cis", b["leaderboard"][0]["mean_cis"] + 0.0001),
         "leaderboard[0].mean_cis"),
        (lambda b: b["comparisons"][0]["ci"].__setitem__("low", 0.0), "comparisons[0].ci.low"),
        (lambda b: b["battles"][3].__setitem__("cis", 0.99), "battles[3].cis"),
        (lambda b: b["provenance"].__setitem__("red_budget_s", 60.0), "provenance.red_budget_s"),
        (lambda b: b["battles"].pop(), "battles: the report lists 19 items, the ledger gives 20"),
    ],
)
def test_one_changed_number_in_the_report_exits_3_and_is_named(home: Path, edit: Any, needle: str) -> None:
    path = _report(home)
    body = json.loads(path.read_text())
    edit(body)
    path.write_text(json.dumps(body))
    code, output = _invoke("verify", "report", str(path), "--home", str(home))
    assert code == 3 and needle in output and "report FAILED" in output, output


def _tamper(home: Path, battle_id: str, cis: float) -> None:
    """Edit one recorded entry behind the ledger's back, as someone with file access could."""
    conn = sqlite3.connect(home / "battles.db")
    triggers = conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'").fetchall()
    for name, _ in triggers:
        conn.execute(f"DROP TRIGGER {name}")
    (text,) = conn.execute("SELECT dbom FROM battles WHERE battle_id = ?", (battle_id,)).fetchone()
    dbom = json.loads(text)
    dbom["result"]["cis_score"] = cis
    conn.execute("UPDATE battles SET dbom = ? WHERE battle_id = ?", (json.dumps(dbom), battle_id))
    for _, sql in triggers:
        conn.execute(sql)
    conn.commit()
    conn.close()


def test_one_changed_ledger_entry_exits_3(home: Path) -> None:
    path = _report(home)
    _tamper(home, "task-2:weak:c-verify:r1", 0.9)
    code, output = _invoke("verify", "report", str(path), "--home", str(home))
    assert code == 3, output
    assert "entry 6 (task-2:weak:c-verify:r1): its inclusion proof does not lead to the checkpoint's root" in output
    assert "battles[5].cis: report 0.51, ledger 0.9" in output


def test_a_plan_edited_to_leave_an_agent_out_exits_3(home: Path) -> None:
    plan_file = home / "campaigns" / "c-verify.json"
    body = json.loads(plan_file.read_text())
    body["agents"] = [a for a in body["agents"] if a["name"] != "weak"]
    plan_file.write_text(json.dumps(body))
    path = _report(home)  # a report made on the edited plan agrees with it, but not with the ledger
    code, output = _invoke("verify", "report", str(path), "--home", str(home))
    assert code == 3, output
    assert output.count("that the campaign's plan leaves out") == 10
    assert "entry 2 (task-0:weak:c-verify:r1) is a battle of campaign c-verify" in output


def test_a_report_that_is_not_one_is_refused_in_one_line(home: Path) -> None:
    bad = home / "bad.json"
    bad.write_text("{\"format\": \"other\"}")
    code, output = _invoke("verify", "report", str(bad), "--home", str(home))
    assert code == 1 and "is not a campaign report" in output
    code, output = _invoke("verify", "report", str(home / "missing.json"), "--home", str(home))
    assert code == 1 and "cannot read" in output


def test_a_fresh_html_report_verifies_page_and_json(home: Path) -> None:
    code, output = _invoke("verify", "report", str(_report(home, "html")), "--home", str(home))
    assert code == 0, output
    assert output.splitlines()[0].startswith("report OK: campaign c-verify, 20 entries proven")


def test_a_changed_visible_cell_of_an_html_report_exits_3_naming_it(home: Path) -> None:
    path = _report(home, "html")
    page = path.read_text()
    body = json.loads(page.split('id="logomesh-report">')[1].split("</script>")[0])
    shown = f'{body["leaderboard"][0]["mean_cis"]:.4f}'
    cell = f'<td class="n">{shown}</td>'
    assert page.count(cell) >= 1
    changed = f'<td class="n">{float(shown) + 0.2:.4f}</td>'
    path.write_text(page.replace(cell, changed, 1))  # the embedded JSON is untouched
    code, output = _invoke("verify", "report", str(path), "--home", str(home))
    assert code == 3, output
    lines = output.splitlines()
    assert lines[0].startswith("html line ") and lines[0].endswith(
        f"(Leaderboard): the page shows '{float(shown) + 0.2:.4f}', the ledger gives '{shown}'"), lines[0]
    assert lines[1].startswith("report FAILED (1 problem)")


def test_a_report_without_a_format_says_so(home: Path) -> None:
    bad = home / "bad.json"
    bad.write_text("{}")
    code, output = _invoke("verify", "report", str(bad), "--home", str(home))
    assert code == 1 and "(no format)" in output and "None" not in output, output
