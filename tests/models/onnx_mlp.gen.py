# Builds a small ONNX model (Gemm -> Relu -> Gemm -> Softmax, opset 17)
# with onnx.helper and imports it with iree-import-onnx into
# onnx_mlp.mlir. Run by scripts/make-model-corpus with the peer's python.
import os
import subprocess

import onnx
from onnx import TensorProto, helper

w1 = [((i * 13 + 5) % 17 - 8) / 8.0 for i in range(4 * 6)]
b1 = [((i * 3) % 5 - 2) / 10.0 for i in range(6)]
w2 = [((i * 7 + 1) % 11 - 5) / 6.0 for i in range(6 * 3)]
b2 = [0.25, -0.5, 0.125]
graph = helper.make_graph(
    [
        helper.make_node("Gemm", ["x", "w1", "b1"], ["h"]),
        helper.make_node("Relu", ["h"], ["hr"]),
        helper.make_node("Gemm", ["hr", "w2", "b2"], ["logits"]),
        helper.make_node("Softmax", ["logits"], ["y"], axis=1),
    ],
    "onnx_mlp",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
    initializer=[
        helper.make_tensor("w1", TensorProto.FLOAT, [4, 6], w1),
        helper.make_tensor("b1", TensorProto.FLOAT, [6], b1),
        helper.make_tensor("w2", TensorProto.FLOAT, [6, 3], w2),
        helper.make_tensor("b2", TensorProto.FLOAT, [3], b2),
    ],
)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
onnx.checker.check_model(model)
onnx.save(model, "onnx_mlp.onnx")
peer = os.environ["IREE_PEER_BIN"]
subprocess.run(
    [os.path.join(peer, "iree-import-onnx"), "onnx_mlp.onnx", "-o", "onnx_mlp.mlir"],
    check=True,
)
os.remove("onnx_mlp.onnx")
