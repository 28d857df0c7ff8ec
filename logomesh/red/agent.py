"""``attack``: the red agent's entry point, and the two baselines the benchmark compares it with.

The MCTS searches entry point -> family -> variant; ``random`` plays leaves
uniformly at random and ``round-robin`` cycles through (entry, family) pairs
in declaration order. All three play leaves through the same ``RedProblem``,
so they differ only in the order they choose.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from logomesh.cancel import CancelToken
from logomesh.events import EventSink, FindingConfirmed, MctsNodeAdded, MctsNodeUpdated
from logomesh.findings import Finding, max_severity
from logomesh.red.context import AttackContext
from logomesh.red.executor import ProbeRun, ProbeSpec
from logomesh.red.mcts import Mcts, MctsConfig, Node, Path, walk
from logomesh.red.problem import Confirmed, ProbeRunner, RedProblem, sandbox_runner
from logomesh.sandbox.base import Sandbox
from logomesh.sandbox.setting import settings_of
from logomesh.tasks import TaskSpec
from logomesh.tasks.hidden_suite import drivers_seed

if TYPE_CHECKING:
    from logomesh.context import BattleContext

Strategy = Literal["mcts", "random", "round-robin"]
STRATEGIES: tuple[Strategy, ...] = ("mcts", "random", "round-robin")
PLAYS_PER_SECOND = 4  # the budget in leaf plays per second of ``budget_s``: see ``play_budget``
BACKSTOP_FACTOR = 6.0  # the wall clock stops a search only at this multiple of its budget


def play_budget(budget_s: float) -> int:
    """The search's budget counted in leaf plays, so the wall clock never decides which leaves were played.

    A time budget cut the search at a different leaf on a loaded machine, so the findings depended on the
    load (the issue saw it). The library's searches exhaust within 26 plays, at 3 to 8 plays a second here;
    4 a second gives 40 at the default 10 s. The wall clock stays as a backstop at ``BACKSTOP_FACTOR`` times
    the budget (``stopped_because: "time"``), for code whose every probe runs into its timeout."""
    return max(1, math.ceil(budget_s * PLAYS_PER_SECOND))


@dataclass(frozen=True)
class RedStats:
    """How a search went: its settings, why it stopped, and what its probes met (``RedReport.stats``)."""

    strategy: str
    seed: int
    budget_s: float
    budget_plays: int
    leaves: int
    stopped_because: str
    iterations: int | None  # None when the source does not parse: no search ran
    elapsed_s: float
    first_finding_s: float | None
    probes: int = 0
    candidates: int = 0
    unconfirmed: int = 0
    control_failures: int = 0
    harness_errors: int = 0
    sandbox_s: float = 0.0

    def to_json(self) -> dict[str, Any]:
        """The ``stats`` block of ``logomesh red --json``; ``iterations`` only when a search ran."""
        head: dict[str, Any] = {"strategy": self.strategy, "seed": self.seed, "budget_s": self.budget_s,
                                "budget_plays": self.budget_plays, "leaves": self.leaves}
        if self.iterations is not None:
            head["iterations"] = self.iterations
        return {**head, "stopped_because": self.stopped_because, "elapsed_s": self.elapsed_s,
                "first_finding_s": self.first_finding_s, "probes": self.probes, "candidates": self.candidates,
                "unconfirmed": self.unconfirmed, "control_failures": self.control_failures,
                "harness_errors": self.harness_errors, "sandbox_s": self.sandbox_s}


@dataclass(frozen=True)
class TreeNode:
    """One node of the searched tree as the search left it (``RedReport.tree``)."""

    id: int
    parent: int | None  # None for the root
    action: str  # the action's id; "root" for the root
    visits: int
    mean_value: float  # rounded to 6 digits, as the node-updated events show it
    exhausted: bool
    pruned: bool

    @classmethod
    def of(cls, node: Node) -> TreeNode:
        return cls(node.id, node.parent.id if node.parent is not None else None,
                   node.action.id if node.action is not None else "root", node.visits, round(node.mean_value, 6),
                   node.exhausted, node.pruned)


@dataclass(frozen=True)
class RedReport:
    findings: tuple[Finding, ...]  # only reproduced findings
    nodes: int
    best_value_history: tuple[float, ...]
    stats: RedStats
    tree: tuple[TreeNode, ...] = ()  # the MCTS tree, parents before children; empty for the baselines

    def red_analysis(self) -> dict[str, Any]:
        """The result's ``red_analysis`` block, as in the paper."""
        return {
            "attack_successful": bool(self.findings),
            "vulnerability_count": len(self.findings),
            "max_severity": max_severity(self.findings),
            "vulnerabilities": [f.to_json() for f in self.findings],
        }

    def to_json(self) -> dict[str, Any]:
        from logomesh.red.attacks import families

        rationale = {f.name: f.rationale for f in families() if any(x.family == f.name for x in self.findings)}
        evidence = [f.evidence for f in self.findings]
        return {**self.red_analysis(), "evidence": evidence, "severity_rationale": rationale, "nodes": self.nodes,
                "stats": self.stats.to_json()}


class _EventObserver:
    """Turns tree growth into events, and remembers which node id each path got."""

    def __init__(self, battle_id: str, emit: EventSink, index: dict[tuple[str, ...], int]) -> None:
        self.battle_id = battle_id
        self.emit = emit
        self.index = index

    def node_added(self, node: Node) -> None:
        self.index[tuple(a.id for a in node.path)] = node.id
        parent = node.parent.id if node.parent is not None else None
        label = node.action.id if node.action is not None else "root"
        self.emit(MctsNodeAdded(self.battle_id, node.id, parent, label))

    def node_updated(self, node: Node) -> None:
        self.emit(MctsNodeUpdated(self.battle_id, node.id, node.visits, round(node.mean_value, 6)))


