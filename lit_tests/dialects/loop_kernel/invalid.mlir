// RUN: nimble-opt %s --split-input-file --verify-diagnostics

// A kernel returns nothing: it writes its output buffers.
// expected-error @+1 {{'loop.kernel' op has no results (it writes its output buffers) and no argument or result attributes}}
loop.kernel @results(%a: memref<4xf32>) -> f32 {
  loop.return
}

// -----

// A kernel's body ends in loop.return, not in a function's return.
loop.kernel @func_return(%a: memref<4xf32>) {
  // expected-error @+1 {{'func.return' expects parent op 'func.func'}}
  func.return
}

// -----

func.func @outside(%a: memref<4xf32>) {
  // expected-error @+1 {{'loop.return' expects parent op 'loop.kernel'}}
  loop.return
}
