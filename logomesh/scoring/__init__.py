"""The Contextual Integrity Score (see docs/scoring.md for the definition and its reasons)."""

from __future__ import annotations

from logomesh.scoring.cis import ScoreCard, score_submission
from logomesh.scoring.config import DEFAULT_CONFIG, LlmConfig, ScoringConfig
from logomesh.scoring.testing import MutantReport, run_mutants

__all__ = ["DEFAULT_CONFIG", "LlmConfig", "MutantReport", "ScoreCard", "ScoringConfig", "run_mutants",
           "score_submission"]
