// Written by iree-compile 3.13 (--iree-hal-dump-executable-benchmarks-to, see
// bench_entry.mlir), then compiled with `iree-compile bench_dispatch.mlir -o
// bench_dispatch.vmfb`.
module {
  util.global private @__device_0 = #hal.device.target<"local", [#hal.executable.target<"vmvx", "vmvx-bytecode-fb", {iree.encoding.resolver = #iree_cpu.vmvx_encoding_resolver<>, ukernels = "none"}>]> : !hal.device
  hal.executable private @add_dispatch_0 {
    hal.executable.variant public @vmvx_bytecode_fb target(<"vmvx", "vmvx-bytecode-fb", {iree.encoding.resolver = #iree_cpu.vmvx_encoding_resolver<>, ukernels = "none"}>) {
      hal.executable.export public @add_dispatch_0_elementwise_6_f32 ordinal(0) layout(#hal.pipeline.layout<bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) count(%arg0: !hal.device) -> (index, index, index) {
        %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
        hal.return %x, %y, %z : index, index, index
      }
      builtin.module {
        func.func @add_dispatch_0_elementwise_6_f32() attributes {translation_info = #iree_codegen.translation_info<pipeline = #iree_codegen.vmvx_pipeline>} {
          %c0 = arith.constant 0 : index
          %0 = hal.interface.binding.subspan layout(<bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) binding(0) alignment(64) offset(%c0) flags("ReadOnly|Indirect") : !iree_tensor_ext.dispatch.tensor<readonly:tensor<6xf32>>
          %1 = hal.interface.binding.subspan layout(<bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) binding(1) alignment(64) offset(%c0) flags("ReadOnly|Indirect") : !iree_tensor_ext.dispatch.tensor<readonly:tensor<6xf32>>
          %2 = hal.interface.binding.subspan layout(<bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) binding(2) alignment(64) offset(%c0) flags(Indirect) : !iree_tensor_ext.dispatch.tensor<writeonly:tensor<6xf32>>
          %3 = iree_tensor_ext.dispatch.tensor.load %0, offsets = [0], sizes = [6], strides = [1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<6xf32>> -> tensor<6xf32>
          %4 = iree_tensor_ext.dispatch.tensor.load %1, offsets = [0], sizes = [6], strides = [1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<6xf32>> -> tensor<6xf32>
          %5 = tensor.empty() : tensor<6xf32>
          %6 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%3, %4 : tensor<6xf32>, tensor<6xf32>) outs(%5 : tensor<6xf32>) attrs =  {lowering_config = #iree_cpu.lowering_config<distribution = [64]>} {
          ^bb0(%in: f32, %in_0: f32, %out: f32):
            %7 = arith.addf %in, %in_0 : f32
            linalg.yield %7 : f32
          } -> tensor<6xf32>
          iree_tensor_ext.dispatch.tensor.store %6, %2, offsets = [0], sizes = [6], strides = [1] : tensor<6xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<6xf32>>
          return
        }
        iree_codegen.dispatch_config @add_dispatch_0_elementwise_6_f32 {
        ^bb0(%arg0: !hal.device):
          %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
          iree_codegen.yield %x, %y, %z : index, index, index
        }
      }
    }
  }
  util.global private mutable @add_dispatch_0_vmvx_bytecode_fb_add_dispatch_0_elementwise_6_f32_buffer : !hal.buffer
  util.initializer {
    %device, %queue_affinity = hal.device.resolve on(#hal.device.affinity<@__device_0>) : !hal.device, i64
    %allocator = hal.device.allocator<%device : !hal.device> : !hal.allocator
    %memory_type = hal.memory_type<"DeviceVisible|DeviceLocal"> : i32
    %buffer_usage = hal.buffer_usage<"TransferSource|TransferTarget|Transfer|DispatchStorageRead|DispatchStorageWrite|DispatchStorage"> : i32
    %c768 = arith.constant 768 : index
    %buffer = hal.allocator.allocate<%allocator : !hal.allocator> affinity(%queue_affinity) type(%memory_type) usage(%buffer_usage) : !hal.buffer{%c768}
    util.global.store %buffer, @add_dispatch_0_vmvx_bytecode_fb_add_dispatch_0_elementwise_6_f32_buffer : !hal.buffer
    util.return
  }
  util.func public @add_dispatch_0_vmvx_bytecode_fb_add_dispatch_0_elementwise_6_f32(%arg0: i32) attributes {iree.abi.stub, iree.reflection = {iree.benchmark = "dispatch"}} {
    %0 = arith.index_cast %arg0 : i32 to index
    %device, %queue_affinity = hal.device.resolve on(#hal.device.affinity<@__device_0>) : !hal.device, i64
    %cmd = hal.command_buffer.create device(%device : !hal.device) mode("OneShot|AllowInlineExecution") categories(Dispatch) affinity(%queue_affinity) : !hal.command_buffer
    %add_dispatch_0_vmvx_bytecode_fb_add_dispatch_0_elementwise_6_f32_buffer = util.global.load @add_dispatch_0_vmvx_bytecode_fb_add_dispatch_0_elementwise_6_f32_buffer : !hal.buffer
    %c0 = arith.constant 0 : index
    %c24 = arith.constant 24 : index
    %c256 = arith.constant 256 : index
    %c512 = arith.constant 512 : index
    %workgroup_x, %workgroup_y, %workgroup_z = hal.executable.calculate_workgroups device(%device : !hal.device) target(@add_dispatch_0::@vmvx_bytecode_fb::@add_dispatch_0_elementwise_6_f32) : index, index, index
    %exe = hal.executable.lookup device(%device : !hal.device) executable(@add_dispatch_0) : !hal.executable
    %function_id = hal.executable.lookup.function target(%exe : !hal.executable) function(@add_dispatch_0::@vmvx_bytecode_fb::@add_dispatch_0_elementwise_6_f32) : i64
    %c1 = arith.constant 1 : index
    scf.for %arg1 = %c0 to %0 step %c1 {
      hal.command_buffer.dispatch<%cmd : !hal.command_buffer> target(%exe : !hal.executable)[%function_id] workgroups([%workgroup_x, %workgroup_y, %workgroup_z]) bindings([
        (%add_dispatch_0_vmvx_bytecode_fb_add_dispatch_0_elementwise_6_f32_buffer : !hal.buffer)[%c0, %c24], 
        (%add_dispatch_0_vmvx_bytecode_fb_add_dispatch_0_elementwise_6_f32_buffer : !hal.buffer)[%c256, %c24], 
        (%add_dispatch_0_vmvx_bytecode_fb_add_dispatch_0_elementwise_6_f32_buffer : !hal.buffer)[%c512, %c24]
      ]) flags("None")
      hal.command_buffer.execution_barrier<%cmd : !hal.command_buffer> source("Dispatch|CommandRetire") target("CommandIssue|Dispatch") flags("None")
    }
    hal.command_buffer.finalize<%cmd : !hal.command_buffer>
    %1 = util.null : !hal.fence
    %fence = hal.fence.create device(%device : !hal.device) flags("None") : !hal.fence
    hal.device.queue.execute<%device : !hal.device> affinity(%queue_affinity) wait(%1) signal(%fence) commands(%cmd) flags("None")
    %c-1_i32 = arith.constant -1 : i32
    %status = hal.fence.await until([%fence]) timeout_millis(%c-1_i32) flags("None") : i32
    util.status.check_ok %status, "failed to wait on timepoint"
    util.return
  }
}
