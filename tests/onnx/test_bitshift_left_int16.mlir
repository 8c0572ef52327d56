module {
  func.func @test_bitshift_left_int16(%arg0: !torch.vtensor<[3],si16>, %arg1: !torch.vtensor<[3],si16>) -> !torch.vtensor<[3],si16> attributes {torch.onnx_meta.ir_version = 14 : si64, torch.onnx_meta.opset_version = 28 : si64, torch.onnx_meta.producer_name = "backend-test", torch.onnx_meta.producer_version = ""} {
    %none = torch.constant.none
    %0 = torch.operator "onnx.BitShift"(%arg0, %arg1) {torch.onnx.direction = "LEFT"} : (!torch.vtensor<[3],si16>, !torch.vtensor<[3],si16>) -> !torch.vtensor<[3],si16> 
    return %0 : !torch.vtensor<[3],si16>
  }
}

