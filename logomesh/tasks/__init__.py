"""Load and validate the task library (``tasks/<id>/task.toml``).

Every problem with a task folder becomes a ``TaskError`` whose message names
the file and the fix. Content hashes of the spec and of the hidden suite are
what the ledger entangles with each battle.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tomllib
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from logomesh.findings import SEVERITY_ORDER, Severity
from logomesh.submission import Submission, SubmissionError
from logomesh.tasks.contracts import Contract, ContractError, parse_contract

_ID = re.compile(r"^[a-z0-9][a-z0-9-]*$")
_KNOWN_REQUIRED = {"lock", "recursion"}


class TaskError(ValueError):
    """A task is unknown or malformed; the message says which file and why."""


@dataclass(frozen=True)
class Constraints:
    banned_imports: tuple[str, ...] = ()
    banned_calls: tuple[str, ...] = ()
    required: tuple[str, ...] = ()
    forbid_loops: bool = False
    network: bool = False


@dataclass(frozen=True)
class Invariant:
    name: str
    description: str


@dataclass(frozen=True)
class LabelledSubmission:
    name: str
    label: str
    behaviour_defect: bool
    submission: Submission


@dataclass(frozen=True)
class TaskSpec:
    id: str
    title: str
    description: str
    entry_point: str
    root: Path
    constraints: Constraints = Constraints()
    attack_surface: tuple[str, ...] = ()
    attack_targets: tuple[str, ...] = ()
    invariants: tuple[Invariant, ...] = ()
    hidden_tests: dict[str, str] = field(default_factory=dict, hash=False, compare=False)
    reference: str = field(default="", hash=False, compare=False)  # reference/solution.py: what hidden tests compare to
    differential: bool = True  # [attack] differential: may the red agent compare the code with the reference?
    contract_severity: Severity = "medium"  # [attack] contract_severity: a divergence from the reference
    contract: Contract = field(default_factory=Contract)  # [contract]: preconditions, answer equivalence
    intent_library: tuple[tuple[str, str, str], ...] | None = field(default=None, hash=False, compare=False)
    """The library intents (key, entry point, text) the intent check judged among, when they come from a ledger
    entry (replay); ``None``: the configured library's (``scoring.reference``)."""

    @property
    def reference_bytes(self) -> bytes:
        return self.reference.encode("utf-8")

    @property
    def spec_bytes(self) -> bytes:
        return (self.root / "task.toml").read_bytes()

    @property
    def spec_sha256(self) -> str:
        return hashlib.sha256(self.spec_bytes).hexdigest()

    @property
    def hidden_bytes(self) -> bytes:
        """The hidden suite as one deterministic byte string (name-sorted JSON)."""
        return json.dumps(self.hidden_tests, sort_keys=True, ensure_ascii=False).encode("utf-8")

    @property
    def hidden_sha256(self) -> str:
        return hashlib.sha256(self.hidden_bytes).hexdigest()

    def submission_names(self) -> list[str]:
        return sorted(p.stem for p in (self.root / "submissions").glob("*.json"))

    def labelled_submission(self, name: str) -> LabelledSubmission:
        path = self.root / "submissions" / f"{name}.json"
        if not _ID.match(name) or not path.is_file():
            known = ", ".join(self.submission_names()) or "none"
            raise TaskError(f"task {self.id!r} has no submission {name!r} (known: {known})")
        raw = path.read_bytes()
        try:
            data = json.loads(raw)
            submission = Submission.from_mapping(data, raw)
        except (json.JSONDecodeError, SubmissionError) as exc:
            raise TaskError(f"{path}: {exc}") from None
        return LabelledSubmission(
            name=name,
            label=str(data.get("label", name)),
            behaviour_defect=bool(data.get("behaviour_defect", False)),
            submission=submission,
        )

    def flawed_variants(self) -> dict[str, str]:
        """The sources of the labelled submissions with a behaviour defect, by name: what the purple tests are
        measured against, and a battle's input whatever its ending."""
        out: dict[str, str] = {}
        for name in self.submission_names():
            labelled = self.labelled_submission(name)
            if labelled.behaviour_defect:
                out[name] = labelled.submission.source
        return out

    @property
    def variants_bytes(self) -> bytes:
        """The flawed variants as one deterministic byte string (name-sorted JSON), as the ledger stores them."""
        return json.dumps(self.flawed_variants(), sort_keys=True, ensure_ascii=False).encode("utf-8")


def valid_task_id(task_id: str) -> bool:
    """Whether ``task_id`` can name a task (and its folder): ``[a-z0-9][a-z0-9-]*``."""
    return bool(_ID.match(task_id))


def default_tasks_dir() -> Path:
    """``$LOGOMESH_TASKS`` if set, else the ``tasks/`` folder of this checkout."""
    env = os.environ.get("LOGOMESH_TASKS")
    return Path(env) if env else Path(__file__).resolve().parents[2] / "tasks"


