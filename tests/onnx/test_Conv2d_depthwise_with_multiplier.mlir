module {
  func.func @"torch-jit-export"(%arg0: !torch.vtensor<[2,4,6,6],f32>) -> !torch.vtensor<[2,8,4,4],f32> attributes {torch.onnx_meta.ir_version = 3 : si64, torch.onnx_meta.opset_version = 17 : si64, torch.onnx_meta.producer_name = "pytorch", torch.onnx_meta.producer_version = "0.3"} {
    %0 = torch.operator "onnx.Constant"() {torch.onnx.value = dense_resource<_1> : tensor<8x1x3x3xf32>} : () -> !torch.vtensor<[8,1,3,3],f32> 
    %1 = torch.operator "onnx.Constant"() {torch.onnx.value = dense_resource<_2> : tensor<8xf32>} : () -> !torch.vtensor<[8],f32> 
    %none = torch.constant.none
    %2 = torch.operator "onnx.Conv"(%arg0, %0, %1) {torch.onnx.dilations = [1 : si64, 1 : si64], torch.onnx.group = 4 : si64, torch.onnx.kernel_shape = [3 : si64, 3 : si64], torch.onnx.pads = [0 : si64, 0 : si64, 0 : si64, 0 : si64], torch.onnx.strides = [1 : si64, 1 : si64]} : (!torch.vtensor<[2,4,6,6],f32>, !torch.vtensor<[8,1,3,3],f32>, !torch.vtensor<[8],f32>) -> !torch.vtensor<[2,8,4,4],f32> 
    return %2 : !torch.vtensor<[2,8,4,4],f32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      _1: "0x08000000494D173EFB3297BD7964223E51300E3EE078633D59801A3E1098DABD26B31EBEC66117BEA0E8463D9A28C53DD9F7083E1613B4BDF6D1ACBD6C7E7D3DABC7C7BDCBD0FFBD384AAFBC98C6C8BC00C9223A7C8C2DBDFAD2F53D74970BBE2B9AE6BD80EBA13D10F06D3DC6A8F03D505415BCB08B3DBC5D54093E9C23243DEBF2A4BDE663E93DACCE493D18D2B2BD761809BE3BEC103E74463E3D4667C3BD10970FBCF03658BC2360D4BDBC22303D2E6AC5BDEB9CE2BD2A601DBE6A8AB03DC5660B3E440306BEE074F6BD7E68D2BDCA6FD63D5886F2BC2895B6BC800ADEBC90C5743D133D0EBECAF20ABEA084363DB88521BE4018183C70E2B5BD0261E93D2AA2B33DA01E523D5CB665BD2664D03DBC1A7D3D08ECCDBC0A92EE3D0139203E60778A3D",
      _2: "0x080000006FB21EBEE969213E2D610F3E00A16CBC96BC39BDA5010A3EC840A23D4CE21B3D"
    }
  }
#-}

