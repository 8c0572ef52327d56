// StableHLO input (iree-compile detects it): sort with a NaN and signed
// zeros, gather, scatter-add with a repeated index, while, rng_bit_generator
// (THREE_FRY), rng (uniform), dynamic_slice with clamped starts.
func.func @sort(%x: tensor<6xf32>, %k: tensor<6xi32>) -> (tensor<6xf32>, tensor<6xi32>) {
  %r:2 = "stablehlo.sort"(%x, %k) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>):
    %lt = stablehlo.compare LT, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  }) {dimension = 0 : i64, is_stable = true} : (tensor<6xf32>, tensor<6xi32>) -> (tensor<6xf32>, tensor<6xi32>)
  return %r#0, %r#1 : tensor<6xf32>, tensor<6xi32>
}
func.func @gather(%x: tensor<5x3xf32>, %idx: tensor<4xi32>) -> tensor<4x3xf32> {
  %i = stablehlo.reshape %idx : (tensor<4xi32>) -> tensor<4x1xi32>
  %r = "stablehlo.gather"(%x, %i) {
    dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>,
    slice_sizes = array<i64: 1, 3>, indices_are_sorted = false
  } : (tensor<5x3xf32>, tensor<4x1xi32>) -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}
func.func @scatter(%x: tensor<5xf32>, %idx: tensor<3xi32>, %u: tensor<3xf32>) -> tensor<5xf32> {
  %i = stablehlo.reshape %idx : (tensor<3xi32>) -> tensor<3x1xi32>
  %r = "stablehlo.scatter"(%x, %i, %u) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>,
      indices_are_sorted = false, unique_indices = false} : (tensor<5xf32>, tensor<3x1xi32>, tensor<3xf32>) -> tensor<5xf32>
  return %r : tensor<5xf32>
}
func.func @while(%x: tensor<i32>) -> (tensor<i32>, tensor<i32>) {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %r:2 = stablehlo.while(%a = %x, %n = %c0) : tensor<i32>, tensor<i32>
    cond {
      %lim = stablehlo.constant dense<1000> : tensor<i32>
      %c = stablehlo.compare LT, %a, %lim, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %c : tensor<i1>
    } do {
      %two = stablehlo.constant dense<2> : tensor<i32>
      %one = stablehlo.constant dense<1> : tensor<i32>
      %m = stablehlo.multiply %a, %two : tensor<i32>
      %m1 = stablehlo.add %m, %one : tensor<i32>
      %n1 = stablehlo.add %n, %one : tensor<i32>
      stablehlo.return %m1, %n1 : tensor<i32>, tensor<i32>
    }
  return %r#0, %r#1 : tensor<i32>, tensor<i32>
}
func.func @rng(%s: tensor<2xui64>) -> (tensor<2xui64>, tensor<6xui32>) {
  %st, %out = stablehlo.rng_bit_generator %s, algorithm = THREE_FRY : (tensor<2xui64>) -> (tensor<2xui64>, tensor<6xui32>)
  return %st, %out : tensor<2xui64>, tensor<6xui32>
}
func.func @rng_uniform() -> tensor<4xf32> {
  %a = stablehlo.constant dense<0.0> : tensor<f32>
  %b = stablehlo.constant dense<1.0> : tensor<f32>
  %sh = stablehlo.constant dense<[4]> : tensor<1xi64>
  %r = stablehlo.rng %a, %b, %sh, distribution = UNIFORM : (tensor<f32>, tensor<f32>, tensor<1xi64>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
func.func @dyn_slice(%x: tensor<6xi64>, %i: tensor<i64>) -> tensor<2xi64> {
  %r = stablehlo.dynamic_slice %x, %i, sizes = [2] : (tensor<6xi64>, tensor<i64>) -> tensor<2xi64>
  return %r : tensor<2xi64>
}
