"""docs/EXTENDING.md, tried: a toy of each extension point, added through its registry and used by the engine.

Each toy is registered the way the recipe says (``register_backend``, ``register_importer``, ``register_probe``
+ ``register_family``, ``register_purple_kind``); the ``registries`` fixture puts every registry back afterwards.
The last tests pin the words an attack family and its probe in the box share (``Family.markers``).
"""

from __future__ import annotations

import ast
import json
import re
import shutil
from collections.abc import Collection, Iterator, Mapping
from pathlib import Path
from types import TracebackType
from typing import ClassVar

import pytest
from typer.testing import CliRunner

from logomesh import untrusted
from logomesh.cli import app
from logomesh.commands.common import SANDBOX_CHOICE
from logomesh.purple.client import ExchangeSettings, request_submission
from logomesh.purple.kinds import PURPLE_KINDS, KindRefused, ServeOptions, purple_kind, register_purple_kind
from logomesh.purple.mock import MockResponses, mock_app_factory
from logomesh.purple.server import AppFactory, start_in_thread
from logomesh.red.attacks import FAMILIES, Family, Variant, Verdict, families, register_family
from logomesh.red.attacks.base import MISS
from logomesh.red.attacks.differential import PROBE as DIFFERENTIAL
from logomesh.red.context import AttackContext
from logomesh.red.driven import probe_driver, run_driven
from logomesh.red.executor import EXTRA_PROBES, ProbeSpec, Trial, library_source, probe_names, register_probe
from logomesh.red.problem import build_leaves, sandbox_runner
from logomesh.sandbox import Sandbox, SandboxUnavailable, base, open_sandbox
from logomesh.sandbox.choose import BACKENDS, BackendKind, kinds, register_backend, sweep_orphans
from logomesh.sandbox.doctor import check_backend
from logomesh.tasks import default_tasks_dir, load_task
from logomesh.tasks.importers import IMPORTERS, ImportReport, register_importer

REGISTRIES: tuple[dict[str, object], ...] = (BACKENDS, IMPORTERS, FAMILIES, EXTRA_PROBES,  # type: ignore[assignment]
                                             PURPLE_KINDS)


@pytest.fixture
def registries() -> Iterator[None]:
    """Every registry as it was before the test, whatever the test added."""
    saved = [(registry, dict(registry)) for registry in REGISTRIES]
    yield
    for registry, before in saved:
        registry.clear()
        registry.update(before)


# -- a sandbox backend -------------------------------------------------------------------------------------------
class ToyBox:
    """A backend that runs nothing: every suite passes, which is all ``sandbox doctor``'s probe asks. It has every
    member of the ``Sandbox`` protocol (``logomesh/sandbox/base.py``), as a real backend must."""

    opened: ClassVar[list[ToyBox]] = []

    def __init__(self, limits: base.Limits = base.DEFAULT_LIMITS) -> None:
        self.limits = limits
        self.closed = False
        ToyBox.opened.append(self)

    @property
    def backend(self) -> str:
        return "toy"

    @property
    def image_id(self) -> str:
        return "sha256:toy"

    def run_suite(self, solution: str, tests: Mapping[str, str], timeout_s: float = 30.0,
                  on_output: base.OutputSink | None = None) -> base.SuiteRun:
        return base.SuiteRun(tuple(base.TestOutcome(f"{name}.toy", "passed") for name in tests))

    def observe_suite(self, solution: str, drivers: Mapping[str, str], timeout_s: float = 60.0,
                      on_output: base.OutputSink | None = None, seed: int = 0,
                      only: Collection[str] | None = None) -> base.ObservedSuite:
        return base.ObservedSuite(())

    def run_script(self, files: Mapping[str, str], script: str, timeout_s: float = 10.0) -> base.ScriptRun:
        return base.ScriptRun(0, "", "", False, 0.0)

    def close(self) -> None:
        self.closed = True

    def __enter__(self) -> ToyBox:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


def toy_box(limits: base.Limits) -> Sandbox:
    return ToyBox(limits)


