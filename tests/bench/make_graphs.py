#!/usr/bin/python3
"""Writes the onnxruntime-web peers of the benchmark into graphs/ (Debian's python3-onnx):

  msm.onnx, msm_causal.onnx        MatMul-Softmax-MatMul: q, k, v [H, S, d]; the causal one adds an
                                   additive mask input [S, S] (0 / -inf) to the scores
  mha_h{1,8}[_causal].onnx         com.microsoft MultiHeadAttention: q, k, v [1, S, H*d] (BSNH);
                                   causal through its `unidirectional` attribute
  attention[_causal].onnx          ONNX opset-23 Attention: q, k, v [1, H, S, d]; `is_causal`

S (and H where the op allows) are symbolic, so one file serves every shape. Run:
/usr/bin/python3 tests/bench/make_graphs.py
"""
import os

import onnx
from onnx import TensorProto, helper

D = 64
SCALE = 1.0 / D ** 0.5
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "graphs")


def save(model, name):
    # Debian's onnx (1.12) predates opset 23, so its checker cannot know Attention; the files are
    # written unchecked and onnxruntime-web (1.30) validates them when it loads them.
    model.ir_version = 8
    onnx.save(model, os.path.join(OUT, name))
    print("wrote", name)


def f32(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def msm(causal):
    shape = ["H", "S", D]
    nodes = [
        helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 2, 1]),
        helper.make_node("MatMul", ["q", "kt"], ["qk"]),
        helper.make_node("Mul", ["qk", "scale"], ["scores"]),
    ]
    inputs = [f32("q", shape), f32("k", shape), f32("v", shape)]
    if causal:
        nodes.append(helper.make_node("Add", ["scores", "mask"], ["masked"]))
        inputs.append(f32("mask", ["S", "S"]))
    nodes += [
        helper.make_node("Softmax", ["masked" if causal else "scores"], ["p"], axis=-1),
        helper.make_node("MatMul", ["p", "v"], ["out"]),
    ]
    scale = helper.make_tensor("scale", TensorProto.FLOAT, [], [SCALE])
    graph = helper.make_graph(nodes, "msm", inputs, [f32("out", shape)], [scale])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    save(model, "msm_causal.onnx" if causal else "msm.onnx")


def mha(heads, causal):
    shape = [1, "S", heads * D]
    node = helper.make_node("MultiHeadAttention", ["q", "k", "v"], ["out"], domain="com.microsoft",
                            num_heads=heads, scale=SCALE, unidirectional=int(causal))
    graph = helper.make_graph([node], "mha", [f32("q", shape), f32("k", shape), f32("v", shape)],
                              [f32("out", shape)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid("com.microsoft", 1)])
    save(model, f"mha_h{heads}{'_causal' if causal else ''}.onnx")


def attention23(causal):
    shape = [1, "H", "S", D]
    node = helper.make_node("Attention", ["q", "k", "v"], ["out"], is_causal=int(causal),
                            scale=SCALE)
    graph = helper.make_graph([node], "attention", [f32("q", shape), f32("k", shape),
                                                    f32("v", shape)], [f32("out", shape)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])
    save(model, f"attention{'_causal' if causal else ''}.onnx")


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    for causal in (False, True):
        msm(causal)
        attention23(causal)
        for heads in (1, 8):
            mha(heads, causal)
