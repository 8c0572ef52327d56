// Parameters named by keys the program builds at run time. At the source
// level IREE names parameters by constants (#stream.parameter.named), but
// the io_parameters ops of its HAL phase take scopes and keys as
// !util.buffer values, and their lowering to the VM builds the key table
// at run time when a key is not a constant. So this program is written at
// that phase and compiled with iree-compile --compile-from=hal
// (params_keys.flags; there are no executables, so the llvm-cpu builds
// are this same module and only the vmvx one is kept). @key writes "k"
// and the digit '0' + n into a buffer it allocates; @pick loads that
// parameter, @gather reads parts of two into one buffer, @scatter writes
// to one (refused: archives are opened read-only). The runs use
// in--k.irpa: k0, k1, k2 = [0 1 2 3] + 10 * i (4 x f32).
// "k" and the digit '0' + n.
util.func private @key(%n: i32) -> !util.buffer {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %k = arith.constant 107 : i8
  %zero = arith.constant 48 : i32
  %key = util.buffer.alloc uninitialized : !util.buffer{%c2}
  util.buffer.store %k, %key[%c0 for %c1] : i8 -> !util.buffer{%c2}
  %d32 = arith.addi %n, %zero : i32
  %d = arith.trunci %d32 : i32 to i8
  util.buffer.store %d, %key[%c1 for %c1] : i8 -> !util.buffer{%c2}
  util.return %key : !util.buffer
}
util.func private @wait(%fence: !hal.fence) {
  %forever = arith.constant -1 : i32
  %status = hal.fence.await until([%fence]) timeout_millis(%forever) flags("None") : i32
  util.status.check_ok %status, "failed to wait on the parameter transfer"
  util.return
}
util.func public @pick(%n: i32) -> !hal.buffer_view attributes {iree.abi.stub, iree.reflection = {iree.abi.declaration = "sync func @pick(%n: i32) -> (%w: tensor<4xf32>)"}} {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %c0_i64 = arith.constant 0 : i64
  %any = arith.constant -1 : i64
  %no_fence = util.null : !hal.fence
  %key = util.call @key(%n) : (i32) -> !util.buffer
  %device = hal.devices.get %c0 : !hal.device
  %fence = hal.fence.create device(%device : !hal.device) flags("None") : !hal.fence
  %memory_type = hal.memory_type<"DeviceVisible|DeviceLocal"> : i32
  %usage = hal.buffer_usage<"TransferSource|TransferTarget|Transfer|DispatchStorageRead|DispatchStorageWrite|DispatchStorage|SharingImmutable"> : i32
  %buffer = io_parameters.load<%device : !hal.device> affinity(%any) wait(%no_fence) signal(%fence) type(%memory_type) usage(%usage) {
    %key[%c0_i64] : !hal.buffer{%c16}
  }
  util.call @wait(%fence) : (!hal.fence) -> ()
  %f32 = hal.element_type<f32> : i32
  %dense = hal.encoding_type<dense_row_major> : i32
  %view = hal.buffer_view.create buffer(%buffer : !hal.buffer)[%c0, %c16] shape([%c4]) type(%f32) encoding(%dense) : !hal.buffer_view
  util.return %view : !hal.buffer_view
}
// Into 8 x f32: bytes 4..16 of k<m>, then its bytes 0..4, then all of
// k<n>; in the scope `model`.
util.func public @gather(%n: i32, %m: i32) -> !hal.buffer_view attributes {iree.abi.stub, iree.reflection = {iree.abi.declaration = "sync func @gather(%n: i32, %m: i32) -> (%w: tensor<8xf32>)"}} {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c12 = arith.constant 12 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %c0_i64 = arith.constant 0 : i64
  %c4_i64 = arith.constant 4 : i64
  %any = arith.constant -1 : i64
  %no_fence = util.null : !hal.fence
  %kn = util.call @key(%n) : (i32) -> !util.buffer
  %km = util.call @key(%m) : (i32) -> !util.buffer
  %scope = util.buffer.constant : !util.buffer = "model"
  %device = hal.devices.get %c0 : !hal.device
  %allocator = hal.device.allocator<%device : !hal.device> : !hal.allocator
  %memory_type = hal.memory_type<"DeviceVisible|DeviceLocal"> : i32
  %usage = hal.buffer_usage<"TransferSource|TransferTarget|Transfer|DispatchStorageRead|DispatchStorageWrite|DispatchStorage"> : i32
  %buffer = hal.allocator.allocate<%allocator : !hal.allocator> affinity(%any) type(%memory_type) usage(%usage) : !hal.buffer{%c32}
  %fence = hal.fence.create device(%device : !hal.device) flags("None") : !hal.fence
  io_parameters.gather<%device : !hal.device> affinity(%any) wait(%no_fence) signal(%fence) {
    %scope::%km[%c4_i64] -> %buffer[%c0 for %c12] : !hal.buffer,
    %scope::%km[%c0_i64] -> %buffer[%c12 for %c4] : !hal.buffer,
    %scope::%kn[%c0_i64] -> %buffer[%c16 for %c16] : !hal.buffer
  }
  util.call @wait(%fence) : (!hal.fence) -> ()
  %f32 = hal.element_type<f32> : i32
  %dense = hal.encoding_type<dense_row_major> : i32
  %view = hal.buffer_view.create buffer(%buffer : !hal.buffer)[%c0, %c32] shape([%c8]) type(%f32) encoding(%dense) : !hal.buffer_view
  util.return %view : !hal.buffer_view
}
// Writes x over k<n> (unscoped).
util.func public @scatter(%x: !hal.buffer_view, %n: i32) attributes {iree.abi.stub, iree.reflection = {iree.abi.declaration = "sync func @scatter(%x: tensor<4xf32>, %n: i32)"}} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c0_i64 = arith.constant 0 : i64
  %any = arith.constant -1 : i64
  %no_fence = util.null : !hal.fence
  %key = util.call @key(%n) : (i32) -> !util.buffer
  %source = hal.buffer_view.buffer<%x : !hal.buffer_view> : !hal.buffer
  %device = hal.devices.get %c0 : !hal.device
  %fence = hal.fence.create device(%device : !hal.device) flags("None") : !hal.fence
  io_parameters.scatter<%device : !hal.device> affinity(%any) wait(%no_fence) signal(%fence) {
    %source[%c0 for %c16] : !hal.buffer -> %key[%c0_i64]
  }
  util.call @wait(%fence) : (!hal.fence) -> ()
  util.return
}
