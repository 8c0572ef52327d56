// Tiles of work for every worker: a 96x64 and a 64x80 matrix generated
// from the scalar input (values (7i + 13j) mod 31, scaled), multiplied
// with data tiling (vmvx.pack, vmvx.mmt4d, vmvx.unpack), and each row of
// the product summed: dispatches of several workgroups each.
#map0 = affine_map<(i, j) -> ()>
#map1 = affine_map<(i, j) -> (i, j)>
func.func @vmvx_tiles(%s: tensor<f32>) -> tensor<96xf32> {
  %ea = tensor.empty() : tensor<96x64xf32>
  %a = linalg.generic {indexing_maps = [#map0, #map1], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<f32>) outs(%ea : tensor<96x64xf32>) {
  ^bb0(%v: f32, %o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %c7 = arith.constant 7 : index
    %c13 = arith.constant 13 : index
    %c31 = arith.constant 31 : index
    %x = arith.muli %i, %c7 : index
    %y = arith.muli %j, %c13 : index
    %z = arith.addi %x, %y : index
    %m = arith.remui %z, %c31 : index
    %n = arith.index_cast %m : index to i32
    %f = arith.sitofp %n : i32 to f32
    %r = arith.mulf %f, %v : f32
    linalg.yield %r : f32
  } -> tensor<96x64xf32>
  %eb = tensor.empty() : tensor<64x80xf32>
  %b = linalg.generic {indexing_maps = [#map0, #map1], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<f32>) outs(%eb : tensor<64x80xf32>) {
  ^bb0(%v: f32, %o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %c5 = arith.constant 5 : index
    %c3 = arith.constant 3 : index
    %c17 = arith.constant 17 : index
    %x = arith.muli %i, %c5 : index
    %y = arith.muli %j, %c3 : index
    %z = arith.addi %x, %y : index
    %m = arith.remui %z, %c17 : index
    %n = arith.index_cast %m : index to i32
    %f = arith.sitofp %n : i32 to f32
    %h = arith.constant 0.125 : f32
    %r = arith.mulf %f, %h : f32
    linalg.yield %r : f32
  } -> tensor<64x80xf32>
  %zero = arith.constant 0.0 : f32
  %ec = tensor.empty() : tensor<96x80xf32>
  %fc = linalg.fill ins(%zero : f32) outs(%ec : tensor<96x80xf32>) -> tensor<96x80xf32>
  %c = linalg.matmul ins(%a, %b : tensor<96x64xf32>, tensor<64x80xf32>) outs(%fc : tensor<96x80xf32>) -> tensor<96x80xf32>
  %er = tensor.empty() : tensor<96xf32>
  %fr = linalg.fill ins(%zero : f32) outs(%er : tensor<96xf32>) -> tensor<96xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%c : tensor<96x80xf32>) outs(%fr : tensor<96xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %t = arith.addf %v, %acc : f32
    linalg.yield %t : f32
  } -> tensor<96xf32>
  return %sum : tensor<96xf32>
}