def test_a_toy_backend_is_opened_checked_and_swept_through_the_registry(registries: None) -> None:
    swept: list[str] = []
    register_backend(BackendKind("toy", toy_box, sweep=lambda: swept.append("toy")))
    assert kinds() == ("auto", "docker", "bwrap", "toy")
    assert SANDBOX_CHOICE("toy") == "toy"  # the CLI's --sandbox takes it

    box = open_sandbox("toy")
    assert isinstance(box, ToyBox) and box.backend == "toy"

    report = check_backend("toy")  # what `logomesh sandbox doctor` runs for each registered backend
    assert (report.backend, report.ok, report.detail) == ("toy", True, "sha256:toy")
    assert ToyBox.opened[-1].closed

    sweep_orphans("toy")
    sweep_orphans("bwrap")  # bubblewrap leaves nothing behind: no sweep of its own, and not the toy's
    assert swept == ["toy"]
    with pytest.raises(ValueError, match="already registered"):
        register_backend(BackendKind("toy", toy_box))


def test_auto_tries_a_backend_only_where_it_says_so(registries: None, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/dead.sock")
    monkeypatch.setenv("LOGOMESH_ROOTFS", str(tmp_path / "no-roots"))
    register_backend(BackendKind("toy", toy_box))
    with pytest.raises(SandboxUnavailable, match="no sandbox works here") as refused:
        open_sandbox("auto")
    assert "toy" not in str(refused.value)
    BACKENDS["toy"] = BackendKind("toy", toy_box, auto=True)
    assert open_sandbox("auto").backend == "toy"  # after Docker and bubblewrap refused


def test_an_unknown_backend_keeps_its_one_line() -> None:
    with pytest.raises(SandboxUnavailable) as refused:
        open_sandbox("vm")
    assert str(refused.value) == "unknown sandbox 'vm': use one of auto, docker, bwrap"


# -- a task importer ---------------------------------------------------------------------------------------------
def toy_importer(into: Path) -> ImportReport:
    """A "benchmark" of one problem: the built-in rate limiter, copied."""
    into.mkdir(parents=True, exist_ok=True)
    shutil.copytree(default_tasks_dir() / "rate-limiter", into / "rate-limiter")
    return ImportReport(tasks=["rate-limiter"], drivers=len(list((into / "rate-limiter" / "hidden").glob("*.py"))))


def test_a_toy_importer_runs_as_tasks_import(registries: None, tmp_path: Path) -> None:
    register_importer("toy", toy_importer)
    into = tmp_path / "library"
    result = CliRunner().invoke(app, ["tasks", "import", "toy", "--into", str(into)])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[0].startswith(f"1 tasks, {toy_importer(tmp_path / 'again').drivers} hidden "
                                                    f"drivers written to {into}")
    assert load_task("rate-limiter", into).entry_point == load_task("rate-limiter").entry_point

    refused = CliRunner().invoke(app, ["tasks", "import", "nope", "--into", str(into)])
    assert refused.exit_code == 2
    assert "unknown benchmark 'nope' (known: humaneval, toy)" in refused.output


def test_an_unknown_importer_keeps_its_one_line(tmp_path: Path) -> None:
    refused = CliRunner().invoke(app, ["tasks", "import", "nope", "--into", str(tmp_path)])
    assert refused.exit_code == 2
    assert "unknown benchmark 'nope' (known: humaneval)" in refused.output and "Traceback" not in refused.output


# -- an attack family and its probe ------------------------------------------------------------------------------
TOY_PROBE = '''
def probe_toy(args, seed, emit):
    """Call the target on the number it is given; say what came back."""
    fn = getattr(solution, str(args["target"]))
    return {"toy_answer": repr(fn(int(args["n"])))}
'''


class ToyFamily(Family):
    """Doubling: ``f(n)`` must be ``2 * n``."""

    name = "toy-doubling"
    cwe = "CWE-682"
    severity = "low"
    rationale = "low: a toy"
    probe = "toy"
    markers = ("target", "n", "toy_answer")

    def variants(self, ctx: AttackContext, entry: str) -> list[Variant]:
        if entry != "double" or entry not in ctx.features.functions:
            return []
        return [Variant(id="three", spec=ProbeSpec("toy", {"target": entry, "n": 3}), reproducer=f"{entry}(3)",
                        control=ProbeSpec("toy", {"target": entry, "n": 1}))]

    def judge(self, variant: Variant, trial: Trial) -> Verdict:
        if trial.status != "ok":
            return MISS
        answer = untrusted.text(trial.result, "toy_answer")
        return Verdict(True, 1.0, f"double(3) returned {answer}") if answer != "6" else MISS


DOUBLE_WRONGLY = "def double(n):\n    return n * 2 + (n == 3)\n"


def test_a_family_needs_its_probe_to_be_registered() -> None:
    with pytest.raises(ValueError, match="defines no probe_nothing"):
        register_probe("nothing", TOY_PROBE)
    with pytest.raises(ValueError, match="already registered"):
        register_probe("call", "def probe_call(args, seed, emit):\n    return {}\n")
    unregistered = run_driven(None, DOUBLE_WRONGLY, ProbeSpec("toy", {}), 0)  # type: ignore[arg-type]
    assert unregistered.harness_error == "the toy probe does not run as a driver"


def test_a_toy_family_is_attacked_with_and_its_probe_is_sent_to_the_box(registries: None) -> None:
    register_probe("toy", TOY_PROBE)
    toy = register_family(ToyFamily())
    assert families()[-1] is toy and "toy" in probe_names()
    ctx = AttackContext.build(load_task("rate-limiter"), DOUBLE_WRONGLY, seed=1)
    assert [leaf.variant.id for leaf in build_leaves(ctx)["double"]["toy-doubling"]] == ["three"]
    (module,) = probe_driver(ProbeSpec("toy", {"target": "double", "n": 3}), 7).values()
    assert module.startswith(library_source()) and TOY_PROBE in module and "_lm_probe = probe_toy" in module
    (plain,) = probe_driver(ProbeSpec("call", {"target": "double"}), 7).values()
    assert TOY_PROBE not in plain  # a library probe's driver is as it was


@pytest.mark.slow
def test_a_toy_family_finds_its_flaw_in_the_box(registries: None, either_box: Sandbox) -> None:
    register_probe("toy", TOY_PROBE)
    toy = register_family(ToyFamily())
    run = sandbox_runner(either_box, DOUBLE_WRONGLY)
    (variant,) = toy.variants(AttackContext.build(load_task("rate-limiter"), DOUBLE_WRONGLY), "double")
    (trial,) = run(variant.spec, 0).trials
    assert toy.judge(variant, trial) == Verdict(True, 1.0, "double(3) returned 7")
    assert variant.control is not None
    (control,) = run(variant.control, 0).trials
    assert toy.control_ok(variant, control) and untrusted.text(control.result, "toy_answer") == "2"


# -- the words host and box share --------------------------------------------------------------------------------
def _strings(node: ast.AST) -> set[str]:
    return {n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)}


