module {
  func.func @"torch-jit-export"(%arg0: !torch.vtensor<[2,4,6,6],f32>) -> !torch.vtensor<[2,4,2,2],f32> attributes {torch.onnx_meta.ir_version = 3 : si64, torch.onnx_meta.opset_version = 17 : si64, torch.onnx_meta.producer_name = "pytorch", torch.onnx_meta.producer_version = "0.3"} {
    %0 = torch.operator "onnx.Constant"() {torch.onnx.value = dense_resource<_1> : tensor<4x1x3x3xf32>} : () -> !torch.vtensor<[4,1,3,3],f32> 
    %1 = torch.operator "onnx.Constant"() {torch.onnx.value = dense_resource<_2> : tensor<4xf32>} : () -> !torch.vtensor<[4],f32> 
    %none = torch.constant.none
    %2 = torch.operator "onnx.Conv"(%arg0, %0, %1) {torch.onnx.dilations = [1 : si64, 1 : si64], torch.onnx.group = 4 : si64, torch.onnx.kernel_shape = [3 : si64, 3 : si64], torch.onnx.pads = [0 : si64, 0 : si64, 0 : si64, 0 : si64], torch.onnx.strides = [2 : si64, 2 : si64]} : (!torch.vtensor<[2,4,6,6],f32>, !torch.vtensor<[4,1,3,3],f32>, !torch.vtensor<[4],f32>) -> !torch.vtensor<[2,4,2,2],f32> 
    return %2 : !torch.vtensor<[2,4,2,2],f32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      _1: "0x0800000016A152BD00886BBA1A80C83D7AD329BE00C0323CDE7D15BE407EA13C96FE80BDE8F8F7BD105382BD20BDA0BD2777113EA2E9DF3D805C793C5676A13D6E6122BEFAA0D93D40C8D9BCE340B4BD84B6773D7C6A5F3D23A61BBEB0749DBD5061C0BD4CAF2F3D0060C637D6D2F3BD8AE2C53DA61947BDB68CA7BD0B4089BD40CF0A3C1AA313BE50725BBCAA6409BE0C684A3D",
      _2: "0x08000000C4B303BDD0ED013DC2F9C93DF44B5D3D"
    }
  }
#-}

