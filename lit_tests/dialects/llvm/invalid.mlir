// RUN: nimble-opt %s --split-input-file --verify-diagnostics

llvm.func @compare_result_shape(%a: vector<16xf32>, %b: vector<16xf32>) {
  // expected-error @+1 {{'llvm.fcmp' op result must be i1 of the operands' shape, got vector<8xi1>}}
  %m = "llvm.fcmp"(%a, %b) <{predicate = 4 : i64}> : (vector<16xf32>, vector<16xf32>) -> vector<8xi1>
  llvm.return
}

// -----

llvm.func @select_lanes_differ(%m: vector<8xi1>, %a: vector<16xf32>, %b: vector<16xf32>) {
  // expected-error @+1 {{'llvm.select' op a vector condition and the result must have the same shape, got vector<8xi1> and vector<16xf32>}}
  %s = llvm.select %m, %a, %b : vector<8xi1>, vector<16xf32>
  llvm.return
}