def _probe_strings(source: str, probe: str) -> set[str]:
    """The string constants of ``probe_<probe>`` and of every module-level function or class it reaches."""
    tree = ast.parse(source)
    defined = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef)}
    seen: set[str] = set()
    todo = [f"probe_{probe}"]
    while todo:
        name = todo.pop()
        if name in seen or name not in defined:
            continue
        seen.add(name)
        todo += [n.id for n in ast.walk(defined[name]) if isinstance(n, ast.Name)]
    return set().union(*(_strings(defined[name]) for name in seen))


def _found(marker: str, strings: set[str]) -> bool:
    """A key is a whole string; a placeholder (``{canary}``) sits inside a payload."""
    return marker in strings or (marker.startswith("{") and any(marker in s for s in strings))


def marker_problems(family: Family, family_source: str) -> list[str]:
    """Why ``family`` and the box disagree on a word they share (empty: they agree)."""
    if family.probe == DIFFERENTIAL:  # compared on the host, against the reference's observations
        return []
    if family.probe not in probe_names():
        return [f"{family.name}: its probe {family.probe!r} is not registered"]
    box = _probe_strings(EXTRA_PROBES.get(family.probe, library_source()), family.probe)
    host = _strings(ast.parse(family_source))
    problems = [f"{family.name}: {m!r} is not in probe_{family.probe}" for m in family.markers if not _found(m, box)]
    problems += [f"{family.name}: {m!r} is not in its module" for m in family.markers if not _found(m, host)]
    return problems + ([f"{family.name}: declares no markers"] if not family.markers else [])


