"""Ledger speed, measured against the raw floor in the same run, and (with --against) against older code.

Usage: python benchmarks/ledger_bench.py [--entries N] [--batch B] [--single N] [--verify-entries N]
                                         [--proof-size N] [--proofs N] [--repeat N] [--workdir DIR]
                                         [--against OLD_CHECKOUT] [--json]

Append and floor figures are the median of --repeat runs, each ledger rate beside a floor run just before it.

Figures:
  floor_single    Ed25519 sign + plain SQLite insert, one commit per row (WAL, synchronous=FULL)
  floor_batched   the same, one commit per --batch rows
  floor_entry_batched  Ed25519 sign of each entry's own DSSE PAE (~6 KB) + insert of its DBOM bytes (~9 KB), one
                  commit per --batch rows: what an entry costs before any code of ours (ratio_batched_entry_floor
                  is append_batched over it)
  append_single   Ledger.append: canonicalize, hash, DSSE sign, Merkle update, signed checkpoint,
                  durable commit, DBOM file and checkpoint copies — one battle per transaction
  append_batched  Ledger.append_many with --batch battles per transaction and one checkpoint
  *_per_cpu_s     the same rate over this process's CPU time: what the code costs when the
                  machine is shared (wall-clock rates fall with the load average, CPU rates do not)
  file_create     plain file creations per second in the same folder tree: releases before the
                  dbom_files_until meta row wrote one DBOM file per battle, which bounded append_batched
                  by this on a slow filesystem
  ratio_*         ledger rate / floor rate for the same transaction size (median of the per-run ratios)
  verify          verify_ledger over a ledger of --verify-entries battles (built once, batched): entries per
                  second, everything recomputed, in one process and with verify_workers processes checking
                  entries, alternately, --repeat times each (medians), and (verify_per_cpu_s) one process's
                  rate over its CPU time; also over the one-per-transaction ledger, which has a signed
                  checkpoint per entry
  proof_*         inclusion and consistency proofs read from stored subtree hashes in a nodes table of
                  --proof-size leaves (built directly: the proof code reads only that table), milliseconds

--against DIR measures every figure but the proofs with the ledger package of DIR too (a checkout of older
code, e.g. ``git worktree add /tmp/before main``), alternating the two in fresh processes on the same
machine minute, and prints before, after and after/before. Each checkout verifies a ledger of the same
--verify-entries battles that it wrote itself (a ledger of older code has a DBOM file per entry, which its
verify reads; one of newer code has none, and older code reports that as deleted files).

Aims from the issue: batched appends >= 5000/s, verification >= 5000 entries/s,
an inclusion proof at 10^6 entries in under 10 ms; issue 39: batched appends >= 0.25 of the floor,
verification of 10^5 entries >= 2x the one-process rate before it, and never slower with workers.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CODE_ENV = "LEDGER_BENCH_CODE"  # the checkout whose ledger package is measured (worker processes inherit it)
sys.path.insert(0, os.environ.get(CODE_ENV, str(ROOT)))

from ledger import AppendRequest, Ledger  # noqa: E402
from ledger.entry_checks import default_workers  # noqa: E402
from ledger.keys import SignerKey, create_key  # noqa: E402
from ledger.merkle import MemoryTree, leaf_hash, verify_consistency, verify_inclusion  # noqa: E402
from ledger.nodes import DbNodes, frontier_of, frontier_root  # noqa: E402
from ledger.schema import create_schema, make_engine  # noqa: E402
from ledger.verify import verify_ledger  # noqa: E402

SEED = 20260101
VECTOR_DIMENSIONS = 384  # an all-MiniLM-L6-v2 intent vector
# A battle's intent vector is its task's, so a campaign over the ten tasks carries ten distinct vectors.
TASK_VECTORS = [[rng.uniform(-1, 1) for _ in range(VECTOR_DIMENSIONS)]
                for rng in (random.Random(SEED - task) for task in range(10))]


def battle_result(i: int) -> dict[str, Any]:
    rng = random.Random(SEED + i)
    scores = {k: round(rng.random(), 4) for k in ("rationale_score", "architecture_score", "testing_score",
                                                  "logic_score", "cis_score")}
    return {
        "battle_id": f"bench-{i}", "task_id": "rate-limiter", **scores, "red_penalty_applied": 0.0,
        "intent_penalty": 1.0,
        "red_analysis": {"attack_successful": False, "vulnerability_count": 0, "max_severity": "low",
                         "vulnerabilities": []},
        "tests": {"hidden": {"passed": 9, "failed": 1, "total": 10}, "purple": {"passed": 3, "failed": 0, "total": 3}},
        "anchors": {}, "llm_adjustments": {}, "status": "scored", "seed": i, "purple_agent": "mock:good",
    }


def battle_request(i: int) -> AppendRequest:
    inputs = {
        "task_spec": b"id = 'rate-limiter'\n" * 20,
        "hidden_tests": b"def test_window(): ...\n" * 40,
        "purple_request": f'{{"jsonrpc": "2.0", "id": {i}}}'.encode() * 8,
        "purple_response": f'{{"sourceCode": "class RateLimiter: ... # {i}"}}'.encode() * 30,
    }
    attrs = {"sandbox_image": "sha256:" + "ab" * 32, "scorer_config_sha256": "cd" * 32,
             "model:embedding": "all-MiniLM-L6-v2", "purple_agent": "mock:good"}
    vector = TASK_VECTORS[i % len(TASK_VECTORS)]
    return AppendRequest(f"bench-{i}", battle_result(i), inputs, attrs, vector)


def floor(path: Path, n: int, batch: int) -> float:
    """Rows per second for sign + insert with the ledger's durability settings."""
    key = SignerKey("floor", bytes(32))
    payloads = [json.dumps(battle_result(i)).encode() for i in range(n)]
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    db.execute("CREATE TABLE rows (seq INTEGER PRIMARY KEY, data BLOB, sig BLOB)")
    started = time.perf_counter()
    for start in range(0, n, batch):
        db.execute("BEGIN IMMEDIATE")
        for i in range(start, min(n, start + batch)):
            db.execute("INSERT INTO rows VALUES (?, ?, ?)", (i, payloads[i], key.sign(payloads[i])))
        db.execute("COMMIT")
    elapsed = time.perf_counter() - started
    db.close()
    return n / elapsed


