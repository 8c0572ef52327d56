module {
  func.func @test_l1normalization_axis_0(%arg0: !torch.vtensor<[2],f32>) -> !torch.vtensor<[2],f32> attributes {torch.onnx_meta.ir_version = 10 : si64, torch.onnx_meta.opset_version = 22 : si64, torch.onnx_meta.producer_name = "backend-test", torch.onnx_meta.producer_version = ""} {
    %none = torch.constant.none
    %0 = torch.operator "onnx.LpNormalization"(%arg0) {torch.onnx.axis = 0 : si64, torch.onnx.p = 1 : si64} : (!torch.vtensor<[2],f32>) -> !torch.vtensor<[2],f32> 
    return %0 : !torch.vtensor<[2],f32>
  }
}