@pytest.mark.parametrize("family", [f for f in families() if f.probe != DIFFERENTIAL], ids=lambda f: f.name)
def test_a_family_and_its_probe_share_their_markers(family: Family) -> None:
    source = Path(__import__(type(family).__module__, fromlist=["_"]).__file__ or "").read_text(encoding="utf-8")
    assert marker_problems(family, source) == []


def test_the_marker_check_sees_a_renamed_key(registries: None) -> None:
    register_probe("toy", TOY_PROBE)
    source = Path(__file__).read_text(encoding="utf-8")
    assert marker_problems(ToyFamily(), source) == []
    EXTRA_PROBES["toy"] = TOY_PROBE.replace('"toy_answer"', '"answer"')
    assert marker_problems(ToyFamily(), source) == ["toy-doubling: 'toy_answer' is not in probe_toy"]


def test_every_family_runs_a_registered_probe() -> None:
    assert {f.probe for f in families()} <= probe_names() | {DIFFERENTIAL}
    assert [f.name for f in families()] == ["sql-injection", "code-injection", "path-traversal", "complexity",
                                            "race", "resource-growth", "stateful-model", "differential",
                                            "boundary-input"]


# -- a purple agent kind -----------------------------------------------------------------------------------------
def serve_toy(options: ServeOptions) -> tuple[AppFactory, str]:
    """A kind that serves the answers of one folder and nothing else."""
    if options.responses is None:
        raise KindRefused("the toy purple agent needs --responses")
    return mock_app_factory(MockResponses(options.responses, tasks_dir=options.responses)), "the toy purple agent"


def test_a_toy_purple_kind_is_served_and_answers(registries: None, tmp_path: Path) -> None:
    register_purple_kind("toy", serve_toy)
    with pytest.raises(KindRefused, match="needs --responses"):
        purple_kind("toy")(ServeOptions())
    answer = {"sourceCode": "def double(n):\n    return 2 * n\n", "testCode": "", "rationale": "doubles"}
    (tmp_path / "toy-1.json").write_text(json.dumps(answer), encoding="utf-8")
    factory, what = purple_kind("toy")(ServeOptions(responses=tmp_path))
    assert what == "the toy purple agent"
    with start_in_thread(factory) as server:
        exchange = request_submission(server.url, load_task("rate-limiter"), "toy-1",
                                      ExchangeSettings(total_timeout_s=30))
    assert exchange.submission.source == answer["sourceCode"]


def test_an_unknown_purple_kind_is_one_line() -> None:
    with pytest.raises(KindRefused) as refused:
        purple_kind("toy")
    assert str(refused.value) == ("unknown purple agent kind 'toy' "
                                  "(known: mock, llm, inject-obeying, inject-ignoring, inject-refusing)")


# -- the recipe names what exists --------------------------------------------------------------------------------
def test_the_recipe_names_files_and_functions_that_exist() -> None:
    root = Path(__file__).resolve().parents[1]
    text = (root / "docs" / "EXTENDING.md").read_text(encoding="utf-8")
    named = re.findall(r"`((?:[\w-]+/)*[\w-]+\.py)(?:::(\w+))?`", text)
    assert len(named) >= 20
    missing = []
    for path, name in named:
        found = root / path
        if not found.is_file():
            missing.append(path)
        elif name and name not in _top_level_names(found):
            missing.append(f"{path}::{name}")
    assert missing == []


def _top_level_names(path: Path) -> set[str]:
    """The functions, classes and assigned names a module defines at its top level."""
    names: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
    return names
