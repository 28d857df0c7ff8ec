"""Oracles, the seeder, result parsing and the confirm logic, without a sandbox.

The probe runner is replaced by a table of canned trials here; the same code
paths run against the real sandbox in ``test_attack_docker.py``.
"""

from __future__ import annotations

import ast
import json
import posixpath
import random
from dataclasses import replace
from pathlib import Path
from typing import Any

from logomesh.context import BattleContext
from logomesh.events import Event, FindingConfirmed, MctsNodeAdded, MctsNodeUpdated
from logomesh.red import run_attack
from logomesh.red.attacks.boundary import BoundaryFamily
from logomesh.red.attacks.complexity import ComplexityFamily
from logomesh.red.attacks.growth import GrowthFamily
from logomesh.red.attacks.race import RaceFamily
from logomesh.red.attacks.sqli import SqlInjectionFamily, payloads
from logomesh.red.attacks.traversal import PAYLOADS as TRAVERSALS
from logomesh.red.attacks.traversal import TraversalFamily, spelling
from logomesh.red.context import AttackContext
from logomesh.red.driven import DRIVER_FILE, probe_driver
from logomesh.red.executor import TASK_MODULE, ProbeRun, ProbeSpec, Trial, library_source
from logomesh.red.seeder import read_features
from logomesh.tasks import TaskSpec, load_task_dir

TASKS = Path(__file__).resolve().parents[2] / "tasks"

SQL_SPLICED = '''
import sqlite3 as db
def build_select(table, columns, where):
    sql = "SELECT * FROM %s" % table
    if where:
        sql += " WHERE " + " AND ".join(f"{k} = '{v}'" for k, v in where.items())
    return sql, ()
'''


def task(task_id: str) -> TaskSpec:
    return load_task_dir(TASKS / task_id)


def ok(**result: Any) -> Trial:
    return Trial("ok", result=result)


def sqli(**changes: Any) -> Trial:
    """A trial of the sqli probe as it writes one: no rows, the vault intact, unless ``changes`` say so."""
    record: dict[str, Any] = {"sql": "...", "params": 0, "rows": 0, "vault": False, "vault_intact": True, **changes}
    if "sql_error" in changes:
        del record["rows"], record["vault"]
    return Trial("ok", result=record)


# -- seeder ------------------------------------------------------------------------------------------
def test_seeder_resolves_aliases_and_sees_sql_text() -> None:
    source = "import re as rx\nfrom os import path as p\nimport threading\n" \
             "L = threading.Lock()\nR = rx.compile(r'(a+)+$')\ndef f(x):\n    return p.realpath(x)\n"
    features = read_features(source)
    assert "re.compile" in features.calls and "os.path.realpath" in features.calls
    assert features.regexes == ("(a+)+$",)
    assert features.uses_lock and features.resolves_paths
    assert features.functions == ("f",)
    assert read_features(SQL_SPLICED).builds_sql_text
    assert not read_features("def build_select(t, c, w):\n    return 'SELECT 1', ()\n").builds_sql_text
    assert not read_features("def broken(:\n").parses


def test_entries_follow_targets_then_code() -> None:
    ctx = AttackContext.build(task("rate-limiter"), "class RateLimiter:\n    def allow(self, k):\n        return 1\n"
                                                   "def helper():\n    pass\n")
    assert ctx.entries() == ["RateLimiter", "helper"]


# -- oracles -----------------------------------------------------------------------------------------
def test_sqli_oracle_needs_an_effect_not_text() -> None:
    family = SqlInjectionFamily()
    ctx = AttackContext.build(task("sql-select"), SQL_SPLICED)
    variants = {v.id: v for v in family.variants(ctx, "build_select")}
    assert family.judge(variants["value-or-true"], sqli(rows=3)).hit
    assert family.judge(variants["value-union"], sqli(vault=True)).hit
    assert family.judge(variants["value-quote"], sqli(sql_error="OperationalError: near 'brien'")).hit
    assert not family.judge(variants["key-tautology"], sqli(sql_error="no such column")).hit
    assert not family.judge(variants["value-or-true"], sqli()).hit
    assert not family.judge(variants["value-or-true"], Trial("exception", exc="ValueError")).hit
    assert family.control_ok(variants["value-or-true"], ok(rows=1))
    assert not family.control_ok(variants["value-or-true"], ok(rows=0))


