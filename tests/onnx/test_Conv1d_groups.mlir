module {
  func.func @"torch-jit-export"(%arg0: !torch.vtensor<[2,4,6],f32>) -> !torch.vtensor<[2,6,4],f32> attributes {torch.onnx_meta.ir_version = 3 : si64, torch.onnx_meta.opset_version = 17 : si64, torch.onnx_meta.producer_name = "pytorch", torch.onnx_meta.producer_version = "0.3"} {
    %0 = torch.operator "onnx.Constant"() {torch.onnx.value = dense_resource<_1> : tensor<6x2x3xf32>} : () -> !torch.vtensor<[6,2,3],f32> 
    %1 = torch.operator "onnx.Constant"() {torch.onnx.value = dense_resource<_2> : tensor<6xf32>} : () -> !torch.vtensor<[6],f32> 
    %none = torch.constant.none
    %2 = torch.operator "onnx.Conv"(%arg0, %0, %1) {torch.onnx.dilations = [1 : si64], torch.onnx.group = 2 : si64, torch.onnx.kernel_shape = [3 : si64], torch.onnx.pads = [0 : si64, 0 : si64], torch.onnx.strides = [1 : si64]} : (!torch.vtensor<[2,4,6],f32>, !torch.vtensor<[6,2,3],f32>, !torch.vtensor<[6],f32>) -> !torch.vtensor<[2,6,4],f32> 
    return %2 : !torch.vtensor<[2,6,4],f32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      _1: "0x08000000209551BD8E96A7BD9CE9853ED88454BE047B4FBE5809A83D787E1A3E304A103E9011D3BC82C9863E6808333D5895F13D0008303E7448B13DE443DA3DC8B251BD725520BE77FB90BE9D5989BE5F1202BEEC02D03D82974C3E78AD4A3D7E9E8D3E2AF268BEB0B2F0BCA495F73DEE7B263E403BC23C8A748ABD40AB90BED85A5D3E4E1F243E18AF0F3EA09E17BCFA798BBD",
      _2: "0x080000008835233DA01A2E3EE8DE62BD187E50BE00138C3EF7C100BE"
    }
  }
#-}

