"""Canonical JSON speed: ``ledger.canonical.canonicalize`` beside the ``rfc8785`` package, in one run.

Usage: python benchmarks/canonical_bench.py [--rounds N] [--baseline DIR] [--json]

Each workload is canonicalized by every implementation in turn, --rounds times, and the best round
is kept (on a shared machine noise only slows a run). With --baseline DIR, the ``ledger/canonical.py``
of another checkout (say ``git worktree add /tmp/old HEAD~1``) is loaded beside this one, so a change
is measured against what it replaces in the same process and the same minutes.

Workloads:
  result       a battle result as the ledger stores it (scores, counts, nested objects)
  entry        a signed DBOM document read back from its leaf (what verify canonicalizes per entry)
  floats       1,000 finite doubles with uniform bit patterns (most need the reference's exponent form)
  integral     1,000 whole floats in [2^53, 1e16), the range the fast path once wrote as ``….0``
Figures are microseconds per value; ratio_* is this checkout's time over the other's (below 1: faster).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import struct
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import rfc8785  # noqa: E402

from ledger.canonical import canonicalize, parse  # noqa: E402
from ledger.dbom import build_entry, sign_encoded  # noqa: E402
from ledger.keys import SignerKey  # noqa: E402

SEED = 8785
Canonicalizer = Callable[[Any], bytes]


def _result(i: int) -> dict[str, Any]:
    rng = random.Random(SEED + i)
    return {
        "battle_id": f"bench-{i}", "task_id": "rate-limiter", "cis_score": round(rng.random(), 4),
        "rationale_score": round(rng.random(), 4), "testing_score": rng.random(), "red_penalty_applied": 0.0,
        "tests": {"hidden": {"passed": 9, "failed": 1, "total": 10}, "purple": {"passed": 3, "failed": 0}},
        "red_analysis": {"attack_successful": False, "vulnerabilities": [{"severity": "low", "line": i}]},
        "status": "scored", "seed": i,
    }


def _entry(i: int) -> dict[str, Any]:
    entry = build_entry(sequence=i, battle_id=f"bench-{i}", timestamp="2026-01-02T03:04:05.000000Z",
                        result=_result(i), inputs={"task_spec": b"x" * 100, "purple_response": b"y" * 900},
                        attributes={"sandbox_image": "sha256:" + "ab" * 32, "purple_agent": "mock:good"},
                        intent_vector=[random.Random(i).uniform(-1, 1) for _ in range(384)])
    return dict(parse(sign_encoded(entry, SignerKey("bench", bytes(32))).leaf_data))


def _finite(rng: random.Random) -> float:
    while True:
        bits = rng.getrandbits(64)
        if bits & 0x7FF0_0000_0000_0000 != 0x7FF0_0000_0000_0000:
            return float(struct.unpack("<d", bits.to_bytes(8, "little"))[0])


def workloads() -> dict[str, list[Any]]:
    rng = random.Random(SEED)
    return {
        "result": [_result(i) for i in range(200)],
        "entry": [_entry(i) for i in range(50)],
        "floats": [_finite(rng) for _ in range(1000)],
        "integral": [float(rng.randint(2**53, 10**16)) for _ in range(1000)],
    }


def load_baseline(directory: Path) -> ModuleType:
    """``ledger/canonical.py`` of another checkout, as a module of its own name."""
    path = directory / "ledger" / "canonical.py"
    if not path.is_file():
        raise SystemExit(f"--baseline {directory}: no ledger/canonical.py there (pass a checkout of this repository)")
    spec = importlib.util.spec_from_file_location("baseline_canonical", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def best_us(fn: Canonicalizer, values: list[Any], rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        started = time.perf_counter()
        for value in values:
            fn(value)
        best = min(best, time.perf_counter() - started)
    return best / len(values) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--baseline", type=Path, default=None)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    impls: dict[str, Canonicalizer] = {"this": canonicalize, "rfc8785": rfc8785.dumps}
    if args.baseline is not None:
        impls["baseline"] = load_baseline(args.baseline).canonicalize
    figures: dict[str, Any] = {}
    for name, values in workloads().items():
        times = {impl: best_us(fn, values, args.rounds) for impl, fn in impls.items()}
        for impl, us in times.items():
            figures[f"{name}_{impl}_us"] = round(us, 3)
        for impl in impls:
            if impl != "this":
                figures[f"ratio_{name}_vs_{impl}"] = round(times["this"] / times[impl], 3)
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    for key, value in figures.items():
        print(f"{key:34} {value}")


if __name__ == "__main__":
    main()
