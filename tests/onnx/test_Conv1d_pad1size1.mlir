module {
  func.func @"torch-jit-export"(%arg0: !torch.vtensor<[1,4,1],f32>) -> !torch.vtensor<[1,4,1],f32> attributes {torch.onnx_meta.ir_version = 3 : si64, torch.onnx_meta.opset_version = 17 : si64, torch.onnx_meta.producer_name = "pytorch", torch.onnx_meta.producer_version = "0.3"} {
    %0 = torch.operator "onnx.Constant"() {torch.onnx.value = dense_resource<_1> : tensor<4x4x3xf32>} : () -> !torch.vtensor<[4,4,3],f32> 
    %1 = torch.operator "onnx.Constant"() {torch.onnx.value = dense_resource<_2> : tensor<4xf32>} : () -> !torch.vtensor<[4],f32> 
    %none = torch.constant.none
    %2 = torch.operator "onnx.Conv"(%arg0, %0, %1) {torch.onnx.dilations = [1 : si64], torch.onnx.group = 1 : si64, torch.onnx.kernel_shape = [3 : si64], torch.onnx.pads = [1 : si64, 1 : si64], torch.onnx.strides = [1 : si64]} : (!torch.vtensor<[1,4,1],f32>, !torch.vtensor<[4,4,3],f32>, !torch.vtensor<[4],f32>) -> !torch.vtensor<[1,4,1],f32> 
    return %2 : !torch.vtensor<[1,4,1],f32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      _1: "0x08000000FA0F463E2CD0C8BD8DF30ABED2FB7ABE3AB6493EA0C9503CBC21EE3D18BFA2BD623D4EBEF003D3BC8CE7803EA08C913E7D863FBE2F394ABEE03227BDAF118CBE0A7F923EF037AE3CB0A3B2BCAEA3B0BD1023253D7831683D68B1543DA89A293D22B91C3E3CD4FA3D9C1A1EBE165212BE1FA71FBE704D48BD9A14153E928F263E80DB973B40A0EABC784EC73D184718BD9AB6253E3413363EE4575E3EDB5921BE73297BBEBEED5BBEA0D5A03DCC82963D365CE0BDE861623EC0F9853DB221883E",
      _2: "0x0800000048E1243EB4C6753E21211ABE882730BD"
    }
  }
#-}

