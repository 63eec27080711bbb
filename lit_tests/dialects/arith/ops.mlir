// RUN: nimble-opt %s --split-input-file | filecheck %s
// RUN: nimble-opt %s --split-input-file --print-op-generic | nimble-opt --split-input-file | filecheck %s

// Comparisons, select and casts are elementwise on vectors, as in MLIR.

// CHECK-LABEL: func.func @compare_vectors
// CHECK-SAME: (%[[A:[A-Za-z0-9_$.-]+]]: vector<16xf32>, %[[B:[A-Za-z0-9_$.-]+]]: vector<16xf32>, %[[I:[A-Za-z0-9_$.-]+]]: vector<4xi64>, %[[J:[A-Za-z0-9_$.-]+]]: vector<4xi64>) -> (vector<16xi1>, vector<4xi1>) {
// CHECK-NEXT: %[[M:[A-Za-z0-9_$.-]+]] = arith.cmpf olt, %[[A]], %[[B]] : vector<16xf32>
// CHECK-NEXT: %[[N:[A-Za-z0-9_$.-]+]] = arith.cmpi slt, %[[I]], %[[J]] : vector<4xi64>
// CHECK-NEXT: func.return %[[M]], %[[N]] : vector<16xi1>, vector<4xi1>
// CHECK-NEXT: }

func.func @compare_vectors(%a: vector<16xf32>, %b: vector<16xf32>, %i: vector<4xi64>, %j: vector<4xi64>) -> (vector<16xi1>, vector<4xi1>) {
  %m = arith.cmpf olt, %a, %b : vector<16xf32>
  %n = arith.cmpi slt, %i, %j : vector<4xi64>
  func.return %m, %n : vector<16xi1>, vector<4xi1>
}

// -----

// CHECK-LABEL: func.func @compare_scalars
// CHECK-SAME: (%[[A:[A-Za-z0-9_$.-]+]]: f32, %[[B:[A-Za-z0-9_$.-]+]]: f32, %[[I:[A-Za-z0-9_$.-]+]]: index, %[[J:[A-Za-z0-9_$.-]+]]: index) -> (i1, i1) {
// CHECK-NEXT: %[[M:[A-Za-z0-9_$.-]+]] = arith.cmpf oge, %[[A]], %[[B]] : f32
// CHECK-NEXT: %[[N:[A-Za-z0-9_$.-]+]] = arith.cmpi ult, %[[I]], %[[J]] : index
// CHECK-NEXT: func.return %[[M]], %[[N]] : i1, i1
// CHECK-NEXT: }
func.func @compare_scalars(%a: f32, %b: f32, %i: index, %j: index) -> (i1, i1) {
  %m = arith.cmpf oge, %a, %b : f32
  %n = arith.cmpi ult, %i, %j : index
  func.return %m, %n : i1, i1
}

// -----

// CHECK-LABEL: func.func @select_lanes
// CHECK-SAME: (%[[M:[A-Za-z0-9_$.-]+]]: vector<16xi1>, %[[C:[A-Za-z0-9_$.-]+]]: i1, %[[A:[A-Za-z0-9_$.-]+]]: vector<16xf32>, %[[B:[A-Za-z0-9_$.-]+]]: vector<16xf32>) -> (vector<16xf32>, vector<16xf32>) {
// CHECK-NEXT: %[[S:[A-Za-z0-9_$.-]+]] = arith.select %[[M]], %[[A]], %[[B]] : vector<16xi1>, vector<16xf32>
// CHECK-NEXT: %[[T:[A-Za-z0-9_$.-]+]] = arith.select %[[C]], %[[A]], %[[B]] : vector<16xf32>
// CHECK-NEXT: func.return %[[S]], %[[T]] : vector<16xf32>, vector<16xf32>
// CHECK-NEXT: }
func.func @select_lanes(%m: vector<16xi1>, %c: i1, %a: vector<16xf32>, %b: vector<16xf32>) -> (vector<16xf32>, vector<16xf32>) {
  %s = arith.select %m, %a, %b : vector<16xi1>, vector<16xf32>
  %t = arith.select %c, %a, %b : vector<16xf32>
  func.return %s, %t : vector<16xf32>, vector<16xf32>
}

// -----

