"""Record in ``tests/durations.json`` the seconds per test file of one tier, from a JUnit XML report of its run.

    bash scripts/test.sh --junitxml=/tmp/fast.xml
    .venv/bin/python scripts/record_test_durations.py fast /tmp/fast.xml
    bash scripts/test.sh --full --junitxml=/tmp/full.xml
    .venv/bin/python scripts/record_test_durations.py full /tmp/full.xml

``tests/tiers.py:heaviest_first`` starts the longest files of the tier first; rerun this when a file's length
changes a lot. The other tier's record is kept.
"""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ElementTree
from collections import defaultdict
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "tests" / "durations.json"
TIERS = ("fast", "full")


def file_seconds(report: Path, root: Path = OUT.parents[1]) -> dict[str, float]:
    """Seconds per test file (``tests/...py`` under ``root``), summed over its test cases, setup and teardown
    included; longest first."""
    totals: dict[str, float] = defaultdict(float)
    for case in ElementTree.parse(report).iter("testcase"):
        module = case.get("classname", "")
        path = "tests/" + "/".join(p for p in module.split(".") if p != "tests")
        while path.count("/") > 1 and not (root / f"{path}.py").is_file():
            path = path.rsplit("/", 1)[0]  # a test class's name ends the classname
        totals[f"{path}.py"] += float(case.get("time", "0"))
    return dict(sorted(((f, round(s, 1)) for f, s in totals.items()), key=lambda fs: (-fs[1], fs[0])))


def main() -> None:
    if len(sys.argv) != 3 or sys.argv[1] not in TIERS or not Path(sys.argv[2]).is_file():
        sys.exit("usage: record_test_durations.py fast|full REPORT.xml  (REPORT.xml: a JUnit XML report of that "
                 "tier's run, scripts/test.sh [--full] --junitxml=REPORT.xml)")
    recorded = json.loads(OUT.read_text(encoding="utf-8")) if OUT.is_file() else {}
    recorded[sys.argv[1]] = file_seconds(Path(sys.argv[2]))
    OUT.write_text(json.dumps({t: recorded[t] for t in TIERS if t in recorded}, indent=1) + "\n", encoding="utf-8")
    print(f"wrote the {sys.argv[1]} tier's {len(recorded[sys.argv[1]])} files to {OUT}")


if __name__ == "__main__":
    main()
