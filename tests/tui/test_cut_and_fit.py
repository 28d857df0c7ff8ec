"""What narrow columns and panels show: distinct ids stay distinct, a component's facts and a node's figures whole."""

from __future__ import annotations

from tui.widgets.battle.score_panel import component_line
from tui.widgets.ledger.entries_table import CELL_PADDING, CHROME, TIGHT, column_widths
from tui.widgets.text_cut import distinct_cuts, middle_cut


def test_ids_cut_to_a_column_stay_distinct_and_ids_that_fit_stay_whole() -> None:
    ids = ["task-b:no-lock:c-7721ccb6657a:r1", "task-b:no-lock:c-7721ccb6657a:r2", "task-a:no-lock:c-7721ccb6657a:r1",
           "task-a:good:c-7721ccb6657a:r1", "bank-ledger-a43741709eb7", "bank-ledger-a43741709eb7-2", "short"]
    shown = distinct_cuts(ids, 12)
    assert len(set(shown.values())) == len(ids)  # cut at the end, the first four would look alike in pairs
    assert all(len(text) <= 12 for text in shown.values())
    assert shown["short"] == "short"
    assert middle_cut("variant:infinite-deposit", 12, 4) == "variant…osit"


def test_a_component_keeps_its_facts_whole_in_the_80_column_panel() -> None:
    details = {"cosine": 0.5833, "windows": 1}
    narrow = component_line("R", "rationale", 0.583, details, 42).plain
    assert narrow.endswith("cosine=0.58 windows=1") and len(narrow) <= 42 and "rationale" not in narrow
    wide = component_line("R", "rationale", 0.583, details, 68).plain
    assert wide.startswith("R rationale") and wide.endswith("cosine=0.58 windows=1")
    longer = component_line("T", "testing", 0.75, {"hidden_passed": 1, "hidden_total": 2}, 42).plain
    assert longer == "T  0.750 hidden_passed=1 hidden_total=2"  # the bar gave way, the value stayed


def test_each_kind_of_component_fact_is_shown_by_its_size_or_figure() -> None:
    records = {"violations": [{"kind": "banned_import", "constraint": "os", "line": 3, "detail": "import os"}] * 2}
    assert component_line("A", "architecture", 0.5, records, 68).plain.endswith(" 0.500 violations=2")
    parts = {"parts": {"probes": 0.5, "complexity": 1.0, "invalid_input": 0.25}}
    assert component_line("L", "logic", 0.6, parts, 68).plain.endswith(" 0.600 parts=3")
    assert component_line("T", "testing", 0.75, {"hidden_pass_rate": 0.75}, 68).plain.endswith(
        " 0.750 hidden_pass_rate=0.75")


def test_a_cancelled_row_leaves_the_time_column_whole_at_80_columns() -> None:
    natural = {"mark": 1, "sequence": 3, "battle_id": 26, "cis": 5, "status": len("cancelled"), "check": 5,
               "task_id": 11, "purple": 12, "timestamp": len("11-26 03:08")}
    available = 80 - 2 - CHROME  # the table's borders and its scrollbar
    assert sum(column_widths(natural, available).values()) + CELL_PADDING * len(natural) > available  # the usual floors
    widths = column_widths(natural, available, TIGHT)
    assert sum(widths.values()) + CELL_PADDING * len(widths) <= available
    assert widths["timestamp"] == natural["timestamp"] and widths["status"] == natural["status"]
