// Bad input is a located message and exit status 1, never a traceback.
// RUN: not nimble-opt %s 2>&1 | filecheck %s
// RUN: not nimble-opt %s -p no-such-pass 2>&1 | filecheck %s --check-prefix=PASS
// RUN: not nimble-opt %s -p 'canonicalize{' 2>&1 | filecheck %s --check-prefix=SPEC

// CHECK: errors.mlir:10:3: error: 'graph.matmul' op contracting dims differ (3 vs 4)
// CHECK-NEXT: %c = graph.matmul
// CHECK-NOT: Traceback
func.func @f(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) {
  %c = graph.matmul %a, %b : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  func.return
}

// PASS: nimble-opt: error: Unrecognized passes: ['no-such-pass']
// SPEC: nimble-opt: error: Error parsing pass pipeline specification
