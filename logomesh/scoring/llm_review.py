"""The bounded LLM "senior review": it may nudge R, A and L, never T, by at most ±bound each.

Any OpenAI-compatible ``/chat/completions`` endpoint, temperature 0, fixed
seed. The reply must be a JSON object ``{"rationale": x, "architecture": y,
"logic": z}`` of adjustments. Each adjustment is clamped to ±``bound`` and each
adjusted value to [0, 1], so whatever the model says, the CIS before penalties
moves by at most ``(w_R + w_A + w_L) × bound`` (0.075 by default). An HTTP
error or a timeout gives zero adjustments, status ``fallback: <why>``; a reply
that is not the requested format (not one JSON object of three finite numbers,
a value outside ±bound, the measured scores echoed back) gives zero
adjustments, status ``malformed: <why>``. Nothing malformed is clamped into
an adjustment.
With no LLM configured (the default) nothing is called and the adjustments are
zero. The API key is read from the environment at call time and never stored.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from logomesh.scoring.config import LlmConfig

ADJUSTABLE = ("rationale", "architecture", "logic")


@dataclass(frozen=True)
class Review:
    adjustments: dict[str, float]  # clamped, per adjustable component
    status: str  # "disabled", "ok", "malformed: <why>" (a reply not in the format) or "fallback: <why>" (no reply)
    model: str = ""
    reply_sha256: str = ""
    requested: dict[str, float] = field(default_factory=dict)  # what the model asked for, before clamping

    def to_json(self, digits: int) -> dict[str, Any]:
        out: dict[str, Any] = {k: round(v, digits) for k, v in sorted(self.adjustments.items())}
        out["status"] = self.status
        if self.model:
            out["model"] = self.model
            out["reply_sha256"] = self.reply_sha256
        if self.requested:
            out["requested"] = {k: round(v, digits) for k, v in sorted(self.requested.items())}
        return out


def zero() -> dict[str, float]:
    return dict.fromkeys(ADJUSTABLE, 0.0)


def clamp_adjustments(requested: Mapping[str, float], bound: float) -> dict[str, float]:
    """Each adjustment limited to [-bound, bound]; anything not adjustable is dropped."""
    return {k: max(-bound, min(bound, float(requested.get(k, 0.0)))) for k in ADJUSTABLE}


def apply(anchors: Mapping[str, float], adjustments: Mapping[str, float], bound: float) -> dict[str, float]:
    """Adjusted values: anchor + clamped adjustment, clamped to [0, 1]; other components untouched."""
    clamped = clamp_adjustments(adjustments, bound)
    return {k: min(1.0, max(0.0, v + clamped.get(k, 0.0))) for k, v in anchors.items()}


def parse_reply(content: str, anchors: Mapping[str, float] | None = None, bound: float | None = None
                ) -> dict[str, float]:
    """The adjustments in the model's reply; ``ValueError`` with a one-line reason if it is not that format.

    The format is one JSON object (a Markdown ```json fence around it is fine) with a finite number for each
    adjustable component. With ``bound``, a value outside ±bound is not an adjustment (a model that echoes
    the measured scores asks for +0.71); with ``anchors``, a reply that repeats the measured scores is an
    echo, whatever their size. Either is malformed, never clamped into an adjustment.
    """
    text = content.strip()
    if text.startswith("```"):
        text = text.strip("`").removeprefix("json").strip()
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"reply is not JSON ({exc.msg})") from None
    if not isinstance(data, dict):
        raise ValueError("reply is not a JSON object")
    out: dict[str, float] = {}
    for key in ADJUSTABLE:
        value = data.get(key)
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise ValueError(f"reply field {key!r} is missing or not a finite number")
        out[key] = float(value)
    if anchors is not None and any(out.values()) and all(
            abs(out[k] - round(anchors[k], 4)) < 5e-5 for k in ADJUSTABLE):
        raise ValueError("reply repeats the measured scores instead of adjusting them")
    if bound is not None:
        outside = [k for k in ADJUSTABLE if abs(out[k]) > bound + 1e-12]
        if outside:
            raise ValueError(f"reply field(s) {', '.join(outside)} outside the adjustment range ±{bound:g} "
                             f"({', '.join(f'{out[k]:g}' for k in outside)})")
    return out


def _prompt(task_description: str, source: str, anchors: Mapping[str, float], bound: float) -> list[dict[str, str]]:
    system = (
        "You are a senior code reviewer. Given a task, the submitted code and three measured scores in [0,1], "
        f"reply with ONLY a JSON object {{\"rationale\": r, \"architecture\": a, \"logic\": l}} where each value "
        f"is an adjustment between -{bound} and {bound} to the corresponding score. Use 0 when you agree."
    )
    scores = json.dumps({k: round(anchors[k], 4) for k in ADJUSTABLE}, sort_keys=True)
    user = f"TASK:\n{task_description}\n\nCODE:\n{source}\n\nMEASURED SCORES:\n{scores}"
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def review(
    llm: LlmConfig | None, task_description: str, source: str, anchors: Mapping[str, float], bound: float
) -> Review:
    """Ask the configured LLM for adjustments; never raises."""
    if llm is None:
        return Review(zero(), "disabled")
    import httpx

    headers = {"Content-Type": "application/json"}
    key = os.environ.get(llm.api_key_env, "")
    if key:
        headers["Authorization"] = f"Bearer {key}"
    body: dict[str, Any] = {
        "model": llm.model,
        "messages": _prompt(task_description, source, anchors, bound),
        "temperature": llm.temperature,
        "seed": llm.seed,
    }
    if llm.max_tokens is not None:
        body["max_tokens"] = llm.max_tokens
    url = llm.base_url.rstrip("/") + "/chat/completions"
    try:
        response = httpx.post(url, json=body, headers=headers, timeout=llm.timeout_s)
        response.raise_for_status()
        raw = response.content
        content = response.json()["choices"][0]["message"]["content"]
        if not isinstance(content, str):
            raise ValueError("reply content is not a string")
    except (httpx.HTTPError, ValueError, KeyError, IndexError, TypeError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return Review(zero(), f"fallback: {type(exc).__name__}: {reason}", model=llm.model)
    digest = hashlib.sha256(raw).hexdigest()
    try:
        requested = parse_reply(content, anchors, bound)
    except ValueError as exc:
        return Review(zero(), f"malformed: {exc}", model=llm.model, reply_sha256=digest)
    return Review(clamp_adjustments(requested, bound), "ok", llm.model, digest, requested)
