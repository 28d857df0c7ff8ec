"""The HTML report as a reviewer sees it: headless Chromium at 1280 px, over a campaign in a real signed ledger.

Skips without Chromium on a developer machine; fails under CI (``CI=true`` or
``LOGOMESH_REQUIRE_DOCKER=1``), where ``.ci/run`` installs it, so CI cannot
skip it silently. The layout is measured by a probe script added to a copy of
the page (the report itself runs no script); the screenshot is written next to
it (and to ``$LOGOMESH_SCREENSHOT_DIR`` when set, to look at).
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import struct
import subprocess
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from ledger import Ledger
from logomesh.campaign.plan import Agent, CampaignPlan, Settings, save_plan
from logomesh.cli import app

WIDTH = 1280
TASKS = ("rate-limiter", "bank-ledger", "lru-cache", "merkle-root", "safe-calculator", "email-validator")
_PROBE = """<script>
const r = {scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth, sections: {}};
for (const h of document.querySelectorAll('h2')) {
  const b = h.parentElement.getBoundingClientRect();
  r.sections[h.textContent.trim()] = {left: b.left, top: b.top, width: b.width, height: b.height};
}
r.leaderboardWidth = document.querySelector('table').getBoundingClientRect().width;
r.clipped = [...document.querySelectorAll('.scroll')].filter(d => d.scrollWidth > d.clientWidth)
  .map(d => d.closest('section').querySelector('h2').textContent);
