module {
  func.func @"torch-jit-export"(%arg0: !torch.vtensor<[4,10],f32>) -> !torch.vtensor<[4,8],f32> attributes {torch.onnx_meta.ir_version = 3 : si64, torch.onnx_meta.opset_version = 17 : si64, torch.onnx_meta.producer_name = "pytorch", torch.onnx_meta.producer_version = "0.3"} {
    %0 = torch.operator "onnx.Constant"() {torch.onnx.value = dense_resource<_1> : tensor<8x10xf32>} : () -> !torch.vtensor<[8,10],f32> 
    %1 = torch.operator "onnx.Constant"() {torch.onnx.value = dense_resource<_2> : tensor<8xf32>} : () -> !torch.vtensor<[8],f32> 
    %none = torch.constant.none
    %2 = torch.operator "onnx.Gemm"(%arg0, %0, %1) {torch.onnx.alpha = 1.000000e+00 : f32, torch.onnx.beta = 1.000000e+00 : f32, torch.onnx.transB = 1 : si64} : (!torch.vtensor<[4,10],f32>, !torch.vtensor<[8,10],f32>, !torch.vtensor<[8],f32>) -> !torch.vtensor<[4,8],f32> 
    return %2 : !torch.vtensor<[4,8],f32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      _1: "0x0800000074BDC43D501E063E8B0794BE4EEA673E68CE993DA5A5983EB6B726BE388920BECF66903E21DAA0BE4B5C42BE7A8A5F3E2638053EB7806BBE04AD3EBE0AA76C3EDC1CF33D62F997BD965282BEFA8491BE36FD753E88C4323D74FF293E6071073D053C9B3E7CF9D13D5CB99A3D96C0373E692E2DBE7D6EA1BE7ECE603E7038A73DC024D43C60C81D3DE8A97CBDBE8AB0BD00B775BE40F8683D3090E8BC5A92733EE18739BE9049F83D6F729CBE22B696BEAE6A313E42794E3E80558B3B481D573D17449A3EF45882BE4C298CBD049973BEACBC82BD69151DBE7CE3EB3DD020F53D203A633C2840023D204789BC307DCEBCA02EC13DCF578E3E6260223E70C04E3D18260ABEEE7E623E488F5BBE413A963EAFB635BEC0FA283EEEF3223E3649283EB75591BE7A1DD2BD909BADBD408E303D59EC9F3E88DB9FBDC8506BBD303C99BC",
      _2: "0x080000001329933E70B7E13C0613023E72640D3EF36C923E9E36583E39A69A3E252E983E"
    }
  }
#-}

