"""Everything an attack family may read about its target."""

from __future__ import annotations

from dataclasses import dataclass

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
        return cls(task, source, read_features(source), load_red(task), seed)

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