def entry_floor(path: Path, n: int, batch: int) -> float:
    """Rows per second for the part of an append no code can skip: the Ed25519 signature over each entry's own
    DSSE PAE (~6 KB: the statement repeats the entry) and the insert of its DBOM bytes (~9 KB), built beforehand."""
    from ledger.dbom import PAYLOAD_TYPE, build_entry, envelope_payload, pae, sign_encoded

    key = SignerKey("floor", bytes(32))
    rows = []
    for i in range(n):
        req = battle_request(i)
        entry = build_entry(sequence=i, battle_id=req.battle_id, timestamp="2026-01-01T00:00:00.000000Z",
                            result=req.result, inputs=req.inputs, attributes=req.attributes,
                            intent_vector=req.intent_vector)
        signed = sign_encoded(entry, key)
        rows.append((pae(PAYLOAD_TYPE, envelope_payload(signed.document["sigma_judge"])), signed.leaf_data))
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    db.execute("CREATE TABLE rows (seq INTEGER PRIMARY KEY, data BLOB, sig BLOB)")
    started = time.perf_counter()
    for start in range(0, n, batch):
        db.execute("BEGIN IMMEDIATE")
        for i in range(start, min(n, start + batch)):
            message, leaf = rows[i]
            db.execute("INSERT INTO rows VALUES (?, ?, ?)", (i, leaf, key.sign(message)))
        db.execute("COMMIT")
    elapsed = time.perf_counter() - started
    db.close()
    return n / elapsed


