// RUN: nimble-opt %s --split-input-file --verify-diagnostics

func.func @reduce_types(%n: index, %z: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{'loop.reduce' op body yields (index) but the accumulators are (f32)}}
  %s = loop.reduce %k = %c0 to %n step %c1 combine(add) init(%z) : f32 {
    loop.yield %k : index
  }
  func.return
}

// -----

func.func @reduce_combiner(%n: index, %z: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{'loop.reduce' op unknown combiner 'avg' (expected one of add, mul, max, min)}}
  %s = loop.reduce %k = %c0 to %n step %c1 combine(avg) init(%z) : f32 {
    loop.yield %z : f32
  }
  func.return
}

// -----

func.func @reduce_count(%n: index, %z: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{'loop.reduce' op has 1 accumulators but 2 combiners}}
  %s = loop.reduce %k = %c0 to %n step %c1 combine(add, max) init(%z) : f32 {
    loop.yield %z : f32
  }
  func.return
}

// -----

func.func @foreach_yields(%n: index, %z: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{'loop.foreach' op body of loop.foreach yields no values}}
  loop.foreach %i = %c0 to %n step %c1 {
    loop.yield %z : f32
  }
  func.return
}

// -----

func.func @alloc_sizes(%n: index) {
  // expected-error @+1 {{'loop.alloc' op expected 2 dynamic size operands (one per '?'), got 1}}
  %b = loop.alloc dram (%n) : memref<?x?xf32>
  func.return
}

// -----

func.func @alloc_reg_dynamic(%n: index) {
  // expected-error @+1 {{'loop.alloc' op a reg-level buffer must have a static shape}}
  %b = loop.alloc reg (%n) : memref<?xf32>
  func.return
}

// -----

func.func @alloc_level() {
  // expected-error @+1 {{expected a memory level (dram, sram, reg)}}
  %b = loop.alloc l3 : memref<4xf32>
  func.return
}

// -----

func.func @schedule_entry(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{unknown schedule entry 'fast'}}
  loop.foreach %i = %c0 to %n step %c1 schedule #loop.schedule<fast> {
    loop.yield
  }
  func.return
}

// -----

func.func @schedule_zero(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{'vector' must be at least 1}}
  loop.foreach %i = %c0 to %n step %c1 schedule #loop.schedule<vector = 0> {
    loop.yield
  }
  func.return
}

// -----

func.func @yield_parent() {
  // expected-error @+1 {{'loop.yield' expects parent op to be one of 'loop.foreach', 'loop.reduce'}}
  loop.yield
}

// -----

func.func @prefetch_indices(%w: memref<?x64xf32>, %j: index) {
  // expected-error @+1 {{'loop.prefetch' op expected 2 indices (one per dim), got 1}}
  loop.prefetch %w[%j] {locality = 3 : i64} : memref<?x64xf32>
  func.return
}

// -----

func.func @prefetch_locality(%w: memref<?x64xf32>, %j: index) {
  // expected-error @+1 {{'loop.prefetch' op locality must be 0 to 3, got 4}}
  loop.prefetch %w[%j, %j] {locality = 4 : i64} : memref<?x64xf32>
  func.return
}
