// Compiled with `iree-compile --iree-hal-target-backends=vmvx
// --iree-execution-model=async-external` into async_bench.vmfb (used by
// tests/all/cli_bench.rs): every export takes a wait and a signal fence
// after its inputs. `irvm bench` without --function times those that take
// nothing else (`tick`, `nothing`), as iree-benchmark-module does, and
// leaves `scale` (an input) out.
util.global private mutable @count = dense<0> : tensor<i32>
func.func @tick() -> tensor<i32> {
  %c = util.global.load @count : tensor<i32>
  %one = arith.constant dense<1> : tensor<i32>
  %s = arith.addi %c, %one : tensor<i32>
  util.global.store %s, @count : tensor<i32>
  return %s : tensor<i32>
}
func.func @scale(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = arith.addf %x, %x : tensor<4xf32>
  return %r : tensor<4xf32>
}
func.func @nothing() {
  return
}