def file_floor(folder: Path, n: int, size: int = 3800) -> float:
    """Files per second this machine creates: the ledger writes one DBOM file per battle."""
    folder.mkdir(parents=True, exist_ok=True)
    data = b"x" * size
    started = time.perf_counter()
    for i in range(n):
        with open(folder / f"f{i}.json", "wb") as fh:
            fh.write(data)
    return n / (time.perf_counter() - started)


def ledger_rate(home: Path, n: int, batch: int) -> tuple[float, float]:
    """Appends per second of wall time and of this process's CPU time."""
    if not (home / "keys").exists():
        create_key(home / "keys", seed=bytes(range(32)))
    requests = [battle_request(i) for i in range(n)]
    with Ledger.open(home) as led:
        started, cpu = time.perf_counter(), time.process_time()
        for start in range(0, n, batch):
            led.append_many(requests[start:start + batch])
        elapsed, cpu_used = time.perf_counter() - started, time.process_time() - cpu
    return n / elapsed, n / cpu_used


def build_node_table(path: Path, size: int) -> bytes:
    """A nodes table for ``size`` synthetic leaves, as the store would have written it; returns the root."""
    engine = make_engine(path)
    create_schema(engine)
    engine.dispose()
    tree = MemoryTree()
    for i in range(size):
        tree.append(leaf_hash(i.to_bytes(8, "big")))
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("BEGIN")
    for level, hashes in enumerate(tree.levels):
        db.executemany("INSERT INTO nodes (level, idx, hash) VALUES (?, ?, ?)",
                       ((level, idx, h) for idx, h in enumerate(hashes)))
    db.execute("COMMIT")
    db.close()
    return tree.root()


