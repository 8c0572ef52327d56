module {
  func.func @"torch-jit-export"(%arg0: !torch.vtensor<[2,4,6,6],f32>) -> !torch.vtensor<[2,4,6,6],f32> attributes {torch.onnx_meta.ir_version = 3 : si64, torch.onnx_meta.opset_version = 17 : si64, torch.onnx_meta.producer_name = "pytorch", torch.onnx_meta.producer_version = "0.3"} {
    %0 = torch.operator "onnx.Constant"() {torch.onnx.value = dense_resource<_1> : tensor<4x1x3x3xf32>} : () -> !torch.vtensor<[4,1,3,3],f32> 
    %1 = torch.operator "onnx.Constant"() {torch.onnx.value = dense_resource<_2> : tensor<4xf32>} : () -> !torch.vtensor<[4],f32> 
    %none = torch.constant.none
    %2 = torch.operator "onnx.Conv"(%arg0, %0, %1) {torch.onnx.dilations = [1 : si64, 1 : si64], torch.onnx.group = 4 : si64, torch.onnx.kernel_shape = [3 : si64, 3 : si64], torch.onnx.pads = [1 : si64, 1 : si64, 1 : si64, 1 : si64], torch.onnx.strides = [1 : si64, 1 : si64]} : (!torch.vtensor<[2,4,6,6],f32>, !torch.vtensor<[4,1,3,3],f32>, !torch.vtensor<[4],f32>) -> !torch.vtensor<[2,4,6,6],f32> 
    return %2 : !torch.vtensor<[2,4,6,6],f32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      _1: "0x0800000018F5D6BC8EEF9A3DF07303BD1B5BB2BD0ADAC43D0F67093E25B9233E544E1D3DD2DE06BEAE1B8DBD1130103E7C4018BDF8AFFD3CE017D83C5E37B8BD5E55A03DEE5780BDB22ADC3D40B4A53CC65532BD0005E0BD666610BE4CFB0ABDEE9CF83D1883E83CDDF80D3E967378BD985B85BD063E75BD70DA03BC6254963D6CBB053D00124D3CC7CA073EA812B6BC73B6E4BD",
      _2: "0x08000000DA4A15BE163799BDAC4471BD2307F5BD"
    }
  }
#-}