def test_traversal_and_race_and_growth_oracles() -> None:
    traversal = TraversalFamily()
    ctx = AttackContext.build(task("safe-path"), "def safe_join(base, path):\n    return base + '/' + path\n")
    variant = traversal.variants(ctx, "safe_join")[0]
    assert traversal.judge(variant, ok(inside=False, secret=True, returned="x")).hit
    assert not traversal.judge(variant, ok(inside=True)).hit
    assert not traversal.judge(variant, Trial("exception", exc="ValueError")).hit

    race = RaceFamily()
    ctx = AttackContext.build(task("rate-limiter"), "class RateLimiter:\n    pass\n")
    variant = race.variants(ctx, "RateLimiter")[0]
    assert variant.repeatable and variant.confirm_trials == 10 and variant.confirm_quorum == 0.0
    assert variant.prior > 0.5  # no lock in sight
    assert variant.oracle is not None  # the task's check_race judges the record on the host
    self_judging = replace(variant, oracle=None)  # a scenario that reports its violations from the box
    assert race.judge(self_judging, ok(violations=["11 grants"])).hit
    assert not race.judge(self_judging, ok(violations=[])).hit
    assert not race.control_ok(self_judging, ok(violations=["x"]))

    growth = GrowthFamily()
    variant = growth.variants(ctx, "RateLimiter")[0]
    linear = ok(points=[{"n": 2000, "bytes": 300_000}, {"n": 8000, "bytes": 1_200_000}])
    plateau = ok(points=[{"n": 2000, "bytes": 266_000}, {"n": 8000, "bytes": 151_000}])
    small = ok(points=[{"n": 2000, "bytes": 1_000}, {"n": 8000, "bytes": 4_000}])
    ballast = ok(points=[{"n": 2000, "bytes": 5_000_000}, {"n": 8000, "bytes": 5_600_000}])  # ratio 1.1
    assert growth.judge(variant, linear).hit
    assert not growth.judge(variant, plateau).hit
    assert growth.judge(variant, ballast).hit  # a fixed ballast lifts the small reading, not the growth
    assert not growth.judge(variant, small).hit  # grows, but by too little to matter
    # Code that ends or hangs its process once it holds many entries is not bounded; a starved machine is no
    # measurement.
    assert all(growth.judge(variant, Trial(status)).hit for status in ("crashed", "timeout", "cpu"))
    assert not growth.judge(variant, Trial("starved")).hit


def test_complexity_oracle_and_shrink() -> None:
    family = ComplexityFamily()
    ctx = AttackContext.build(task("email-validator"),
                              "import re\nR = re.compile(r'^([a-z]+\\.?)*@x$')\ndef is_valid_email(s):\n"
                              "    return bool(R.match(s))\n")
    variants = family.variants(ctx, "is_valid_email")
    first = max(variants, key=lambda v: v.prior)
    assert first.spec.args["input"]["prefix"] == "" and first.spec.args["input"]["pump"] == "a"
    assert first.cwe == "CWE-1333"
    capped = Trial("ok", result={"capped": True, "points": [{"n": 8, "t": 0.0}, {"n": 22, "t": 0.3}]})
    verdict = family.judge(first, capped)
    assert verdict.hit and "CPU time read from the kernel" in verdict.observation
    # The probe's watchdog kills a call at the cap of CPU. A machine too loaded to give the code its CPU
    # ("starved") is no measurement; code that hung (an idle wait) or ended its process on a large input did
    # not survive it, a hit the agent confirms against the small control.
    starved = Trial("starved")
    assert not family.judge(first, starved).hit
    for status in ("timeout", "crashed", "cpu"):
        died = family.judge(first, Trial(status, message="the code's process broke the protocol or died"))
        assert died.hit and "did not survive" in died.observation, status
    waited = Trial("timeout")
    sizes = first.spec.args["sizes"]
    fast = Trial("ok", result={"capped": False, "points": [{"n": n, "t": 0.01} for n in sizes]}, cpu_s=0.1)
    assert not family.judge(first, fast).hit
    near = Trial("ok", result={"capped": False, "points": [{"n": n, "t": 0.2 if n == sizes[-1] else 0.0}
                                                           for n in sizes]}, cpu_s=0.2)
    assert family.judge(first, near).score == family.judge(first, fast).score == 0.0  # timings never steer
    shrunk = family.shrink(first, capped)
    assert shrunk.spec.args["sizes"] == [8, 14, 18, 22, 26]  # up to one past the size that hit: a margin
    assert shrunk.reproducer == first.reproducer  # which size crossed the cap is a measurement: evidence only
    assert family.shrink(first, waited) is first  # a trial the wall clock ended times no sizes


