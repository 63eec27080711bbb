// RUN: nimble-opt %s --split-input-file | filecheck %s
// RUN: nimble-opt %s --split-input-file --print-op-generic | nimble-opt --split-input-file | filecheck %s

// CHECK-LABEL: vm.constant @c0 {
// CHECK-NEXT: %[[V0:[A-Za-z0-9_$.-]+]] = graph.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK-NEXT: }

vm.constant @c0 {
  %0 = graph.constant dense<[1.0, 2.0]> : tensor<2xf32>
}

// -----

// CHECK-LABEL: vm.function @every_instruction(r0, r1) regs 8 {
// CHECK-NEXT: vm.move r1, r1
// CHECK-NEXT: vm.invoke (r1, r2), @f, (r1, r2)
// CHECK-NEXT: vm.invoke_closure (r1, r2), r1, (r1, r2)
// CHECK-NEXT: vm.invoke_kernel @k, (r1, r2), (r1, r2)
// CHECK-NEXT: vm.invoke_host (r1, r2), @h, (r1, r2)
// CHECK-NEXT: vm.alloc_storage r1, r1, 0, cpu
// CHECK-NEXT: vm.alloc_tensor r1, r1, 0, f32, [1, -1]
// CHECK-NEXT: vm.alloc_tensor_reg r1, r1, r1, f32, (r1, r2)
// CHECK-NEXT: vm.alloc_adt r1, @Node, (r1, r2)
// CHECK-NEXT: vm.alloc_tuple r1, (r1, r2)
// CHECK-NEXT: vm.alloc_closure r1, @f, (r1, r2)
// CHECK-NEXT: vm.get_field r1, r1, 0
// CHECK-NEXT: vm.get_tag r1, r1
// CHECK-NEXT: vm.if r1, L4, L4
// CHECK-NEXT: vm.goto L4
// CHECK-NEXT: vm.load_const r1, @c0
// CHECK-NEXT: vm.load_consti r1, 0
// CHECK-NEXT: vm.shape_of r1, r1
// CHECK-NEXT: vm.dim r1, r1, 0
// CHECK-NEXT: vm.make_shape r1, (r1, r2)
// CHECK-NEXT: vm.reshape_tensor r1, r1, r1
// CHECK-NEXT: vm.device_copy r1, r1, cpu, cpu
// CHECK-NEXT: vm.fatal "message", (r1, r2)
// CHECK-NEXT: vm.kill r1
// CHECK-NEXT: vm.cmp r1, 0, r1, r1
// CHECK-NEXT: vm.select r1, r1, r1, r1
// CHECK-NEXT: vm.not r1, r1
// CHECK-NEXT: vm.add r1, r1, r1
// CHECK-NEXT: vm.sub r1, r1, r1
// CHECK-NEXT: vm.mul r1, r1, r1
// CHECK-NEXT: vm.div r1, r1, r1
// CHECK-NEXT: vm.floordiv r1, r1, r1
// CHECK-NEXT: vm.ceildiv r1, r1, r1
// CHECK-NEXT: vm.rem r1, r1, r1
// CHECK-NEXT: vm.max r1, r1, r1
// CHECK-NEXT: vm.min r1, r1, r1
// CHECK-NEXT: vm.and r1, r1, r1
// CHECK-NEXT: vm.or r1, r1, r1
// CHECK-NEXT: vm.xor r1, r1, r1
// CHECK-NEXT: vm.ret (r1, r2)
// CHECK-NEXT: }
vm.function @every_instruction(r0, r1) regs 8 {
  vm.move r1, r1
  vm.invoke (r1, r2), @f, (r1, r2)
  vm.invoke_closure (r1, r2), r1, (r1, r2)
  vm.invoke_kernel @k, (r1, r2), (r1, r2)
  vm.invoke_host (r1, r2), @h, (r1, r2)
  vm.alloc_storage r1, r1, 0, cpu
  vm.alloc_tensor r1, r1, 0, f32, [1, -1]
  vm.alloc_tensor_reg r1, r1, r1, f32, (r1, r2)
  vm.alloc_adt r1, @Node, (r1, r2)
  vm.alloc_tuple r1, (r1, r2)
  vm.alloc_closure r1, @f, (r1, r2)
  vm.get_field r1, r1, 0
  vm.get_tag r1, r1
  vm.if r1, L4, L4
  vm.goto L4
  vm.load_const r1, @c0
  vm.load_consti r1, 0
  vm.shape_of r1, r1
  vm.dim r1, r1, 0
  vm.make_shape r1, (r1, r2)
  vm.reshape_tensor r1, r1, r1
  vm.device_copy r1, r1, cpu, cpu
  vm.fatal "message", (r1, r2)
  vm.kill r1
  vm.cmp r1, 0, r1, r1
  vm.select r1, r1, r1, r1
  vm.not r1, r1
  vm.add r1, r1, r1
  vm.sub r1, r1, r1
  vm.mul r1, r1, r1
  vm.div r1, r1, r1
  vm.floordiv r1, r1, r1
  vm.ceildiv r1, r1, r1
  vm.rem r1, r1, r1
  vm.max r1, r1, r1
  vm.min r1, r1, r1
  vm.and r1, r1, r1
  vm.or r1, r1, r1
  vm.xor r1, r1, r1
  vm.ret (r1, r2)
}
