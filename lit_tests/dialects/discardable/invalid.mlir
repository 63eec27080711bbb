// RUN: nimble-opt %s --split-input-file --verify-diagnostics

// A misspelt mark is an error, not an attribute nobody reads.
// expected-error @+1 {{'loop.kernel' op unknown discardable attribute 'nimble.devise'}}
loop.kernel @misspelt(%x: memref<4xf32>) attributes {nimble.devise = "opencl"} {
  loop.return
}

// -----

// expected-error @+1 {{'loop.kernel' op discardable attribute 'nimble.device' holds 3 : i64, not a StringAttr}}
loop.kernel @wrong_class(%x: memref<4xf32>) attributes {nimble.device = 3 : i64} {
  loop.return
}

// -----

func.func @placement(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'graph.relu' op discardable attribute 'device.placement' holds 1 : i64, not a StringAttr}}
  %y = graph.relu %x {device.placement = 1 : i64} : tensor<4xf32> -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// -----

// Attributes of other dialects are theirs to check.
func.func @foreign(%x: memref<4xf32>) attributes {llvm.emit_c_interface, other.anything = 3 : i64} {
  func.return
}
