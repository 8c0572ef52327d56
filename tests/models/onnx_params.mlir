module {
  util.global private @w1 = #stream.parameter.named<"model"::"w1"> : tensor<4x5xf32>
  util.global private @w2 = #stream.parameter.named<"model"::"w2"> : tensor<5x2xf32>
  func.func @onnx_params(%arg0: !torch.vtensor<[3,4],f32>) -> !torch.vtensor<[3,2],f32> attributes {torch.onnx_meta.ir_version = 14 : si64, torch.onnx_meta.opset_version = 17 : si64, torch.onnx_meta.producer_name = "", torch.onnx_meta.producer_version = ""} {
    %w1 = util.global.load @w1 : tensor<4x5xf32>
    %0 = torch_c.from_builtin_tensor %w1 : tensor<4x5xf32> -> !torch.vtensor<[4,5],f32>
    %1 = torch.operator "onnx.Constant"() {torch.onnx.value = dense<[-3.750000e-01, 2.500000e-01, 0.000000e+00, -2.500000e-01, 3.750000e-01]> : tensor<5xf32>} : () -> !torch.vtensor<[5],f32> 
    %w2 = util.global.load @w2 : tensor<5x2xf32>
    %2 = torch_c.from_builtin_tensor %w2 : tensor<5x2xf32> -> !torch.vtensor<[5,2],f32>
    %3 = torch.operator "onnx.Constant"() {torch.onnx.value = dense<[5.000000e-01, -2.500000e-01]> : tensor<2xf32>} : () -> !torch.vtensor<[2],f32> 
    %none = torch.constant.none
    %4 = torch.operator "onnx.MatMul"(%arg0, %0) : (!torch.vtensor<[3,4],f32>, !torch.vtensor<[4,5],f32>) -> !torch.vtensor<[3,5],f32> 
    %5 = torch.operator "onnx.Add"(%4, %1) : (!torch.vtensor<[3,5],f32>, !torch.vtensor<[5],f32>) -> !torch.vtensor<[3,5],f32> 
    %6 = torch.operator "onnx.Relu"(%5) : (!torch.vtensor<[3,5],f32>) -> !torch.vtensor<[3,5],f32> 
    %7 = torch.operator "onnx.MatMul"(%6, %2) : (!torch.vtensor<[3,5],f32>, !torch.vtensor<[5,2],f32>) -> !torch.vtensor<[3,2],f32> 
    %8 = torch.operator "onnx.Add"(%7, %3) : (!torch.vtensor<[3,2],f32>, !torch.vtensor<[2],f32>) -> !torch.vtensor<[3,2],f32> 
    return %8 : !torch.vtensor<[3,2],f32>
  }
}

