module {
  func.func @"torch-jit-export"(%arg0: !torch.vtensor<[2,4,10],f32>) -> !torch.vtensor<[2,5,8],f32> attributes {torch.onnx_meta.ir_version = 3 : si64, torch.onnx_meta.opset_version = 17 : si64, torch.onnx_meta.producer_name = "pytorch", torch.onnx_meta.producer_version = "0.3"} {
    %0 = torch.operator "onnx.Constant"() {torch.onnx.value = dense_resource<_1> : tensor<5x4x3xf32>} : () -> !torch.vtensor<[5,4,3],f32> 
    %1 = torch.operator "onnx.Constant"() {torch.onnx.value = dense_resource<_2> : tensor<5xf32>} : () -> !torch.vtensor<[5],f32> 
    %none = torch.constant.none
    %2 = torch.operator "onnx.Conv"(%arg0, %0, %1) {torch.onnx.dilations = [1 : si64], torch.onnx.group = 1 : si64, torch.onnx.kernel_shape = [3 : si64], torch.onnx.pads = [0 : si64, 0 : si64], torch.onnx.strides = [1 : si64]} : (!torch.vtensor<[2,4,10],f32>, !torch.vtensor<[5,4,3],f32>, !torch.vtensor<[5],f32>) -> !torch.vtensor<[2,5,8],f32> 
    return %2 : !torch.vtensor<[2,5,8],f32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      _1: "0x08000000B0A9A0BCDE6860BE5ADF2E3EBC47F23DB697AEBD2026D33CB82757BE20F33F3D4025CE3B64B70D3E60144F3DAA4F3BBED0C8C83DC66F013E2B428EBED2ADB6BDCE78063EE8D22F3D8A5D8FBEA4C33EBDA0D588BCA04736BCFE0253BEB8200F3DA23D0ABE9011933EC04F8CBEF845B93DF08EB9BD1062E5BC36C465BE302CD5BCB8024D3E08CA0A3DD2DC8F3E3E81293E08110E3DC00C453EEA5F8D3E42EC34BEA0A05E3EEE4552BED4BC49BEC0335A3DE4F8333E00FC84BB6ED1DEBD6EBD04BED849DBBDD0688E3E4AE7483EF29E65BE7053B0BC68525BBDB420A43D9224073E54038C3D008B013C94B8D6BDF8E2643E",
      _2: "0x08000000F0F598BCAE9601BE366C383E83D48FBECA0A59BE"
    }
  }
#-}

