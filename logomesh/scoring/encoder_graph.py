"""The all-MiniLM-L6-v2 encoder written out as an ONNX graph, from the weights the package ships.

Why a graph and not NumPy: ONNX Runtime splits each product over output rows and
columns, never over the summed dimension, so an embedding has the same bytes on
one thread or four (a test checks it). NumPy's OpenBLAS gives different bytes on
different thread counts, which pinned the encoder to one thread; with the graph,
scoring uses the machine's cores and stays byte-identical. Its softmax and GELU
are also vectorised kernels, where NumPy's float32 ``exp`` ran at ~3-5 ns an element.

The graph is the BERT encoder layer by layer, as in the model's PyTorch code:
input ``x`` is the sum of word, position and token-type embeddings of one window
(``[n, hidden]``), output ``hidden`` the last layer's states (``[n, hidden]``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import onnx
from numpy.typing import NDArray
from onnx import TensorProto, helper, numpy_helper

F32 = NDArray[np.float32]
OPSET = 17  # LayerNormalization is a standard operator from 17 on
CONTRIB = "com.microsoft"  # ONNX Runtime's exact (erf) Gelu kernel


class _Builder:
    """Accumulates nodes and weights; each method returns the name of the value it makes."""

    def __init__(self) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.weights: list[onnx.TensorProto] = []

    def weight(self, name: str, value: NDArray[np.generic]) -> str:
        self.weights.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def op(self, kind: str, inputs: list[str], domain: str | None = None, **attrs: Any) -> str:
        name = f"{kind}_{len(self.nodes)}"
        self.nodes.append(helper.make_node(kind, inputs, [name], domain=domain, **attrs))
        return name

    def split(self, x: str, sizes: str, parts: int) -> list[str]:
        """``x`` cut along its last axis into ``parts`` values of the given sizes."""
        names = [f"Split_{len(self.nodes)}_{i}" for i in range(parts)]
        self.nodes.append(helper.make_node("Split", [x, sizes], names, axis=-1))
        return names

    def linear(self, x: str, prefix: str, weight: F32, bias: F32) -> str:
        """``x @ weight + bias``, ``weight`` already laid out as [in, out]."""
        product = self.op("MatMul", [x, self.weight(prefix + "_w", weight)])
        return self.op("Add", [product, self.weight(prefix + "_b", bias)])

    def layer_norm(self, x: str, prefix: str, weight: F32, bias: F32, eps: float) -> str:
        return self.op("LayerNormalization", [x, self.weight(prefix + "_w", weight), self.weight(prefix + "_b", bias)],
                       axis=-1, epsilon=eps)


def _attention(b: _Builder, x: str, w: Mapping[str, F32], p: str, heads: int, hidden: int) -> str:
    """Multi-head self-attention over one unpadded window (no mask needed), before the output projection."""
    a = p + "attention.self."
    size = hidden // heads
    names = [a + "query", a + "key", a + "value"]  # side by side: one product instead of three
    qkv = b.linear(x, p + "qkv", np.concatenate([w[n + ".weight"].T for n in names], axis=1),
                   np.concatenate([w[n + ".bias"] for n in names]))
    sizes = b.weight(p + "qkv_sizes", np.array([hidden] * 3, dtype=np.int64))
    q, k, v = b.split(qkv, sizes, 3)
    by_head = b.weight(p + "by_head", np.array([0, heads, size], dtype=np.int64))
    scale = b.weight(p + "scale", np.array(1.0 / math.sqrt(size), dtype=np.float32))
    qh = b.op("Transpose", [b.op("Mul", [b.op("Reshape", [q, by_head]), scale])], perm=[1, 0, 2])  # [h, n, s]
    kh = b.op("Transpose", [b.op("Reshape", [k, by_head])], perm=[1, 2, 0])  # [h, s, n]
    vh = b.op("Transpose", [b.op("Reshape", [v, by_head])], perm=[1, 0, 2])  # [h, n, s]
    probabilities = b.op("Softmax", [b.op("MatMul", [qh, kh])], axis=-1)
    context = b.op("Transpose", [b.op("MatMul", [probabilities, vh])], perm=[1, 0, 2])  # [n, h, s]
    return b.op("Reshape", [context, b.weight(p + "joined", np.array([0, hidden], dtype=np.int64))])


def _layer(b: _Builder, x: str, w: Mapping[str, F32], p: str, heads: int, hidden: int, eps: float) -> str:
    """One encoder layer: attention, add and norm; feed-forward with GELU, add and norm."""
    context = _attention(b, x, w, p, heads, hidden)
    projected = b.linear(context, p + "attention_out", w[p + "attention.output.dense.weight"].T,
                         w[p + "attention.output.dense.bias"])
    x = b.layer_norm(b.op("Add", [projected, x]), p + "ln1", w[p + "attention.output.LayerNorm.weight"],
                     w[p + "attention.output.LayerNorm.bias"], eps)
    inner = b.linear(x, p + "intermediate", w[p + "intermediate.dense.weight"].T, w[p + "intermediate.dense.bias"])
    activated = b.op("Gelu", [inner], domain=CONTRIB)
    output = b.linear(activated, p + "output", w[p + "output.dense.weight"].T, w[p + "output.dense.bias"])
    return b.layer_norm(b.op("Add", [output, x]), p + "ln2", w[p + "output.LayerNorm.weight"],
                        w[p + "output.LayerNorm.bias"], eps)


def encoder_graph(w: Mapping[str, F32], layers: int, heads: int, eps: float) -> bytes:
    """The serialized ONNX model of the encoder with the weights ``w`` (the safetensors names)."""
    hidden = int(w["embeddings.LayerNorm.weight"].shape[0])
    b = _Builder()
    x = b.layer_norm("x", "embeddings", w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], eps)
    for i in range(layers):
        x = _layer(b, x, w, f"encoder.layer.{i}.", heads, hidden, eps)
    b.nodes.append(helper.make_node("Identity", [x], ["hidden"]))
    graph = helper.make_graph(
        b.nodes, "all-MiniLM-L6-v2", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", hidden])],
        [helper.make_tensor_value_info("hidden", TensorProto.FLOAT, ["n", hidden])], b.weights,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET), helper.make_opsetid(CONTRIB, 1)])
    return bytes(model.SerializeToString())