r.rows = {};
for (const s of document.querySelectorAll('section')) {
  const h = s.querySelector('h2');
  if (h) r.rows[h.textContent.trim()] = s.querySelectorAll('tbody tr').length;
}
r.wrapped = [];
for (const td of document.querySelectorAll('td.id, th')) {
  const walk = document.createTreeWalker(td, NodeFilter.SHOW_TEXT);
  for (let node = walk.nextNode(); node; node = walk.nextNode()) {
    const range = document.createRange();
    range.selectNodeContents(node);
    if (range.getClientRects().length > 1) r.wrapped.push(node.textContent);
  }
}
document.body.setAttribute('data-probe', JSON.stringify(r));
</script>"""


def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if found is None:
        if os.environ.get("CI") == "true" or os.environ.get("LOGOMESH_REQUIRE_DOCKER") == "1":
            pytest.fail("CI needs Chromium for the report screenshot: apt-get install chromium", pytrace=False)
        pytest.skip("Chromium is not installed (apt-get install chromium)")
    return found


def _result(job_id: str, task: str, cis: float, failed: bool, vulns: list[dict[str, Any]]) -> dict[str, Any]:
    if failed:
        return {"battle_id": job_id, "task_id": task, "status": "failed", "failed_stage": "purple", "cis_score": 0.0,
                "reason": "purple agent timed out after 120 s", "seed": 3}
    return {"battle_id": job_id, "task_id": task, "status": "scored", "cis_score": cis, "rationale_score": 0.82,
            "architecture_score": 0.9, "testing_score": round(cis, 2), "logic_score": 0.77,
            "red_penalty_applied": 0.25 if vulns else 0.0, "intent_penalty": 1.0, "behaviour_penalty": 1.0, "seed": 3,
            "tests": {"hidden": {"passed": 6 if cis > 0.5 else 4, "failed": 0 if cis > 0.5 else 2, "total": 6}},
            "red_analysis": {"vulnerabilities": vulns}}


def _campaign(home: Path, tasks: tuple[str, ...] = TASKS) -> CampaignPlan:
    plan = CampaignPlan(campaign_id="c-screenshot", agents=(Agent("careful", url="http://127.0.0.1:9101"),
                                                             Agent("hasty", url="http://127.0.0.1:9102"),
                                                             Agent("baseline", mock_variant="good")),
                        task_ids=tasks, repeat=2, seed=42, settings=Settings(red_budget_s=10.0))
    save_plan(home, plan)
    lead = {"careful": 0.22, "hasty": 0.0, "baseline": 0.2}
    with Ledger.open(home) as led:
        for job in plan.jobs():
            t = TASKS.index(job.task_id)
            wobble = 0.015 * ((t * 7 + job.repeat * 3 + len(job.agent.name)) % 5)
            cis = round(0.3 + 0.08 * t + lead[job.agent.name] + wobble, 4)
            vulns = [{"family": "injection", "severity": "high", "cwe": "CWE-89", "summary": "unsanitised query",
                      "reproducer": "lookup(\"' OR 1=1 --\")"}] if job.agent.name == "hasty" and t % 2 == 0 else []
            failed = job.agent.name == "hasty" and (t, job.repeat) == (3, 2)
            led.append(job.battle_id, _result(job.battle_id, job.task_id, cis, failed, vulns),
                       {"task_spec": f"spec {job.task_id}".encode()},
                       {"campaign_id": plan.campaign_id, "scorer_config_sha256": "5e" * 32})
    return plan


def _run(chromium: str, profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars",
               "--disable-dev-shm-usage", "--disable-background-networking", f"--user-data-dir={profile}", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=180, check=False)


def _page(tmp_path: Path, tasks: tuple[str, ...]) -> Path:
    home = tmp_path / "home"
    _campaign(home, tasks)
    page = tmp_path / "report.html"
    result = CliRunner().invoke(app, ["campaign", "report", "c-screenshot", "--format", "html", "--out", str(page),
                                      "--home", str(home)])
    assert result.exit_code == 0, result.output
    return page


def _probe(chromium: str, tmp_path: Path, page: Path) -> dict[str, Any]:
    """The layout as Chromium lays out a copy of ``page`` with the probe script added."""
    probed = tmp_path / "probed.html"
    probed.write_text(page.read_text(encoding="utf-8").replace("</body>", _PROBE + "</body>"), encoding="utf-8")
    dom = _run(chromium, tmp_path / "profile", f"--window-size={WIDTH},900", "--virtual-time-budget=3000",
               "--dump-dom", probed.as_uri())
    found = re.search(r'data-probe="([^"]*)"', dom.stdout)
    assert found is not None, dom.stderr[-2000:]
    probe: dict[str, Any] = json.loads(html.unescape(found.group(1)))
    return probe


def test_refused_intervals_and_their_reasons_fit_at_1280_px(tmp_path: Path) -> None:
    chromium = _chromium()
    page = _page(tmp_path, TASKS[:2])  # two tasks: every comparison refused, with its reason in the cell
    assert page.read_text(encoding="utf-8").count("<span class=\"why\">2 shared tasks: a paired bootstrap") == 3
    probe = _probe(chromium, tmp_path, page)
    assert probe["scrollWidth"] <= WIDTH and probe["clipped"] == [] and probe["wrapped"] == []


def test_the_html_report_reads_well_at_1280_px(tmp_path: Path) -> None:
    chromium = _chromium()
    page = _page(tmp_path, TASKS)
    text = page.read_text(encoding="utf-8")
    probe = _probe(chromium, tmp_path, page)
    sections = probe["sections"]

    assert probe["innerWidth"] == WIDTH and probe["scrollWidth"] <= WIDTH  # nothing sticks out sideways
    assert probe["clipped"] == []  # and no table needs its own scroll bar at 1280 px
    assert probe["leaderboardWidth"] > 0.85 * WIDTH  # the leaderboard uses the window, not a 760 px column
    for name in ("Leaderboard", "Paired comparisons", "Provenance", "CIS per task", "CIS per agent",
                 "Per task and agent", "Battles", "Findings"):
        assert sections[name]["height"] > 40, name
    # two columns at 1280 px: provenance beside the per-agent plot, the per-task plot beside findings per family
    assert sections["Provenance"]["top"] == sections["CIS per agent"]["top"]
    assert sections["Provenance"]["left"] < sections["CIS per agent"]["left"]
    assert sections["CIS per task"]["top"] == sections["Findings per family"]["top"]
    assert sections["Paired comparisons"]["width"] > 0.9 * WIDTH
    assert probe["wrapped"] == []  # "rate-limiter", battle ids and headings stay on one line
    assert probe["rows"]["Leaderboard"] == 3 and probe["rows"]["Paired comparisons"] == 3
    assert probe["rows"]["Battles"] == 36 and probe["rows"]["Findings"] == 6
    assert "careful better" in text and "tree size 36" in text and "5e5e5e5e" in text

    shot = tmp_path / "report.png"
    keep = os.environ.get("LOGOMESH_SCREENSHOT_DIR")
    _run(chromium, tmp_path / "profile", f"--window-size={WIDTH},3200", f"--screenshot={shot}", page.as_uri())
    png = shot.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", png[16:24])
    assert (width, height) == (WIDTH, 3200)
    if keep:
        shutil.copy(shot, Path(keep) / "campaign-report-1280.png")
