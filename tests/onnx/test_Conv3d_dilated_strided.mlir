module {
  func.func @"torch-jit-export"(%arg0: !torch.vtensor<[2,3,5,5,5],f32>) -> !torch.vtensor<[2,4,2,2,2],f32> attributes {torch.onnx_meta.ir_version = 3 : si64, torch.onnx_meta.opset_version = 17 : si64, torch.onnx_meta.producer_name = "pytorch", torch.onnx_meta.producer_version = "0.3"} {
    %0 = torch.operator "onnx.Constant"() {torch.onnx.value = dense_resource<_1> : tensor<4x3x2x2x2xf32>} : () -> !torch.vtensor<[4,3,2,2,2],f32> 
    %1 = torch.operator "onnx.Constant"() {torch.onnx.value = dense_resource<_2> : tensor<4xf32>} : () -> !torch.vtensor<[4],f32> 
    %none = torch.constant.none
    %2 = torch.operator "onnx.Conv"(%arg0, %0, %1) {torch.onnx.dilations = [2 : si64, 2 : si64, 2 : si64], torch.onnx.group = 1 : si64, torch.onnx.kernel_shape = [2 : si64, 2 : si64, 2 : si64], torch.onnx.pads = [0 : si64, 0 : si64, 0 : si64, 0 : si64, 0 : si64, 0 : si64], torch.onnx.strides = [2 : si64, 2 : si64, 2 : si64]} : (!torch.vtensor<[2,3,5,5,5],f32>, !torch.vtensor<[4,3,2,2,2],f32>, !torch.vtensor<[4],f32>) -> !torch.vtensor<[2,4,2,2,2],f32> 
    return %2 : !torch.vtensor<[2,4,2,2,2],f32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      _1: "0x08000000160700BE607DC0BBA0D8153EFB0B36BE987773BD803F623BA10B39BE68154D3D381D53BD559638BEB8F5063D64A3A03DF026133E8062783D200FEFBBD8E7F93D8434073EE859223ED09CC1BC28BF09BD7414B83D3A8C3F3E7177DABDF12600BE8595C4BDA2BBA2BD80D725BE0E1B0D3E600C3C3E90230D3E321A25BE802287BDC3E225BEB2E1F3BD265F463ED0FF07BCC444FA3D3BBBA5BDB8E1203E20ADA6BB08B8763D45A9FBBDB069C43CBC9FF33D42F60EBEC8A5533D449F11BD14031CBD0018993CB831523D24EFE83D5BF03BBEF37FC4BD8AD4033E20F8513D7BE114BE6C1AFBBD241600BEBA600E3E936350BEC947F3BDB06A183E5CD2C73DAC71EC3D1E320FBE00CAA1BBB846D03CAE7E42BE100228BD72F3503E738C22BEDE73E3BD3CFBBE3DF880DD3CBB0DF0BD482ABFBDBC263F3E30D16A3DB0518B3C7853443D783C913D6459203DE8E99B3D9E6F50BE08DCEB3CF7C91CBE24579B3DE4B61ABDA6BE1B3E61E61BBEFC5F333E8C3607BE9825813C242923BEEC4930BE009A52BC",
      _2: "0x08000000390AD1BD583CAF3DFE5140BE1815A93D"
    }
  }
#-}

