// RUN: nimble-opt %s -t vm-asm | filecheck %s
// RUN: nimble-opt %s -t vm -o %t.nbc && nimble-run %t.nbc --dim 3 | filecheck %s --check-prefix=RESULT

// A graph-level module is compiled down to the VM and listed: shape checks, allocation
// sized from the dims, the kernel launch, and the loop as jumps.

// CHECK-LABEL: func @main(r0, r1) regs
// CHECK: dim [[N:r[0-9]+]], r0, 0
// CHECK: fatal "{{.*}}dim 0 of %b must equal dim 0 of %a (both are 'n')"
// CHECK: alloc_storage [[S:r[0-9]+]], {{r[0-9]+}}, 64, cpu
// CHECK: alloc_tensor_reg [[T:r[0-9]+]], [[S]], {{r[0-9]+}}, f32, ([[N]], {{r[0-9]+}})
// CHECK: invoke_kernel @main_add_0, (r0, r1), ([[T]])
// CHECK: ret ([[T]])

// RESULT: result #0: float32[3, 8]

func.func @main(%a: tensor<?x8xf32>, %b: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %0 = dynshape.dim %a, 0 : tensor<?x8xf32>
  %1 = dynshape.dim %b, 0 : tensor<?x8xf32>
  %2 = arith.cmpi eq, %0, %1 : index
  dynshape.assert %2, "dim 0 of %b must equal dim 0 of %a (both are 'n')" dims(%1, %0)
  %c = graph.add %a, %b : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  %t = graph.tanh %c : tensor<?x8xf32> -> tensor<?x8xf32>
  func.return %t : tensor<?x8xf32>
}
