module {
  func.func @"torch-jit-export"(%arg0: !torch.vtensor<[2,4,10],f32>) -> !torch.vtensor<[2,5,4],f32> attributes {torch.onnx_meta.ir_version = 3 : si64, torch.onnx_meta.opset_version = 17 : si64, torch.onnx_meta.producer_name = "pytorch", torch.onnx_meta.producer_version = "0.3"} {
    %0 = torch.operator "onnx.Constant"() {torch.onnx.value = dense_resource<_1> : tensor<5x4x3xf32>} : () -> !torch.vtensor<[5,4,3],f32> 
    %1 = torch.operator "onnx.Constant"() {torch.onnx.value = dense_resource<_2> : tensor<5xf32>} : () -> !torch.vtensor<[5],f32> 
    %none = torch.constant.none
    %2 = torch.operator "onnx.Conv"(%arg0, %0, %1) {torch.onnx.dilations = [1 : si64], torch.onnx.group = 1 : si64, torch.onnx.kernel_shape = [3 : si64], torch.onnx.pads = [0 : si64, 0 : si64], torch.onnx.strides = [2 : si64]} : (!torch.vtensor<[2,4,10],f32>, !torch.vtensor<[5,4,3],f32>, !torch.vtensor<[5],f32>) -> !torch.vtensor<[2,5,4],f32> 
    return %2 : !torch.vtensor<[2,5,4],f32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      _1: "0x08000000466A92BE02CB45BE643A043EC2EA26BE28EB1DBDB6F98C3EF4F5F83D6CA1E4BD52B3B1BD0EBD48BEEED61CBEE4032FBDC816E03DAC03743E8CD1B43D603157BC4430793E04A86BBED610FCBDA83D593D96D065BEF0DFB23C3CF8863D24A5163E0E055EBED482263EAEAA8ABE766A883E605E00BC40AD883CC093CC3DCC78FD3D7A43223E96504D3EFF997ABE380A79BEC8505D3E0025A53D811869BE0064553EA6D4CABD9C284DBD2CDF8B3E40BD2C3C7C591EBEDA450DBE350193BE0E1F92BEDCABBFBD48F6EABD92AB87BE40D5033C529A243E8C2BDA3D00BA7A3BDCC67D3ED8CC923E290C6EBE6CB5F43D541519BE",
      _2: "0x08000000D28C8E3EC8740F3EC801693E003DF2BC52D538BE"
    }
  }
#-}

