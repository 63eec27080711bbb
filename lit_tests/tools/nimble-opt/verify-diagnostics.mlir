// A right expectation passes; a wrong one makes nimble-opt fail and say why.
// RUN: nimble-opt %s --split-input-file --verify-diagnostics
// RUN: sed -e 's/expected-error @+1 {{.graph.add. op dim 1/expected-error @+2 {{dim 1/' %s | not nimble-opt --split-input-file --verify-diagnostics 2>&1 | filecheck %s --check-prefix=WRONG-LINE

// WRONG-LINE: unexpected <stdin>:10:3: error: 'graph.add' op dim 1 cannot be broadcast (4 vs 5)
// WRONG-LINE: <stdin>:9: expected error on line 11 was not produced: {{[{][{]}}dim 1

func.func @broadcast(%a: tensor<3x4xf32>, %b: tensor<5xf32>) {
  // expected-error @+1 {{'graph.add' op dim 1 cannot be broadcast}}
  %c = graph.add %a, %b : (tensor<3x4xf32>, tensor<5xf32>) -> tensor<3x4xf32>
  func.return
}

// -----

func.func @above_below(%a: tensor<4xi32>) {
  // expected-error @below {{'graph.exp' op operand must be a float tensor}}
  %c = graph.exp %a : tensor<4xi32> -> tensor<4xi32>
  %d = graph.tanh %a : tensor<4xi32> -> tensor<4xi32>
  // expected-error @above {{'graph.tanh' op operand must be a float tensor}}
  func.return
}
