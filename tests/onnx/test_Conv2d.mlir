module {
  func.func @"torch-jit-export"(%arg0: !torch.vtensor<[2,3,7,5],f32>) -> !torch.vtensor<[2,4,5,4],f32> attributes {torch.onnx_meta.ir_version = 3 : si64, torch.onnx_meta.opset_version = 17 : si64, torch.onnx_meta.producer_name = "pytorch", torch.onnx_meta.producer_version = "0.3"} {
    %0 = torch.operator "onnx.Constant"() {torch.onnx.value = dense_resource<_1> : tensor<4x3x3x2xf32>} : () -> !torch.vtensor<[4,3,3,2],f32> 
    %1 = torch.operator "onnx.Constant"() {torch.onnx.value = dense_resource<_2> : tensor<4xf32>} : () -> !torch.vtensor<[4],f32> 
    %none = torch.constant.none
    %2 = torch.operator "onnx.Conv"(%arg0, %0, %1) {torch.onnx.dilations = [1 : si64, 1 : si64], torch.onnx.group = 1 : si64, torch.onnx.kernel_shape = [3 : si64, 2 : si64], torch.onnx.pads = [0 : si64, 0 : si64, 0 : si64, 0 : si64], torch.onnx.strides = [1 : si64, 1 : si64]} : (!torch.vtensor<[2,3,7,5],f32>, !torch.vtensor<[4,3,3,2],f32>, !torch.vtensor<[4],f32>) -> !torch.vtensor<[2,4,5,4],f32> 
    return %2 : !torch.vtensor<[2,4,5,4],f32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      _1: "0x080000001B5F12BEF832AEBD80FAF8BAB976073E89A537BEB0F55CBD00C42839A0D4EABCD201B13D2E2FDF3DD0DC45BE26F6B7BDDF2B4D3E400EF43BEFB337BE376B6DBECE061EBECC2F47BE220E12BEA2EC0FBEA897E43C5AA203BE6101043E406BEFBD7CCA6ABE3C1C2FBE6C27173D07C64B3E55191B3E1CAE2BBEF45B43BD73C20A3E361E8FBD48E715BE91F91DBE808858BB175D523EC99C1B3EAB83683E143E9ABDC35D29BE38A594BD532C483E905BD1BC1272B03D6CA6793DA04003BDDC0C34BEA6D0A93DA80EA8BD707CC7BCB99C593E7E59B5BD9395F6BDC0AD2BBDF4C8B4BD60372CBC4CA61DBD88BF51BE5EDB47BEC2B2E03D44AC78BD55921C3E60A2183CE776543E1A7AE63D4FF84A3E81662CBE549B34BE2DED2E3EF594323EB0DED3BD",
      _2: "0x08000000A4BB32BE0E67BF3DCCED3F3D09D43A3E"
    }
  }
#-}

