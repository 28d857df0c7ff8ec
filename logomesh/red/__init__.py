"""The red agent: a deterministic MCTS over attacks that run in the sandbox, reporting only reproduced findings."""

from logomesh.red.agent import STRATEGIES, RedReport, Strategy, attack, run_attack

__all__ = ["STRATEGIES", "RedReport", "Strategy", "attack", "run_attack"]
