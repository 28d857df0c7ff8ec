"""Everything an attack family may read about its target."""

from __future__ import annotations

from dataclasses import dataclass

from logomesh.red.seeder import Features, read_features
from logomesh.tasks import TaskSpec


@dataclass(frozen=True)
class AttackContext:
    task: TaskSpec
    source: str
    features: Features

    @classmethod
    def build(cls, task: TaskSpec, source: str) -> AttackContext:
        return cls(task, source, read_features(source))

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
