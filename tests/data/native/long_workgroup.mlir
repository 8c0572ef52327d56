// One llvm-cpu workgroup that runs as long as asked: `x` summed `n` times
// in a loop inside the kernel (tests/all/native.rs and
// python/tests/test_threads_and_interrupts.py stop a call during it). One
// output element is one workgroup; the loop-carried float sum is neither
// vectorized nor turned into a product, so it takes about a second per
// 10^9 iterations and reads and writes 4 bytes. Exact up to 2^24.
// Built by tests/data/native/long_workgroup.sh.
func.func @spin(%x: tensor<1xf32>, %n: index) -> tensor<1xf32> {
  %init = tensor.empty() : tensor<1xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"]}
      ins(%x : tensor<1xf32>) outs(%init : tensor<1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %zero = arith.constant 0.0 : f32
      %sum = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f32) {
        %s = arith.addf %acc, %in : f32
        scf.yield %s : f32
      }
      linalg.yield %sum : f32
  } -> tensor<1xf32>
  return %r : tensor<1xf32>
}
