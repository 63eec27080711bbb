// RUN: nimble-opt %s --split-input-file | filecheck %s
// RUN: nimble-opt %s --split-input-file --print-op-generic | nimble-opt --split-input-file | filecheck %s

// Comparisons and selects are elementwise on vectors, as in LLVM; the casts xdsl lacks.

// CHECK-LABEL: llvm.func @compare_and_select_lanes
// CHECK-SAME: (%[[A:[A-Za-z0-9_$.-]+]]: vector<16xf32>, %[[B:[A-Za-z0-9_$.-]+]]: vector<16xf32>) -> vector<16xf32> {
// CHECK-NEXT: %[[M:[A-Za-z0-9_$.-]+]] = llvm.fcmp "olt" %[[A]], %[[B]] : vector<16xf32>
// CHECK-NEXT: %[[S:[A-Za-z0-9_$.-]+]] = llvm.select %[[M]], %[[A]], %[[B]] : vector<16xi1>, vector<16xf32>
// CHECK-NEXT: llvm.return %[[S]] : vector<16xf32>
llvm.func @compare_and_select_lanes(%a: vector<16xf32>, %b: vector<16xf32>) -> vector<16xf32> {
  %m = llvm.fcmp "olt" %a, %b : vector<16xf32>
  %s = llvm.select %m, %a, %b : vector<16xi1>, vector<16xf32>
  llvm.return %s : vector<16xf32>
}

// -----

// CHECK-LABEL: llvm.func @compare_and_select_scalars
// CHECK-SAME: (%[[A:[A-Za-z0-9_$.-]+]]: f64, %[[B:[A-Za-z0-9_$.-]+]]: f64) -> f64 {
// CHECK-NEXT: %[[M:[A-Za-z0-9_$.-]+]] = llvm.fcmp "oge" %[[A]], %[[B]] : f64
// CHECK-NEXT: %[[S:[A-Za-z0-9_$.-]+]] = llvm.select %[[M]], %[[A]], %[[B]] : i1, f64
// CHECK-NEXT: llvm.return %[[S]] : f64
llvm.func @compare_and_select_scalars(%a: f64, %b: f64) -> f64 {
  %m = llvm.fcmp "oge" %a, %b : f64
  %s = llvm.select %m, %a, %b : i1, f64
  llvm.return %s : f64
}

// -----

// CHECK-LABEL: llvm.func @casts
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: vector<16xf32>, %[[N:[A-Za-z0-9_$.-]+]]: i64) -> vector<16xi32> {
// CHECK-NEXT: %[[I:[A-Za-z0-9_$.-]+]] = llvm.fptosi %[[X]] : vector<16xf32> to vector<16xi32>
// CHECK-NEXT: %[[U:[A-Za-z0-9_$.-]+]] = llvm.fptoui %[[X]] : vector<16xf32> to vector<16xi32>
// CHECK-NEXT: %[[F:[A-Za-z0-9_$.-]+]] = llvm.uitofp %[[N]] : i64 to f64
// CHECK-NEXT: llvm.return %[[I]] : vector<16xi32>
llvm.func @casts(%x: vector<16xf32>, %n: i64) -> vector<16xi32> {
  %i = llvm.fptosi %x : vector<16xf32> to vector<16xi32>
  %u = llvm.fptoui %x : vector<16xf32> to vector<16xi32>
  %f = llvm.uitofp %n : i64 to f64
  llvm.return %i : vector<16xi32>
}
