module {
  func.func @"torch-jit-export"(%arg0: !torch.vtensor<[2,10,32,32],f32>) -> !torch.vtensor<[2,10,32,32],f32> attributes {torch.onnx_meta.ir_version = 3 : si64, torch.onnx_meta.opset_version = 17 : si64, torch.onnx_meta.producer_name = "pytorch", torch.onnx_meta.producer_version = "0.3"} {
    %0 = torch.operator "onnx.Constant"() {torch.onnx.value = dense_resource<_1> : tensor<10xf32>} : () -> !torch.vtensor<[10],f32> 
    %1 = torch.operator "onnx.Constant"() {torch.onnx.value = dense_resource<_2> : tensor<10xf32>} : () -> !torch.vtensor<[10],f32> 
    %none = torch.constant.none
    %2 = torch.operator "onnx.InstanceNormalization"(%arg0, %0, %1) {torch.onnx.epsilon = 9.99999971E-10 : f32} : (!torch.vtensor<[2,10,32,32],f32>, !torch.vtensor<[10],f32>, !torch.vtensor<[10],f32>) -> !torch.vtensor<[2,10,32,32],f32> 
    return %2 : !torch.vtensor<[2,10,32,32],f32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      _1: "0x08000000E065ED3CA6C5CD3E4C0A853E6AB8BB3EC0CC6E3D745D333F8029543DF2AFEF3E8F7E2C3F62B5A93E",
      _2: "0x0800000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    }
  }
#-}

