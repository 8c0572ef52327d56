module {
  func.func @Sequence(%arg0: !torch.vtensor<[?],f32>, %arg1: !torch.vtensor<[3],si64>) -> !torch.vtensor<[],si64> attributes {torch.onnx_meta.ir_version = 7 : si64, torch.onnx_meta.opset_version = 17 : si64, torch.onnx_meta.producer_name = "backend-test", torch.onnx_meta.producer_version = ""} {
    %none = torch.constant.none
    %0 = torch.operator "onnx.SplitToSequence"(%arg0, %arg1) : (!torch.vtensor<[?],f32>, !torch.vtensor<[3],si64>) -> !torch.list<vtensor<[?],f32>> 
    %1 = torch.operator "onnx.SequenceLength"(%0) : (!torch.list<vtensor<[?],f32>>) -> !torch.vtensor<[],si64> 
    return %1 : !torch.vtensor<[],si64>
  }
}

