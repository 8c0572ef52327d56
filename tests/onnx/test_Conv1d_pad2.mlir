module {
  func.func @"torch-jit-export"(%arg0: !torch.vtensor<[2,4,10],f32>) -> !torch.vtensor<[2,5,10],f32> attributes {torch.onnx_meta.ir_version = 3 : si64, torch.onnx_meta.opset_version = 17 : si64, torch.onnx_meta.producer_name = "pytorch", torch.onnx_meta.producer_version = "0.3"} {
    %0 = torch.operator "onnx.Constant"() {torch.onnx.value = dense_resource<_1> : tensor<5x4x5xf32>} : () -> !torch.vtensor<[5,4,5],f32> 
    %1 = torch.operator "onnx.Constant"() {torch.onnx.value = dense_resource<_2> : tensor<5xf32>} : () -> !torch.vtensor<[5],f32> 
    %none = torch.constant.none
    %2 = torch.operator "onnx.Conv"(%arg0, %0, %1) {torch.onnx.dilations = [1 : si64], torch.onnx.group = 1 : si64, torch.onnx.kernel_shape = [5 : si64], torch.onnx.pads = [2 : si64, 2 : si64], torch.onnx.strides = [1 : si64]} : (!torch.vtensor<[2,4,10],f32>, !torch.vtensor<[5,4,5],f32>, !torch.vtensor<[5],f32>) -> !torch.vtensor<[2,5,10],f32> 
    return %2 : !torch.vtensor<[2,5,10],f32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      _1: "0x080000004CE625BE9FFD40BE48A7913C62EF1B3E9E36C9BDC0B61B3CE8C7583D042B00BEECCBF0BD8005623B4B081CBE203DCD3C4CC4833D3A9D0B3E80CFB8BC891B5FBE800420BEBC673CBD0408A13DA09DD03C1A694C3EC04D023D5A4A583EF0517E3CE0BDE4BB30B902BCA8F34E3DA2E0143E0C9D013E60D4AD3C705BCB3D6802703D089D0CBE763439BEEA500ABE60E4C53B85E547BE200F023EA0F4B23D004EB9BCF665063E124349BECD38D9BDB2963EBE4880FDBDE4A701BE3E7B023ED394CEBD445F10BEECB407BDE03142BE4C2FD63DA8C2C03D26AA3ABE0403A33D766D2E3EB67F423ECAB685BDD6844FBEBA68273E14AC7CBD4892553D6050943CF44E6DBD3AB44ABEE8DF5A3DE819A0BDA852AD3D7E460D3E508FE93C3077BABD2CA317BE7E02393EC04A333D2C2F3BBEEACA323EAA6F223EC8D338BD7EE3103E00AC10BB5A508EBD9DB93ABE604C823B90E10E3E6C6CD63DB91130BEB08C573ED6DA473EC5922CBE44A79CBD9C57A13D1E485E3E10EB883D687B00BEFCD526BD0EE107BE4E452B3E80645FBE42C8403EC8CD2CBD",
      _2: "0x08000000E0BD0E3DECAC05BD0A533C3E70055ABD38D1813D"
    }
  }
#-}

