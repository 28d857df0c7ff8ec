"""Write ``tests/durations.json``: seconds per test file, from a JUnit XML report of a full-tier run.

    .venv/bin/pytest --tier full -n 2 --dist loadfile --junitxml=/tmp/full.xml
    .venv/bin/python scripts/record_test_durations.py /tmp/full.xml

``tests/tiers.py:heaviest_first`` starts the longest files first; rerun this when a file's length changes a lot.
"""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ElementTree
from collections import defaultdict
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "tests" / "durations.json"


def file_seconds(report: Path) -> dict[str, float]:
    """Seconds per test file (``tests/...py``), summed over its test cases, setup and teardown included."""
    totals: dict[str, float] = defaultdict(float)
    for case in ElementTree.parse(report).iter("testcase"):
        module = case.get("classname", "")
        path = "tests/" + "/".join(p for p in module.split(".") if p != "tests")
        while path.count("/") > 1 and not (OUT.parents[1] / f"{path}.py").is_file():
            path = path.rsplit("/", 1)[0]  # a test class's name ends the classname
        totals[f"{path}.py"] += float(case.get("time", "0"))
    return dict(sorted(((f, round(s, 1)) for f, s in totals.items()), key=lambda fs: (-fs[1], fs[0])))


def main() -> None:
    if len(sys.argv) != 2 or not Path(sys.argv[1]).is_file():
        sys.exit("usage: record_test_durations.py REPORT.xml  (a JUnit XML report: pytest --junitxml=REPORT.xml)")
    OUT.write_text(json.dumps(file_seconds(Path(sys.argv[1])), indent=1) + "\n", encoding="utf-8")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
