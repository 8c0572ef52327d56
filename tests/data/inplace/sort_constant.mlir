// A constant sorted in place: iree-compile imports the constant
// (hal.allocator.import of the module's rodata) and the sort dispatch
// writes into the imported buffer before it is copied out, for llvm-cpu
// and vmvx alike (tests/all/cli_run.rs,
// a_constant_written_in_place_by_a_dispatch_sorts_as_in_iree).
// Regenerate (IREE 3.13's iree-compile):
//   iree-compile sort_constant.mlir --iree-hal-target-backends=vmvx -o sort_constant.vmvx.vmfb
//   iree-compile sort_constant.mlir --iree-hal-target-backends=llvm-cpu \
//     --iree-llvmcpu-target-cpu=generic -o sort_constant.llvm-cpu.vmfb
func.func @sorted() -> tensor<6xi32> {
  %values = util.unfoldable_constant dense<[5, -2, 9, 0, 7, 3]> : tensor<6xi32>
  %sorted = iree_linalg_ext.sort dimension(0) outs(%values : tensor<6xi32>) {
  ^bb0(%a: i32, %b: i32):
    %less = arith.cmpi slt, %a, %b : i32
    iree_linalg_ext.yield %less : i1
  } -> tensor<6xi32>
  return %sorted : tensor<6xi32>
}
