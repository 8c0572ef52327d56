module {
  func.func @"torch-jit-export"(%arg0: !torch.vtensor<[2,3,5,5,5],f32>) -> !torch.vtensor<[2,4,3,3,3],f32> attributes {torch.onnx_meta.ir_version = 3 : si64, torch.onnx_meta.opset_version = 17 : si64, torch.onnx_meta.producer_name = "pytorch", torch.onnx_meta.producer_version = "0.3"} {
    %0 = torch.operator "onnx.Constant"() {torch.onnx.value = dense_resource<_1> : tensor<4x3x2x2x2xf32>} : () -> !torch.vtensor<[4,3,2,2,2],f32> 
    %1 = torch.operator "onnx.Constant"() {torch.onnx.value = dense_resource<_2> : tensor<4xf32>} : () -> !torch.vtensor<[4],f32> 
    %none = torch.constant.none
    %2 = torch.operator "onnx.Conv"(%arg0, %0, %1) {torch.onnx.dilations = [2 : si64, 2 : si64, 2 : si64], torch.onnx.group = 1 : si64, torch.onnx.kernel_shape = [2 : si64, 2 : si64, 2 : si64], torch.onnx.pads = [0 : si64, 0 : si64, 0 : si64, 0 : si64, 0 : si64, 0 : si64], torch.onnx.strides = [1 : si64, 1 : si64, 1 : si64]} : (!torch.vtensor<[2,3,5,5,5],f32>, !torch.vtensor<[4,3,2,2,2],f32>, !torch.vtensor<[4],f32>) -> !torch.vtensor<[2,4,3,3,3],f32> 
    return %2 : !torch.vtensor<[2,4,3,3,3],f32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      _1: "0x08000000FCB031BE5AD902BEFA8306BEC041453EB85B113E8E7B0A3EC86292BC102608BEDE4919BEC4CF09BD611BCDBD5CF52B3DA007CC3DB0736F3D50F6383ECACE063E3C41073EEC3206BED6F5143E7EBF3D3E3830433D4CFAC63DD9AC07BEC93804BE7790DDBDF90BF4BD636144BE6E313E3E7BF01CBE8F6CECBDC8D875BDBE94A1BDC019193D04B7193EF097313D38A8853DA22B203E0EF4393E42932FBE90BF513DC89D3BBDA436813D17B713BE7EF20C3E94D7133D707E313D1896C5BD9C73933D26AF3F3E50B2A0BC4A359FBDECA83F3E985C163ECC5B853DC2CE00BEDEEC033E63F017BE9422BC3DD82B053E80B1CC3B9871193DF040D1BDF0B281BCF8F426BD301DD5BCE78702BE6E6B07BEF0768F3D4E702BBE1FFFC3BD8014E5BB4055663D60F33B3D140095BDEEA5CDBD64522C3E10D104BE359BB3BD2C53853D0C55043E88C344BDD6FDB8BD4C33FE3D14F3463ED49B47BE5B6A16BEC8DA4FBDD983C1BD6C48B83D310509BEF06040BC306CBABDA30AD7BD6071763D5CAB093EECBED73D",
      _2: "0x08000000D26497BD1420263E40DBA73CC72FB7BD"
    }
  }
#-}

