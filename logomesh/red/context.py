"""Everything an attack family may read about its target."""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache

from logomesh.red.scenarios import TaskRed, load_red
from logomesh.red.seeder import Features, read_features
from logomesh.tasks import TaskSpec


@dataclass(frozen=True)
class AttackContext:
    task: TaskSpec
    source: str
    features: Features
    red: TaskRed  # what the task itself says to the red agent (task.toml [red], red.py)
    seed: int = 0  # the battle's: the families draw their attack inputs from it, so no input is fixed and public

    @classmethod
    def build(cls, task: TaskSpec, source: str, seed: int = 0) -> AttackContext:
        return cls(task, source, with_interface(read_features(source), task), load_red(task), seed)

    def defines(self, name: str) -> bool:
        """Whether the artifact has a public class or function ``name``."""
        return name in self.features.classes or name in self.features.functions

    def declares(self, entry: str, surface: str) -> bool:
        """Whether the task lists ``surface`` in its [attack] surface and ``entry`` among its targets."""
        heads = {target.split(".")[0] for target in self.task.attack_targets}
        return surface in self.task.attack_surface and entry in heads

    def entries(self) -> list[str]:
        """Level 1 of the tree: the task's declared targets, then public names found in the code."""
        found: list[str] = []
        for target in self.task.attack_targets:
            head = target.split(".")[0]
            if head in self.features.functions or head in self.features.classes:
                found.append(head)
        found += list(self.features.classes) + list(self.features.functions)
        if self.task.entry_point in self.features.functions or self.task.entry_point in self.features.classes:
            found.insert(0, self.task.entry_point)
        return list(dict.fromkeys(found))


def with_interface(features: Features, task: TaskSpec) -> Features:
    """``features`` with every name the task declares (its entry point and attack targets) that the code's text
    does not show as a module-level ``def`` or ``class``, taken as the task's reference defines it.

    What the families attack is the task's interface, not what the code chooses to spell: code whose entry
    point was assigned (``RateLimiter = _Impl``), made under an ``if`` or by a decorator's call escaped every
    family before (the lockless limiter so spelled scored 0.828 against 0.764, no finding). A declared name
    the code does not have at run time fails the hidden suite and each probe's trials alike."""
    declared = dict.fromkeys([task.entry_point, *(t.split(".")[0] for t in task.attack_targets)])
    missing = [n for n in declared if n not in features.functions and n not in features.classes]
    if not missing or not task.reference:
        return features
    reference = _reference_features(task.reference)
    functions = features.functions + tuple(n for n in missing if n in reference.functions)
    classes = {**features.classes, **{n: reference.classes[n] for n in missing if n in reference.classes}}
    return replace(features, functions=functions, classes=classes)


@lru_cache(maxsize=64)
def _reference_features(source: str) -> Features:
    return read_features(source)