def attack(
    task: TaskSpec, source: str, box: Sandbox, battle: BattleContext, *, budget_s: float = 10.0,
    strategy: Strategy = "mcts",
) -> RedReport:
    """Attack ``source`` (the submission's solution.py) inside ``box`` with ``play_budget(budget_s)`` leaf plays.

    The search is seeded by ``battle.seed``, its events go to ``battle.emit`` under ``battle.battle_id``, and a
    cancelled ``battle.cancel`` raises ``Cancelled`` before the next search step or probe.
    """
    settings = settings_of(drivers_seed(battle.seed, source))  # the hidden suite's two (sandbox/setting.py)
    return run_attack(task, source, sandbox_runner(box, source, task.reference, settings), battle,
                      budget_s=budget_s, strategy=strategy)


def run_attack(
    task: TaskSpec, source: str, runner: ProbeRunner, battle: BattleContext, *, budget_s: float = 10.0,
    strategy: Strategy = "mcts",
) -> RedReport:
    """``attack`` with the probe runner injected (the sandbox in production)."""
    started = time.monotonic()
    runner = _checked(runner, battle.cancel)
    seed, battle_id, emit = battle.seed, battle.battle_id, battle.emit
    node_of_path: dict[tuple[str, ...], int] = {}

    def confirmed(item: Confirmed, path: Path) -> None:
        node_id = node_of_path.get(tuple(a.id for a in path))
        finding = item.finding
        shown = f"{finding.summary}: {finding.evidence}" if finding.evidence else finding.summary  # live view
        emit(FindingConfirmed(battle_id, finding.family, finding.severity, finding.cwe, shown, node_id))

    problem = RedProblem(AttackContext.build(task, source, seed), runner, on_finding=confirmed, started=started)
    plays = play_budget(budget_s)
    leaves = len(problem.all_leaves())
    tree: tuple[TreeNode, ...] = ()
    iterations: int | None
    if not problem.ctx.features.parses:
        stopped_because, iterations = "source does not parse", None
        history: tuple[float, ...] = ()
        nodes = 0
    elif strategy == "mcts":
        cfg = MctsConfig(max_time_seconds=budget_s * BACKSTOP_FACTOR, max_iterations=plays)
        search = Mcts(problem, cfg, seed=seed, observer=_EventObserver(battle_id, emit, node_of_path),
                      cancel=battle.cancel)
        result = search.run()
        history, nodes = result.best_value_history, result.nodes
        iterations, stopped_because = result.iterations, result.stopped_because
        tree = tuple(TreeNode.of(n) for n in walk(search.root))
    else:
        history, nodes = _baseline(problem, strategy, seed, plays, started + budget_s * BACKSTOP_FACTOR)
        iterations, stopped_because = len(history), "budget or exhausted"
    findings = tuple(c.finding for c in sorted(problem.findings, key=_declared_order(problem)))
    counters = problem.counters
    stats = RedStats(
        strategy=strategy, seed=seed, budget_s=budget_s, budget_plays=plays, leaves=leaves,
        stopped_because=stopped_because, iterations=iterations,
        elapsed_s=round(time.monotonic() - started, 3),
        first_finding_s=round(min(c.elapsed_s for c in problem.findings), 3) if problem.findings else None,
        probes=counters.probes,
        candidates=counters.candidates,
        unconfirmed=counters.unconfirmed,
        control_failures=counters.control_failures,
        harness_errors=counters.harness_errors,
        sandbox_s=round(counters.sandbox_s, 3),
    )
    return RedReport(findings, nodes, history, stats, tree)


def _checked(runner: ProbeRunner, cancel: CancelToken) -> ProbeRunner:
    """``runner`` that checks ``cancel`` before each probe, so a cancel never starts one."""

    def run(spec: ProbeSpec, seed: int) -> ProbeRun:
        cancel.check()
        return runner(spec, seed)

    return run


def _declared_order(problem: RedProblem) -> Callable[[Confirmed], int]:
    """Findings in the order the tree declares (entry, then family), not the order a search met them."""
    pairs = [(entry, family) for entry, families in problem.leaves.items() for family in families]
    return lambda c: pairs.index((c.leaf.entry, c.leaf.family.name))


def _baseline(problem: RedProblem, strategy: Strategy, seed: int, plays: int,
              backstop: float) -> tuple[tuple[float, ...], int]:
    """Uniform random or round-robin play over the same leaves, under the same budget of plays."""
    rng = random.Random(seed)
    live = problem.all_leaves()
    groups: dict[tuple[str, str], list[Any]] = {}
    for leaf in live:
        groups.setdefault((leaf.entry, leaf.family.name), []).append(leaf)
    order = list(groups)
    turn = 0
    history: list[float] = []
    best = 0.0
    while live and len(history) < plays and time.monotonic() < backstop:
        if strategy == "random":
            leaf = rng.choice(live)
        else:
            while not groups[order[turn % len(order)]]:
                turn += 1
            leaf = groups[order[turn % len(order)]][0]
            turn += 1
        evaluation = problem.play(leaf, rng.randrange(1 << 30))
        if evaluation.exhausted or evaluation.harness_error:
            live.remove(leaf)
            groups[(leaf.entry, leaf.family.name)].remove(leaf)
        best = max(best, evaluation.value)
        history.append(best)
    return tuple(history), len(history)

