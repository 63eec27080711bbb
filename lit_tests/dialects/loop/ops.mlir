// RUN: nimble-opt %s --split-input-file | filecheck %s
// RUN: nimble-opt %s --split-input-file --print-op-generic | nimble-opt --split-input-file | filecheck %s

// CHECK-LABEL: func.func @foreach_schedule
// CHECK-SAME: (%[[A:[A-Za-z0-9_$.-]+]]: memref<?xf32>, %[[B:[A-Za-z0-9_$.-]+]]: memref<?xf32>) {
// CHECK-NEXT: %[[C0:[A-Za-z0-9_$.-]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[C1:[A-Za-z0-9_$.-]+]] = arith.constant 1 : index
// CHECK-NEXT: %[[N:[A-Za-z0-9_$.-]+]] = memref.dim %[[A]], %[[C0]] : memref<?xf32>
// CHECK-NEXT: loop.foreach %[[I:[A-Za-z0-9_$.-]+]] = %[[C0]] to %[[N]] step %[[C1]] schedule #loop.schedule<tile = 64, vector = 16, unroll = 2, par = 4, parallel, pipeline, pack, mask, dots, grain = 4> {
// CHECK-NEXT: %[[X:[A-Za-z0-9_$.-]+]] = memref.load %[[A]][%[[I]]] : memref<?xf32>
// CHECK-NEXT: memref.store %[[X]], %[[B]][%[[I]]] : memref<?xf32>
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: func.return
// CHECK-NEXT: }

func.func @foreach_schedule(%a: memref<?xf32>, %b: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c0 : memref<?xf32>
  loop.foreach %i = %c0 to %n step %c1 schedule #loop.schedule<tile = 64, vector = 16, unroll = 2, par = 4, parallel, pipeline, pack, mask, dots, grain = 4> {
    %x = memref.load %a[%i] : memref<?xf32>
    memref.store %x, %b[%i] : memref<?xf32>
    loop.yield
  }
  func.return
}

// -----

// CHECK-LABEL: func.func @reduce_two
// CHECK-SAME: (%[[A:[A-Za-z0-9_$.-]+]]: memref<?xf32>) -> (f32, f32) {
// CHECK-NEXT: %[[C0:[A-Za-z0-9_$.-]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[C1:[A-Za-z0-9_$.-]+]] = arith.constant 1 : index
// CHECK-NEXT: %[[N:[A-Za-z0-9_$.-]+]] = memref.dim %[[A]], %[[C0]] : memref<?xf32>
// CHECK-NEXT: %[[Z:[A-Za-z0-9_$.-]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[S:[A-Za-z0-9_$.-]+]], %[[M:[A-Za-z0-9_$.-]+]] = loop.reduce %[[K:[A-Za-z0-9_$.-]+]] = %[[C0]] to %[[N]] step %[[C1]] combine(add, max) init(%[[Z]], %[[Z]]) : f32, f32 {
// CHECK-NEXT: %[[X:[A-Za-z0-9_$.-]+]] = memref.load %[[A]][%[[K]]] : memref<?xf32>
// CHECK-NEXT: loop.yield %[[X]], %[[X]] : f32, f32
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[S]], %[[M]] : f32, f32
// CHECK-NEXT: }
func.func @reduce_two(%a: memref<?xf32>) -> (f32, f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c0 : memref<?xf32>
  %z = arith.constant 0.0 : f32
  %s, %m = loop.reduce %k = %c0 to %n step %c1 combine(add, max) init(%z, %z) : f32, f32 {
    %x = memref.load %a[%k] : memref<?xf32>
    loop.yield %x, %x : f32, f32
  }
  func.return %s, %m : f32, f32
}

// -----

// CHECK-LABEL: func.func @memories
// CHECK-SAME: (%[[N:[A-Za-z0-9_$.-]+]]: index) {
// CHECK-NEXT: %[[D:[A-Za-z0-9_$.-]+]] = loop.alloc dram (%[[N]]) : memref<?x32xf32>
// CHECK-NEXT: %[[S:[A-Za-z0-9_$.-]+]] = loop.alloc sram : memref<64x32xf32>
// CHECK-NEXT: %[[R:[A-Za-z0-9_$.-]+]] = loop.alloc reg : memref<8x32xf32>
// CHECK-NEXT: func.return
// CHECK-NEXT: }
func.func @memories(%n: index) {
  %d = loop.alloc dram (%n) : memref<?x32xf32>
  %s = loop.alloc sram : memref<64x32xf32>
  %r = loop.alloc reg : memref<8x32xf32>
  func.return
}

// -----

// CHECK-LABEL: func.func @nested_vector
// CHECK-SAME: (%[[A:[A-Za-z0-9_$.-]+]]: memref<?x16xf32>, %[[OUT:[A-Za-z0-9_$.-]+]]: memref<16xf32>) {
// CHECK-NEXT: %[[C0:[A-Za-z0-9_$.-]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[C1:[A-Za-z0-9_$.-]+]] = arith.constant 1 : index
// CHECK-NEXT: %[[N:[A-Za-z0-9_$.-]+]] = memref.dim %[[A]], %[[C0]] : memref<?x16xf32>
// CHECK-NEXT: %[[Z:[A-Za-z0-9_$.-]+]] = arith.constant dense<0.000000e+00> : vector<16xf32>
// CHECK-NEXT: %[[V:[A-Za-z0-9_$.-]+]] = loop.reduce %[[I:[A-Za-z0-9_$.-]+]] = %[[C0]] to %[[N]] step %[[C1]] combine(add) init(%[[Z]]) : vector<16xf32> schedule #loop.schedule<unroll = 4> {
// CHECK-NEXT: %[[X:[A-Za-z0-9_$.-]+]] = vector.load %[[A]][%[[I]], %[[C0]]] : memref<?x16xf32>, vector<16xf32>
// CHECK-NEXT: loop.yield %[[X]] : vector<16xf32>
// CHECK-NEXT: }
// CHECK-NEXT: vector.store %[[V]], %[[OUT]][%[[C0]]] : memref<16xf32>, vector<16xf32>
// CHECK-NEXT: func.return
// CHECK-NEXT: }
func.func @nested_vector(%a: memref<?x16xf32>, %out: memref<16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c0 : memref<?x16xf32>
  %z = arith.constant dense<0.0> : vector<16xf32>
  %v = loop.reduce %i = %c0 to %n step %c1 combine(add) init(%z) : vector<16xf32> schedule #loop.schedule<unroll = 4> {
    %x = vector.load %a[%i, %c0] : memref<?x16xf32>, vector<16xf32>
    loop.yield %x : vector<16xf32>
  }
  vector.store %v, %out[%c0] : memref<16xf32>, vector<16xf32>
  func.return
}

// -----

// CHECK-LABEL: func.func @prefetch
// CHECK-SAME: (%[[W:[A-Za-z0-9_$.-]+]]: memref<?x64xf32>, %[[J:[A-Za-z0-9_$.-]+]]: index, %[[K:[A-Za-z0-9_$.-]+]]: index) {
// CHECK-NEXT: loop.prefetch %[[W]][%[[J]], %[[K]]] {locality = 0 : i64} : memref<?x64xf32>
// CHECK-NEXT: func.return
// CHECK-NEXT: }
func.func @prefetch(%w: memref<?x64xf32>, %j: index, %k: index) {
  loop.prefetch %w[%j, %k] {locality = 0 : i64} : memref<?x64xf32>
  func.return
}
