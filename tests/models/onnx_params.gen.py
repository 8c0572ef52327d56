# Builds a small ONNX model (MatMul -> Add -> Relu -> MatMul -> Add,
# opset 17) and imports it with iree-import-onnx --externalize-params
# --num-elements-threshold=8: the weights w1 (4x5) and w2 (5x2) become the
# parameters model::w1 and model::w2 in in--onnx_params.irpa (an input file
# of the runs), the biases (5 and 2 elements) stay constants in
# onnx_params.mlir. Run by scripts/make-model-corpus with the peer's
# python.
import os
import subprocess

import onnx
from onnx import TensorProto, helper

w1 = [((i * 11 + 3) % 13 - 6) / 4.0 for i in range(4 * 5)]
b1 = [((i * 5) % 7 - 3) / 8.0 for i in range(5)]
w2 = [((i * 3 + 2) % 9 - 4) / 2.0 for i in range(5 * 2)]
b2 = [0.5, -0.25]
graph = helper.make_graph(
    [
        helper.make_node("MatMul", ["x", "w1"], ["xw"]),
        helper.make_node("Add", ["xw", "b1"], ["h"]),
        helper.make_node("Relu", ["h"], ["hr"]),
        helper.make_node("MatMul", ["hr", "w2"], ["hw"]),
        helper.make_node("Add", ["hw", "b2"], ["y"]),
    ],
    "onnx_params",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 2])],
    initializer=[
        helper.make_tensor("w1", TensorProto.FLOAT, [4, 5], w1),
        helper.make_tensor("b1", TensorProto.FLOAT, [5], b1),
        helper.make_tensor("w2", TensorProto.FLOAT, [5, 2], w2),
        helper.make_tensor("b2", TensorProto.FLOAT, [2], b2),
    ],
)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
onnx.checker.check_model(model)
onnx.save(model, "onnx_params.onnx")
peer = os.environ["IREE_PEER_BIN"]
subprocess.run(
    [
        os.path.join(peer, "iree-import-onnx"),
        "onnx_params.onnx",
        "--externalize-params",
        "--num-elements-threshold=8",
        "--save-params-to=in--onnx_params.irpa",
        "-o",
        "onnx_params.mlir",
    ],
    check=True,
)
os.remove("onnx_params.onnx")
