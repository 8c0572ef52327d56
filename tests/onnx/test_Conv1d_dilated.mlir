module {
  func.func @"torch-jit-export"(%arg0: !torch.vtensor<[2,4,10],f32>) -> !torch.vtensor<[2,5,6],f32> attributes {torch.onnx_meta.ir_version = 3 : si64, torch.onnx_meta.opset_version = 17 : si64, torch.onnx_meta.producer_name = "pytorch", torch.onnx_meta.producer_version = "0.3"} {
    %0 = torch.operator "onnx.Constant"() {torch.onnx.value = dense_resource<_1> : tensor<5x4x3xf32>} : () -> !torch.vtensor<[5,4,3],f32> 
    %1 = torch.operator "onnx.Constant"() {torch.onnx.value = dense_resource<_2> : tensor<5xf32>} : () -> !torch.vtensor<[5],f32> 
    %none = torch.constant.none
    %2 = torch.operator "onnx.Conv"(%arg0, %0, %1) {torch.onnx.dilations = [2 : si64], torch.onnx.group = 1 : si64, torch.onnx.kernel_shape = [3 : si64], torch.onnx.pads = [0 : si64, 0 : si64], torch.onnx.strides = [1 : si64]} : (!torch.vtensor<[2,4,10],f32>, !torch.vtensor<[5,4,3],f32>, !torch.vtensor<[5],f32>) -> !torch.vtensor<[2,5,6],f32> 
    return %2 : !torch.vtensor<[2,5,6],f32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      _1: "0x0800000034638C3DA0645F3EC4691A3E88347B3DA0FB7A3E92C0EDBD6837CCBDC02187BEE4B3613E58E6813E686688BEAEE8273E820690BE5491C3BD923019BE00692E3D3037C3BD74AA6A3E70889C3D50655BBE6A1D513E40CDDD3B9C2E723E2F578CBEE2D8903EB823D43D304BA4BD044D4CBE66E8E0BDC5F842BE681C71BD86DA2A3E406C2DBD2032F33C7016933E90CDC63CD27C1D3E58D65E3EE823B53D529A53BE0C22A83DA0CF2E3C64FDB6BD50E84FBE34370E3E88D8773E726765BEFAC2923E296408BE644F113E40C7083C4612F6BD29E931BE3CC2013E07D309BED2CE77BE806E103B988900BDF08AE1BD90158D3C",
      _2: "0x080000001049B63D8A9E9BBDAD0914BE108438BE50F1713D"
    }
  }
#-}

