// RUN: nimble-opt %s --split-input-file -p lower-to-vm | filecheck %s

// CHECK-LABEL: vm.function @branch_and_check(r0, r1, r2) regs 6 attributes {vm.signature = (i1, index, index) -> index, vm.arg_names = ["c", "a", "b"], vm.dim_names = {}} {
// CHECK-NEXT: vm.cmp r3, 5, r1, r2
// CHECK-NEXT: vm.if r3, L3, L2
// CHECK-NEXT: vm.fatal "{{.*}}:{{[0-9]+}}:3: 'dynshape.assert' op failed at run time: a must not be below b", (r1, r2)
// CHECK-NEXT: vm.if r0, L4, L7
// CHECK-NEXT: vm.add r5, r1, r2
// CHECK-NEXT: vm.move r4, r5
// CHECK-NEXT: vm.goto L9
// CHECK-NEXT: vm.move r4, r2
// CHECK-NEXT: vm.goto L9
// CHECK-NEXT: vm.ret (r4)
// CHECK-NEXT: }

func.func @branch_and_check(%c: i1, %a: index, %b: index) -> index {
  %ok = arith.cmpi sge, %a, %b : index
  dynshape.assert %ok, "a must not be below b" dims(%a, %b)
  %r = graph.if %c : i1 -> (index) {
    %s = arith.addi %a, %b : index
    graph.yield %s : index
  } else {
    graph.yield %b : index
  }
  func.return %r : index
}

// -----

// CHECK-LABEL: vm.function @loop_swaps_carried_values(r0, r1, r2) regs 13 attributes {vm.signature = (index, index, index) -> (index, index), vm.arg_names = ["n", "x", "y"], vm.dim_names = {}} {
// CHECK-NEXT: vm.load_consti r3, 0
// CHECK-NEXT: vm.load_consti r4, 1
// CHECK-NEXT: vm.move r5, r3
// CHECK-NEXT: vm.move r6, r1
// CHECK-NEXT: vm.move r7, r2
// CHECK-NEXT: vm.cmp r8, 2, r5, r0
// CHECK-NEXT: vm.if r8, L7, L15
// CHECK-NEXT: vm.add r9, r5, r4
// CHECK-NEXT: vm.move r10, r9
// CHECK-NEXT: vm.move r11, r7
// CHECK-NEXT: vm.move r12, r6
// CHECK-NEXT: vm.move r5, r10
// CHECK-NEXT: vm.move r6, r11
// CHECK-NEXT: vm.move r7, r12
// CHECK-NEXT: vm.goto L5
// CHECK-NEXT: vm.ret (r6, r7)
// CHECK-NEXT: }
func.func @loop_swaps_carried_values(%n: index, %x: index, %y: index) -> (index, index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %i, %p, %q = graph.while (%i0 = %c0, %p0 = %x, %q0 = %y) : (index, index, index) -> (index, index, index) {
    %more = arith.cmpi slt, %i0, %n : index
    graph.condition %more : i1
  } do {
  ^bb0(%i1: index, %p1: index, %q1: index):
    %next = arith.addi %i1, %c1 : index
    graph.yield %next, %q1, %p1 : index, index, index
  }
  func.return %p, %q : index, index
}

// -----

// CHECK-LABEL: graph.adt @List {
// CHECK-NEXT: graph.constructor @Nil()
// CHECK-NEXT: graph.constructor @Cons(index, !graph.adt<@List>)
// CHECK-NEXT: }
// CHECK-NEXT: vm.function @length(r0) regs 10 attributes {vm.signature = (!graph.adt<@List>) -> index, vm.arg_names = ["l"], vm.dim_names = {}} {
// CHECK-NEXT: vm.load_consti r4, 0
// CHECK-NEXT: vm.load_consti r8, 1
// CHECK-NEXT: vm.get_tag r2, r0
// CHECK-NEXT: vm.cmp r3, 0, r2, r4
// CHECK-NEXT: vm.if r3, L5, L7
// CHECK-NEXT: vm.move r1, r4
// CHECK-NEXT: vm.goto L13
// CHECK-NEXT: vm.get_field r5, r0, 0
// CHECK-NEXT: vm.get_field r6, r0, 1
// CHECK-NEXT: vm.invoke (r7), @length, (r6)
// CHECK-NEXT: vm.add r9, r7, r8
// CHECK-NEXT: vm.move r1, r9
// CHECK-NEXT: vm.goto L13
// CHECK-NEXT: vm.ret (r1)
// CHECK-NEXT: }
graph.adt @List {
  graph.constructor @Nil()
  graph.constructor @Cons(index, !graph.adt<@List>)
}

func.func @length(%l: !graph.adt<@List>) -> index {
  %n = graph.match %l : !graph.adt<@List> -> (index)
    case @Nil() {
      %z = arith.constant 0 : index
      graph.yield %z : index
    }
    case @Cons(%h: index, %t: !graph.adt<@List>) {
      %rest = func.call @length(%t) : (!graph.adt<@List>) -> index
      %c1 = arith.constant 1 : index
      %s = arith.addi %rest, %c1 : index
      graph.yield %s : index
    }
  func.return %n : index
}

// -----

// CHECK-LABEL: vm.function @launch_with_variant(r0, r1, r2) regs 9 attributes {vm.signature = (tensor<?x8xf32>, index, i1) -> tensor<?x8xf32>, vm.arg_names = ["x", "n", "same"], vm.dim_names = {}} {
// CHECK-NEXT: vm.load_consti r3, 0
// CHECK-NEXT: vm.load_consti r4, 32
// CHECK-NEXT: vm.load_consti r8, 8
// CHECK-NEXT: vm.mul r5, r1, r4
// CHECK-NEXT: vm.alloc_storage r6, r5, 64, cpu
// CHECK-NEXT: vm.alloc_tensor_reg r7, r6, r3, f32, (r1, r8)
// CHECK-NEXT: vm.if r2, L7, L9
// CHECK-NEXT: vm.invoke_kernel @k_ns, (r0), (r7)
// CHECK-NEXT: vm.goto L10
// CHECK-NEXT: vm.invoke_kernel @k, (r0), (r7)
// CHECK-NEXT: vm.ret (r7)
// CHECK-NEXT: }
func.func @launch_with_variant(%x: tensor<?x8xf32>, %n: index, %same: i1) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %bytes = arith.muli %n, %c32 : index
  %s = device.alloc_storage %bytes align 64 on "cpu"
  %t = device.alloc_tensor %s[%c0] (%n) : tensor<?x8xf32>
  device.launch @k(%x) outs(%t) variants [@k_ns] if %same on "cpu" : (tensor<?x8xf32>) -> tensor<?x8xf32>
  func.return %t : tensor<?x8xf32>
}