def _strings(table: dict[str, Any], key: str, where: Path) -> tuple[str, ...]:
    value = table.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise TaskError(f"{where}: '{key}' must be a list of strings")
    return tuple(value)


def _require_str(data: dict[str, Any], key: str, where: Path) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value.strip():
        raise TaskError(f"{where}: missing or empty string field '{key}'")
    return value.strip()


def _severity(value: Any, where: Path) -> Severity:
    for known in SEVERITY_ORDER:
        if value == known:
            return known
    raise TaskError(f"{where}: contract_severity must be one of {', '.join(SEVERITY_ORDER)}")


def load_task_dir(root: Path) -> TaskSpec:
    """Parse and validate one task folder."""
    spec_path = root / "task.toml"
    if not spec_path.is_file():
        raise TaskError(f"{root}: no task.toml (see tasks/README.md for the format)")
    try:
        data = tomllib.loads(spec_path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise TaskError(f"{spec_path}: not valid TOML: {exc}") from None
    task_id = _require_str(data, "id", spec_path)
    if not _ID.match(task_id) or task_id != root.name:
        raise TaskError(f"{spec_path}: id {task_id!r} must match the folder name and [a-z0-9-]+")
    raw_constraints = data.get("constraints", {})
    raw_attack = data.get("attack", {})
    if not isinstance(raw_constraints, dict) or not isinstance(raw_attack, dict):
        raise TaskError(f"{spec_path}: [constraints] and [attack] must be tables")
    required = _strings(raw_constraints, "required", spec_path)
    unknown = sorted(set(required) - _KNOWN_REQUIRED)
    if unknown:
        raise TaskError(f"{spec_path}: unknown required pattern(s) {unknown}; use {sorted(_KNOWN_REQUIRED)}")
    constraints = Constraints(
        banned_imports=_strings(raw_constraints, "banned_imports", spec_path),
        banned_calls=_strings(raw_constraints, "banned_calls", spec_path),
        required=required,
        forbid_loops=bool(raw_constraints.get("forbid_loops", False)),
        network=bool(raw_constraints.get("network", False)),
    )
    invariants = []
    for item in data.get("invariants", []):
        if not isinstance(item, dict):
            raise TaskError(f"{spec_path}: each [[invariants]] must be a table")
        invariants.append(Invariant(_require_str(item, "name", spec_path), str(item.get("description", ""))))
    hidden_dir = root / "hidden"
    hidden = {p.name: p.read_text(encoding="utf-8") for p in sorted(hidden_dir.glob("test_*.py"))}
    if not hidden:
        raise TaskError(f"{root}: no hidden tests (add hidden/test_*.py)")
    try:
        contract = parse_contract(data.get("contract"), spec_path)
    except ContractError as exc:
        raise TaskError(str(exc)) from None
    reference_path = root / "reference" / "solution.py"
    if not reference_path.is_file():
        raise TaskError(f"{root}: no reference/solution.py (hidden tests are judged against the reference's behaviour)")
    return TaskSpec(
        id=task_id,
        title=_require_str(data, "title", spec_path),
        description=_require_str(data, "description", spec_path),
        entry_point=_require_str(data, "entry_point", spec_path),
        root=root,
        constraints=constraints,
        attack_surface=_strings(raw_attack, "surface", spec_path),
        attack_targets=_strings(raw_attack, "targets", spec_path),
        invariants=tuple(invariants),
        hidden_tests=hidden,
        reference=reference_path.read_text(encoding="utf-8"),
        differential=bool(raw_attack.get("differential", True)),
        contract_severity=_severity(raw_attack.get("contract_severity", "medium"), spec_path),
        contract=contract,
    )


@cache
def _load_all(tasks_dir: Path) -> dict[str, TaskSpec]:
    if not tasks_dir.is_dir():
        raise TaskError(f"task library {tasks_dir} not found (set LOGOMESH_TASKS to its folder)")
    return {p.name: load_task_dir(p) for p in sorted(tasks_dir.iterdir()) if p.is_dir()}


def all_tasks(tasks_dir: Path | None = None) -> list[TaskSpec]:
    return list(_load_all((tasks_dir or default_tasks_dir()).resolve()).values())


def load_task(task_id: str, tasks_dir: Path | None = None) -> TaskSpec:
    """The task named ``task_id``; ``TaskError`` naming the known ids otherwise."""
    directory = (tasks_dir or default_tasks_dir()).resolve()
    if not _ID.match(task_id) or not (directory / task_id).is_dir():
        known = ", ".join(sorted(p.name for p in directory.iterdir() if p.is_dir())) if directory.is_dir() else ""
        raise TaskError(f"unknown task {task_id!r} (known: {known or 'none'}; see 'logomesh tasks list')")
    return _load_all(directory)[task_id]