def test_boundary_oracle_accepts_documented_errors_only() -> None:
    family = BoundaryFamily()
    ctx = AttackContext.build(task("rate-limiter"), "class RateLimiter:\n    pass\n")
    variants = {v.id: v for v in family.variants(ctx, "RateLimiter")}
    must = variants["zero-limit"]
    assert family.judge(must, ok(repr="<RateLimiter>")).hit
    assert not family.judge(must, Trial("exception", exc="ValueError")).hit
    odd = variants["odd-key"]
    assert not family.judge(odd, ok(repr="True")).hit
    assert not family.judge(odd, Trial("exception", exc="TypeError")).hit
    assert family.judge(odd, Trial("exception", exc="AttributeError", message="x")).hit
    assert must.reproducer == "RateLimiter(0, 1.0)"


# -- the probe driver --------------------------------------------------------------------------------------
def test_the_probe_driver_carries_the_spec_as_json_and_one_test_a_trial() -> None:
    """The driver module holds the probe library, the spec's arguments as JSON (quotes and all, the task's
    module apart from them), one test per trial seeded ``seed + i``, and the trial's limits."""
    spec = ProbeSpec("call", {"target": "f", "args": ["a'\"b"], TASK_MODULE: "def race(a, s, r):\n    return []\n"},
                     trials=2, timeout_s=1.5)
    [(name, module)] = probe_driver(spec, 42).items()
    tree = ast.parse(module)
    assert name == DRIVER_FILE and library_source() in module
    constants = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    assert json.loads(next(c for c in constants if c.startswith('{"target"'))) == {"target": "f", "args": ["a'\"b"]}
    assert "def race(a, s, r):\n    return []\n" in constants
    tests = [n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")]
    assert tests == ["test_lm_trial_0", "test_lm_trial_1"]
    assert "_lm_trial(42)" in module and "_lm_trial(43)" in module
    assert "Watchdog(CODE, 1.5, wait_s=1.5, backstop_s=7.5, poll_s=TRIAL_POLL_S)" in module


# -- the agent with canned trials ---------------------------------------------------------------------
class Canned:
    """A probe runner answering from the variant's payload: a spliced-SQL artifact, simulated."""

    def __init__(self, control_broken: bool = False, flaky: bool = False, control_dead: bool = False) -> None:
        self.calls: list[tuple[str, int]] = []
        self.control_broken = control_broken  # the benign input gets a wrong answer
        self.control_dead = control_dead  # the benign input gets no answer at all (a timeout)
        self.flaky = flaky

    def __call__(self, spec: ProbeSpec, seed: int) -> ProbeRun:
        self.calls.append((spec.probe, spec.trials))
        if spec.probe != "sqli":
            return ProbeRun(tuple(Trial("exception", exc="ValueError") for _ in range(spec.trials)))
        where = spec.args["args"][2]
        if where.get("name") == "alice":
            if self.control_dead:
                return ProbeRun((Trial("timeout"),))
            return ProbeRun((ok(rows=0 if self.control_broken else 1),))
        hit = "' OR '" in str(where.get("name", ""))
        trials = []
        for index in range(spec.trials):
            leaks = hit and not (self.flaky and index > 0)
            trials.append(ok(rows=3 if leaks else 0, vault=False, vault_intact=True, sql="..."))
        return ProbeRun(tuple(trials))


def test_agent_confirms_one_finding_and_emits_the_tree() -> None:
    events: list[Event] = []
    runner = Canned()
    report = run_attack(task("sql-select"), SQL_SPLICED, runner,
                        BattleContext(seed=5, battle_id="b1", emit=events.append), budget_s=30)
    assert [(f.family, f.cwe, f.severity, f.confirmations, f.attempts) for f in report.findings] == [
        ("sql-injection", "CWE-89", "critical", 3, 3)]
    assert "' OR '" in report.findings[0].reproducer and "'1'='1" not in report.findings[0].reproducer
    assert report.stats.stopped_because == "exhausted"
    added = [e for e in events if isinstance(e, MctsNodeAdded)]
    assert added[0].parent_id is None and len(added) == report.nodes
    assert any(isinstance(e, MctsNodeUpdated) for e in events)
    root = report.tree[0]
    assert (root.parent, root.action) == (None, "root") and root.visits == report.stats.iterations
    assert sorted((n.id, n.parent, n.action) for n in report.tree) == sorted(
        (e.node_id, e.parent_id, e.action) for e in added)  # the tree the events drew, node for node
    last = {e.node_id: (e.visits, e.mean_value) for e in events if isinstance(e, MctsNodeUpdated)}
    assert all((n.visits, n.mean_value) == last[n.id] for n in report.tree if n.id in last)
    assert root.exhausted  # the search stopped because the root was exhausted
    confirmed = [e for e in events if isinstance(e, FindingConfirmed)]
    assert len(confirmed) == 1 and confirmed[0].node_id in {e.node_id for e in added}
    assert ("sqli", 3) in runner.calls  # the replay
    analysis = report.red_analysis()
    assert analysis["attack_successful"] and analysis["max_severity"] == "critical"


def test_agent_is_deterministic_for_a_seed() -> None:
    def run(seed: int) -> tuple[Any, ...]:
        report = run_attack(task("sql-select"), SQL_SPLICED, Canned(), BattleContext(seed=seed), budget_s=30)
        return report.tree, [f.to_json() for f in report.findings]

    assert run(3) == run(3)


def test_a_dead_control_or_a_flaky_replay_is_never_reported() -> None:
    report = run_attack(task("sql-select"), SQL_SPLICED, Canned(control_dead=True), BattleContext(seed=1), budget_s=30)
    assert report.findings == ()
    assert report.stats.control_failures >= 1
    report = run_attack(task("sql-select"), SQL_SPLICED, Canned(flaky=True), BattleContext(seed=1), budget_s=30)
    assert report.findings == ()
    assert report.stats.unconfirmed >= 1


def test_code_that_fails_its_benign_control_keeps_the_finding_and_says_so() -> None:
    """Grossly wrong code answers the benign input wrongly too: the attack's finding is real, not the harness."""
    report = run_attack(task("sql-select"), SQL_SPLICED, Canned(control_broken=True), BattleContext(seed=1),
                        budget_s=30)
    assert [f.family for f in report.findings] == ["sql-injection"]
    assert report.findings[0].summary.endswith("benign control failed too")
    assert report.stats.control_failures >= 1


def test_baselines_play_the_same_leaves() -> None:
    for strategy in ("random", "round-robin"):
        report = run_attack(task("sql-select"), SQL_SPLICED, Canned(), BattleContext(seed=2), budget_s=30,
                            strategy=strategy)
        assert [f.family for f in report.findings] == ["sql-injection"]
        assert report.stats.strategy == strategy


def test_unparseable_code_gets_no_findings_and_no_probes() -> None:
    runner = Canned()
    report = run_attack(task("sql-select"), "def broken(:\n", runner, BattleContext(seed=0), budget_s=5)
    assert report.findings == () and runner.calls == []


def test_stateful_oracle_replays_the_diverging_sequence() -> None:
    from logomesh.red.attacks.stateful import StatefulFamily

    family = StatefulFamily()
    ctx = AttackContext.build(task("lru-cache"), "class LRUCache:\n    pass\n")
    variant = family.variants(ctx, "LRUCache")[0]
    variant = replace(variant, oracle=None)  # a scenario that reports its divergence from the box
    diverged = ok(divergence=["c = LRUCache(1)", "c.put(0, 0)", "c.get(0)", "# returned None; an LRU cache returns 0"],
                  seed=99)
    verdict = family.judge(variant, diverged)
    assert verdict.hit and verdict.observation == "returned None; an LRU cache returns 0"
    assert not family.judge(variant, ok(divergence=[], seed=1)).hit
    shrunk = family.shrink(variant, diverged)
    assert shrunk.spec.args["fixed_seed"] == 99
    assert shrunk.reproducer.startswith("c = LRUCache(1); c.put(0, 0); c.get(0)")


# -- scenarios that record, checks on the host ---------------------------------------------------------
RECORDING_RED = '''
import solution

def race(args, seed, run_threads):
    return {"answers": [solution.f() for _ in range(3)]}

def check_race(args, observed):
    return [f"{observed['answers'].count(True)} True answers; at most {args['limit']}"] \\
        if observed["answers"].count(True) > args["limit"] else []
'''


def test_a_check_runs_on_the_host_with_solution_a_placeholder() -> None:
    from logomesh.red.attacks.base import Variant
    from logomesh.red.attacks.race import RaceFamily
    from logomesh.red.scenarios import TaskRed

    oracle = TaskRed(module=RECORDING_RED).oracle("race")
    assert oracle is not None and TaskRed(module=RECORDING_RED).oracle("model") is None
    spec = ProbeSpec("race", {"limit": 1, "threads": 2})
    variant = Variant("v", spec, "r", oracle=oracle)
    too_many = Trial("ok", result={"observed": {"answers": [True, True, False]}})
    fine = Trial("ok", result={"observed": {"answers": [True, False, False]}})
    forged = Trial("ok", result={"observed": {"answers": 7}})  # not what the scenario writes
    legacy = Trial("ok", result={"violations": ["seen in the box"]})  # what a self-judging scenario writes
    assert RaceFamily.violations(variant, spec, too_many) == ["2 True answers; at most 1"]
    assert RaceFamily.violations(variant, spec, fine) == []
    assert "malformed" in RaceFamily.violations(variant, spec, forged)[0]
    assert RaceFamily.violations(replace(variant, oracle=None), spec, legacy) == ["seen in the box"]
    assert RaceFamily().judge(variant, Trial("crashed")).hit  # a probe the code does not survive


def test_injection_inputs_are_drawn_per_battle_and_keep_their_meaning() -> None:
    """No payload text is fixed: two battles' SQL payloads and path spellings differ, one battle's repeat, and
    every spelling names the same path as the payload it spells (a ``.`` segment changes no path)."""
    first, again, other = payloads(0), payloads(0), payloads(1)
    assert first == again and first != other
    for (ident, args, table, _), (_, other_args, other_table, _) in zip(first, other, strict=True):
        assert table.isidentifier() and table != "vault" and table != other_table
        assert args != other_args, ident
    tautology = first[0][1][2]["name"]
    word, _, rest = tautology.partition("' OR '")
    key, _, tail = rest.partition("'='")
    assert word.startswith("zz") and tail == key  # '<key>'='<key>: true for every row
    rng = random.Random(7)
    for _, payload, _, _ in TRAVERSALS:
        spelled = spelling(payload, rng)
        assert posixpath.normpath(spelled) == posixpath.normpath(payload)
        assert spelled.split("/")[-1] == payload.split("/")[-1]
