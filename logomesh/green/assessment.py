"""The AgentBeats assessment request the green agent accepts, parsed and validated.

``{"participants": {"purple": URL}, "config": {"task_id": ..., "seed": ...}}``
arrives as a data part or as JSON text (a ```json fence is fine). Optional
config keys: ``battle_id``, ``red`` (bool), ``red_budget_s``, ``sandbox``,
``protocol``. Every problem is an ``AssessmentError`` naming the field.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ledger import LedgerError
from ledger.dbom import check_battle_id
from logomesh.battle.request import SEED_LIMIT
from logomesh.purple.a2a_parse import texts_to_try
from logomesh.purple.agent_url import agent_url_problem
from logomesh.sandbox.choose import kinds
from logomesh.scoring.config import LlmConfig
from logomesh.tasks import TaskError, load_task

PROTOCOLS = ("0.3", "1.0")
_CONFIG_KEYS = {"task_id", "seed", "battle_id", "red", "red_budget_s", "sandbox", "protocol", "llm_base_url",
                "llm_model", "llm_timeout_s"}


class AssessmentError(ValueError):
    """The assessment request is malformed; the message names the field and the fix."""


@dataclass(frozen=True)
class Assessment:
    purple_url: str
    task_id: str
    seed: int = 0
    battle_id: str | None = None
    red: bool = True
    red_budget_s: float = 10.0
    sandbox: str = "auto"
    protocol: str | None = None
    review_llm: LlmConfig | None = None  # the bounded senior review (config.llm_base_url, llm_model, llm_timeout_s)


def _request_object(texts: Sequence[str], datas: Sequence[Any]) -> dict[str, Any]:
    for data in datas:
        if isinstance(data, dict):
            return data
    for text in texts:
        for attempt in texts_to_try(text):
            try:
                value = json.loads(attempt)
            except (json.JSONDecodeError, RecursionError):
                continue
            if isinstance(value, dict):
                return value
    raise AssessmentError('send {"participants": {"purple": URL}, "config": {"task_id": ...}} as JSON text or data')


def _purple_url(request: dict[str, Any]) -> str:
    participants = request.get("participants")
    if not isinstance(participants, dict):
        raise AssessmentError("'participants' must be an object mapping roles to agent URLs")
    url = participants.get("purple")
    if not isinstance(url, str):
        raise AssessmentError("'participants.purple' must be the http(s) URL of the purple agent")
    problem = agent_url_problem(url)
    if problem is not None:
        raise AssessmentError(f"'participants.purple' {problem}")
    return url


def _integer(value: Any, name: str) -> int:
    """A whole number; data parts carry every number as a float, so 42.0 counts."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise AssessmentError(f"'config.{name}' must be an integer")
    if not math.isfinite(value) or abs(value) >= SEED_LIMIT or value != int(value):
        raise AssessmentError(f"'config.{name}' must be an integer of magnitude below 2**53")
    return int(value)


def _choice(config: dict[str, Any], name: str, allowed: Sequence[str], default: str | None) -> str | None:
    value = config.get(name, default)
    if value is not None and value not in allowed:
        raise AssessmentError(f"'config.{name}' must be one of {', '.join(allowed)}")
    return value if value is None else str(value)


def _budget(config: dict[str, Any]) -> float:
    value = config.get("red_budget_s", 10.0)
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < float(value) <= 3600:
        raise AssessmentError("'config.red_budget_s' must be a number of seconds in (0, 3600]")
    return float(value)


def _review_llm(config: dict[str, Any]) -> LlmConfig | None:
    url, model = config.get("llm_base_url"), config.get("llm_model")
    if url is None and model is None:
        if "llm_timeout_s" in config:
            raise AssessmentError("'config.llm_timeout_s' goes with 'config.llm_base_url' and 'config.llm_model'")
        return None
    if not isinstance(url, str) or not url.startswith(("http://", "https://")) or not isinstance(model, str) \
            or not model.strip():
        raise AssessmentError("'config.llm_base_url' (http:// or https://) and 'config.llm_model' go together")
    timeout = config.get("llm_timeout_s", 30.0)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not 0 < float(timeout) <= 3600:
        raise AssessmentError("'config.llm_timeout_s' must be a number of seconds in (0, 3600]")
    return LlmConfig(base_url=url, model=model, timeout_s=float(timeout))


def parse_assessment(texts: Sequence[str], datas: Sequence[Any], tasks_dir: Path | None = None) -> Assessment:
    """The assessment in a message's text and data parts; the task must exist."""
    request = _request_object(texts, datas)
    purple_url = _purple_url(request)
    config = request.get("config", {})
    if not isinstance(config, dict):
        raise AssessmentError("'config' must be an object")
    unknown = sorted(set(config) - _CONFIG_KEYS)
    if unknown:
        raise AssessmentError(f"unknown config key(s) {', '.join(unknown)} (known: {', '.join(sorted(_CONFIG_KEYS))})")
    task_id = config.get("task_id")
    if not isinstance(task_id, str):
        raise AssessmentError("'config.task_id' must name a task (see 'logomesh tasks list')")
    try:
        load_task(task_id, tasks_dir)
    except TaskError as exc:
        raise AssessmentError(str(exc)) from None
    battle_id = config.get("battle_id")
    if battle_id is not None:
        if not isinstance(battle_id, str):
            raise AssessmentError("'config.battle_id' must be a string")
        try:  # the ledger's one rule, applied before the battle rather than after it
            check_battle_id(battle_id)
        except LedgerError as exc:
            raise AssessmentError(f"'config.battle_id': {exc}") from None
    red = config.get("red", True)
    if not isinstance(red, bool):
        raise AssessmentError("'config.red' must be true or false")
    return Assessment(
        purple_url=purple_url,
        task_id=task_id,
        seed=_integer(config.get("seed", 0), "seed"),
        battle_id=battle_id,
        red=red,
        red_budget_s=_budget(config),
        sandbox=_choice(config, "sandbox", kinds(), "auto") or "auto",
        protocol=_choice(config, "protocol", PROTOCOLS, None),
        review_llm=_review_llm(config),
    )