def proof_times(path: Path, size: int, count: int) -> dict[str, float]:
    from ledger.merkle import consistency_proof, inclusion_proof

    engine = make_engine(path)
    rng = random.Random(SEED)
    inclusion_ms: list[float] = []
    consistency_ms: list[float] = []
    root_ms: list[float] = []
    with engine.connect() as conn:
        started = time.perf_counter()
        root = frontier_root(frontier_of(DbNodes(conn, size), size))
        root_ms.append((time.perf_counter() - started) * 1000)
        for _ in range(count):
            index = rng.randrange(size)
            started = time.perf_counter()
            proof = inclusion_proof(index, size, DbNodes(conn, size))
            inclusion_ms.append((time.perf_counter() - started) * 1000)
            assert verify_inclusion(leaf_hash(index.to_bytes(8, "big")), index, size, proof, root)
            old = rng.randrange(1, size)
            started = time.perf_counter()
            cproof = consistency_proof(old, size, DbNodes(conn, size))
            consistency_ms.append((time.perf_counter() - started) * 1000)
            old_root = frontier_root(frontier_of(DbNodes(conn, old), old))
            assert verify_consistency(old, size, old_root, root, cproof)
    engine.dispose()
    inclusion_ms.sort()
    return {
        "proof_size": size,
        "root_ms": round(root_ms[0], 3),
        "inclusion_median_ms": round(statistics.median(inclusion_ms), 3),
        "inclusion_p99_ms": round(inclusion_ms[int(0.99 * (len(inclusion_ms) - 1))], 3),
        "consistency_median_ms": round(statistics.median(consistency_ms), 3),
    }


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--entries", type=int, default=5000, help="entries for the batched append runs")
    parser.add_argument("--batch", type=int, default=500)
    parser.add_argument("--single", type=int, default=300, help="entries for the one-per-transaction runs")
    parser.add_argument("--verify-entries", type=int, default=100_000, help="entries of the ledger verified")
    parser.add_argument("--proof-size", type=int, default=1_000_000)
    parser.add_argument("--proofs", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure; the median is reported")
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--against", type=Path, default=None, help="a checkout of older code to compare with")
    parser.add_argument("--part", choices=["appends", "verify", "build"], default=None, help=argparse.SUPPRESS)
    parser.add_argument("--json", action="store_true")
    return parser.parse_args()


def append_figures(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    """Floors and append rates, each ledger run right after its floor run; medians of --repeat."""
    runs: dict[str, list[float]] = {}

    def note(name: str, value: float) -> None:
        runs.setdefault(name, []).append(value)

    for i in range(args.repeat):
        floor1 = floor(work / f"floor1-{i}.db", args.single, 1)
        wall, cpu = ledger_rate(work / f"single-{i}", args.single, 1)
        note("floor_single_per_s", floor1)
        note("append_single_per_s", wall)
        note("append_single_per_cpu_s", cpu)
        note("ratio_single", wall / floor1)
        floorb = floor(work / f"floorb-{i}.db", args.entries, args.batch)
        floore = entry_floor(work / f"floore-{i}.db", args.entries, args.batch)
        note("file_create_per_s", file_floor(work / f"files-{i}", args.entries))
        wall, cpu = ledger_rate(work / f"batched-{i}", args.entries, args.batch)
        note("floor_batched_per_s", floorb)
        note("append_batched_per_s", wall)
        note("append_batched_per_cpu_s", cpu)
        note("ratio_batched", wall / floorb)
        note("floor_entry_batched_per_s", floore)
        note("ratio_batched_entry_floor", wall / floore)
    figures: dict[str, Any] = {}
    for name, values in runs.items():
        middle = statistics.median(values)
        figures[name] = round(middle, 3) if name.startswith("ratio") else round(middle)
        figures[f"{name}_runs"] = [round(v, 3) if name.startswith("ratio") else round(v) for v in values]
    single = verify_ledger(work / "single-0")  # one checkpoint per entry: two signatures to check per entry
    assert single.ok, single.problems[:3]
    figures["verify_one_checkpoint_per_entry_per_s"] = round(single.size / single.seconds)
    return figures


def verify_figures(home: Path, repeat: int) -> dict[str, Any]:
    """One process and several, alternately over the same ledger; medians of the rates and of their ratios."""
    workers = max(2, default_workers(10**9))  # the count the CLI uses for a large ledger
    one: list[float] = []
    one_cpu: list[float] = []
    several: list[float] = []
    for _ in range(repeat):
        cpu = time.process_time()
        report = verify_ledger(home)  # one process
        one_cpu.append(report.size / (time.process_time() - cpu))
        parallel = verify_ledger(home, workers=workers)
        assert report.ok and parallel.ok, (report.problems + parallel.problems)[:3]
        one.append(report.size / report.seconds)
        several.append(parallel.size / parallel.seconds)
    return {
        "verify_entries": report.size, "verify_per_s": round(statistics.median(one)),
        "verify_per_cpu_s": round(statistics.median(one_cpu)),
        "verify_workers": workers, "verify_workers_per_s": round(statistics.median(several)),
        "ratio_verify_workers": round(statistics.median(w / o for w, o in zip(several, one, strict=True)), 2),
        "verify_per_s_runs": [round(v) for v in one], "verify_workers_per_s_runs": [round(v) for v in several],
    }


def build_verify_ledger(home: Path, n: int, batch: int) -> None:
    if not (home / "battles.db").exists():
        ledger_rate(home, n, batch)


def in_fresh_process(code: Path, part: str, args: argparse.Namespace, work: Path) -> dict[str, Any]:
    """One part of the figures measured by a new interpreter importing the ledger package of ``code``."""
    command = [sys.executable, str(Path(__file__).resolve()), "--part", part, "--workdir", str(work), "--json",
               "--entries", str(args.entries), "--batch", str(args.batch), "--single", str(args.single),
               "--verify-entries", str(args.verify_entries), "--repeat", "1"]
    env = {**os.environ, CODE_ENV: str(code)}
    out = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"{code}: {part} failed:\n{out.stderr}")
    return dict(json.loads(out.stdout))


def compare(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    """Both checkouts, alternately, --repeat rounds: every figure's median for each, and after/before."""
    codes = {"before": args.against.resolve(), "after": Path(os.environ.get(CODE_ENV, str(ROOT)))}
    ledgers = {label: work / f"verify-ledger-{label}" for label in codes}
    for label, folder in ledgers.items():  # each checkout verifies a ledger it wrote itself, built afresh
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        in_fresh_process(codes[label], "build", args, folder)
    runs: dict[str, list[dict[str, Any]]] = {"before": [], "after": []}
    for round_ in range(args.repeat):
        order = ["before", "after"] if round_ % 2 == 0 else ["after", "before"]
        for label in order:
            part_dir = work / f"{label}-{round_}"
            part_dir.mkdir(parents=True, exist_ok=True)
            figures = in_fresh_process(codes[label], "appends", args, part_dir)
            figures.update(in_fresh_process(codes[label], "verify", args, ledgers[label]))
            runs[label].append(figures)
            shutil.rmtree(part_dir)
    out: dict[str, Any] = {"workdir": str(work), "before": str(codes["before"]), "after": str(codes["after"])}
    for label in ("before", "after"):
        numeric = [k for k, v in runs[label][0].items() if isinstance(v, int | float) and not isinstance(v, bool)]
        out[label] = {k: statistics.median(r[k] for r in runs[label]) for k in numeric}
        out[f"{label}_runs"] = runs[label]
    out["after_over_before"] = {k: round(out["after"][k] / out["before"][k], 2) for k in out["after"]
                                if out["before"].get(k)}
    best = max(out["after"]["verify_per_s"], out["after"]["verify_workers_per_s"])
    out["verify_after_best_over_before_one_process"] = round(best / out["before"]["verify_per_s"], 2)
    return out


def main() -> None:
    args = parse_args()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="ledger-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    if args.part == "appends":
        print(json.dumps(append_figures(args, work)))
        return
    if args.part == "verify":
        print(json.dumps(verify_figures(work / "verify-ledger", args.repeat)))
        return
    if args.part == "build":
        build_verify_ledger(work / "verify-ledger", args.verify_entries, args.batch)
        print(json.dumps({}))
        return
    for stale in work.iterdir():  # everything but the reusable node table and verification ledger
        if not stale.name.startswith(("nodes-", "verify-ledger")):
            shutil.rmtree(stale) if stale.is_dir() else stale.unlink()
    if args.against is not None:
        result = compare(args, work)
        if args.json:
            print(json.dumps(result, indent=2))
            return
        print(f"{'figure':40} {'before':>10} {'after':>10} {'after/before':>12}")
        for name, after in result["after"].items():
            before = result["before"].get(name)
            ratio = result["after_over_before"].get(name, "")
            before_text = "" if before is None else f"{before:g}"
            print(f"{name:40} {before_text:>10} {after:>10g} {ratio!s:>12}")
        best = result["verify_after_best_over_before_one_process"]
        print(f"{'verify, after (best of one and workers) / before (one process)':64} {best:>10}")
        print(f"load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
        return

    figures: dict[str, Any] = {"workdir": str(work)}
    figures.update(append_figures(args, work))
    build_verify_ledger(work / "verify-ledger", args.verify_entries, args.batch)
    figures.update(verify_figures(work / "verify-ledger", args.repeat))
    nodes_db = work / f"nodes-{args.proof_size}.db"
    if not nodes_db.exists():
        started = time.perf_counter()
        build_node_table(nodes_db, args.proof_size)
        figures["nodes_build_s"] = round(time.perf_counter() - started, 1)
    figures.update(proof_times(nodes_db, args.proof_size, args.proofs))

    if args.json:
        print(json.dumps(figures, indent=2))
        return
    for name, value in figures.items():
        print(f"{name:26} {value}")
    aims = [("append_batched_per_s", ">=", 5000), ("verify_per_s", ">=", 5000), ("verify_workers_per_s", ">=", 5000),
            ("inclusion_p99_ms", "<", 10), ("ratio_batched", ">=", 0.25), ("ratio_verify_workers", ">=", 1.0)]
    print(f"load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    for name, op, target in aims:
        value = figures[name]
        met = value >= target if op == ">=" else value < target
        print(f"aim {name} {op} {target}: {'met' if met else 'NOT met'} ({value})")


if __name__ == "__main__":
    main()