// CHECK-LABEL: func.func @casts_on_vectors
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: vector<16xf32>, %[[I:[A-Za-z0-9_$.-]+]]: vector<16xi32>, %[[N:[A-Za-z0-9_$.-]+]]: vector<4xindex>, %[[B:[A-Za-z0-9_$.-]+]]: vector<16xi1>) -> (vector<16xi32>, vector<16xi32>, vector<16xf32>, vector<16xf32>, vector<4xi64>, vector<16xi16>, vector<16xi64>, vector<16xi32>) {
// CHECK-NEXT: %[[V0:[A-Za-z0-9_$.-]+]] = arith.fptosi %[[X]] : vector<16xf32> to vector<16xi32>
// CHECK-NEXT: %[[V1:[A-Za-z0-9_$.-]+]] = arith.fptoui %[[X]] : vector<16xf32> to vector<16xi32>
// CHECK-NEXT: %[[V2:[A-Za-z0-9_$.-]+]] = arith.sitofp %[[I]] : vector<16xi32> to vector<16xf32>
// CHECK-NEXT: %[[V3:[A-Za-z0-9_$.-]+]] = arith.uitofp %[[I]] : vector<16xi32> to vector<16xf32>
// CHECK-NEXT: %[[V4:[A-Za-z0-9_$.-]+]] = arith.index_cast %[[N]] : vector<4xindex> to vector<4xi64>
// CHECK-NEXT: %[[V5:[A-Za-z0-9_$.-]+]] = arith.trunci %[[I]] : vector<16xi32> to vector<16xi16>
// CHECK-NEXT: %[[V6:[A-Za-z0-9_$.-]+]] = arith.extsi %[[I]] : vector<16xi32> to vector<16xi64>
// CHECK-NEXT: %[[V7:[A-Za-z0-9_$.-]+]] = arith.extui %[[B]] : vector<16xi1> to vector<16xi32>
// CHECK-NEXT: func.return %[[V0]], %[[V1]], %[[V2]], %[[V3]], %[[V4]], %[[V5]], %[[V6]], %[[V7]] : vector<16xi32>, vector<16xi32>, vector<16xf32>, vector<16xf32>, vector<4xi64>, vector<16xi16>, vector<16xi64>, vector<16xi32>
// CHECK-NEXT: }
func.func @casts_on_vectors(%x: vector<16xf32>, %i: vector<16xi32>, %n: vector<4xindex>, %b: vector<16xi1>) -> (vector<16xi32>, vector<16xi32>, vector<16xf32>, vector<16xf32>, vector<4xi64>, vector<16xi16>, vector<16xi64>, vector<16xi32>) {
  %0 = arith.fptosi %x : vector<16xf32> to vector<16xi32>
  %1 = arith.fptoui %x : vector<16xf32> to vector<16xi32>
  %2 = arith.sitofp %i : vector<16xi32> to vector<16xf32>
  %3 = arith.uitofp %i : vector<16xi32> to vector<16xf32>
  %4 = arith.index_cast %n : vector<4xindex> to vector<4xi64>
  %5 = arith.trunci %i : vector<16xi32> to vector<16xi16>
  %6 = arith.extsi %i : vector<16xi32> to vector<16xi64>
  %7 = arith.extui %b : vector<16xi1> to vector<16xi32>
  func.return %0, %1, %2, %3, %4, %5, %6, %7 : vector<16xi32>, vector<16xi32>, vector<16xf32>, vector<16xf32>, vector<4xi64>, vector<16xi16>, vector<16xi64>, vector<16xi32>
}

// -----

// CHECK-LABEL: func.func @casts_on_scalars
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: f64, %[[I:[A-Za-z0-9_$.-]+]]: i64) -> (i64, index, f64) {
// CHECK-NEXT: %[[V0:[A-Za-z0-9_$.-]+]] = arith.fptosi %[[X]] : f64 to i64
// CHECK-NEXT: %[[V1:[A-Za-z0-9_$.-]+]] = arith.index_cast %[[I]] : i64 to index
// CHECK-NEXT: %[[V2:[A-Za-z0-9_$.-]+]] = arith.sitofp %[[I]] : i64 to f64
// CHECK-NEXT: func.return %[[V0]], %[[V1]], %[[V2]] : i64, index, f64
// CHECK-NEXT: }
func.func @casts_on_scalars(%x: f64, %i: i64) -> (i64, index, f64) {
  %0 = arith.fptosi %x : f64 to i64
  %1 = arith.index_cast %i : i64 to index
  %2 = arith.sitofp %i : i64 to f64
  func.return %0, %1, %2 : i64, index, f64
}
