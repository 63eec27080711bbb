// RUN: nimble-opt %s --split-input-file -p tile-vectorize,canonicalize,cse | filecheck %s

// Lanes along the rows (`vector = 16` on the rows, `unroll = 16` on the columns): x
// packed transposed in panels of 16 rows (read by every tile; packed whole by every
// chunk of a split launch; nothing packed and no tiles without a whole panel), then per
// 16 x 16 tile, columns outer: whole panels two at a time for the first 8 columns, then
// for the other 8, 16 accumulators with lanes along the rows (per step one vector of each
// panel, one broadcast of W per column shared by both, and a prefetch of the next tile's
// rows of W: step k, row k % 16, from its line k - k % 16), stored by column in a
// [16, rows] buffer; an odd last panel alone, all 16 columns; then per panel its block
// loaded, transposed in registers (4 rounds of 16 shuffles), the bias and the stores with
// lanes along the columns. The rows left over by whole panels run as one more panel:
// packed element by element, zeros past the last row, its tiles' results through a
// register block, row by row.
// CHECK-LABEL: loop.kernel @rows_in_lanes
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: memref<?x32xf32>, %[[W:[A-Za-z0-9_$.-]+]]: memref<48x32xf32>, %[[B:[A-Za-z0-9_$.-]+]]: memref<48xf32>, %[[OUT:[A-Za-z0-9_$.-]+]]: memref<?x48xf32>)
// CHECK: %[[M:[A-Za-z0-9_$.-]+]] = memref.dim %[[X]], %{{.*}} : memref<?x32xf32>
// CHECK: %[[WHOLE:[A-Za-z0-9_$.-]+]] = arith.subi %[[M]], %{{.*}} : index
// CHECK-NEXT: %[[DIV:[A-Za-z0-9_$.-]+]] = arith.divsi %[[WHOLE]], %{{.*}} : index
// CHECK-NEXT: %[[PART:[A-Za-z0-9_$.-]+]] = arith.subi %[[M]], %[[WHOLE]] : index
// CHECK-NEXT: %[[MORE:[A-Za-z0-9_$.-]+]] = arith.cmpi sgt, %[[PART]], %{{.*}} : index
// CHECK-NEXT: %[[ONE:[A-Za-z0-9_$.-]+]] = arith.select %[[MORE]], %{{.*}}, %{{.*}} : index
// CHECK-NEXT: %[[ALL:[A-Za-z0-9_$.-]+]] = arith.addi %[[DIV]], %[[ONE]] : index
// CHECK-NEXT: %[[SOME:[A-Za-z0-9_$.-]+]] = arith.cmpi sgt, %[[M]], %{{.*}} : index
// CHECK-NEXT: %[[BLOCKS:[A-Za-z0-9_$.-]+]] = arith.select %[[SOME]], %[[DIV]], %{{.*}} : index
// CHECK-NEXT: %[[TOTAL:[A-Za-z0-9_$.-]+]] = arith.select %[[SOME]], %[[ALL]], %{{.*}} : index
// CHECK-NEXT: %[[TILES:[A-Za-z0-9_$.-]+]] = arith.select %[[SOME]], %{{.*}}, %{{.*}} : index
// CHECK-NEXT: %[[PANEL:[A-Za-z0-9_$.-]+]] = loop.alloc dram (%[[TOTAL]], %{{.*}}) : memref<?x?x16xf32>
// CHECK-NEXT: loop.foreach %[[PB:[A-Za-z0-9_$.-]+]] = %{{.*}} to %[[BLOCKS]] step %{{.*}} {
// CHECK: vector.load %[[X]][%{{.*}}, %{{.*}}] : memref<?x32xf32>, vector<16xf32>
// CHECK: vector.store %{{.*}}, %[[PANEL]][%[[PB]], %{{.*}}, %{{.*}}] : memref<?x?x16xf32>, vector<16xf32>
// CHECK: loop.foreach %[[LB:[A-Za-z0-9_$.-]+]] = %[[BLOCKS]] to %[[TOTAL]] step %{{.*}} {
// CHECK-NEXT: loop.foreach %[[L:[A-Za-z0-9_$.-]+]] = %{{.*}} to %[[PART]] step %{{.*}} {
// CHECK: memref.load %[[X]][%{{.*}}, %{{.*}}] : memref<?x32xf32>
// CHECK-NEXT: memref.store %{{.*}}, %[[PANEL]][%[[LB]], %{{.*}}, %[[L]]] : memref<?x?x16xf32>
// CHECK: loop.foreach %[[Z:[A-Za-z0-9_$.-]+]] = %[[PART]] to %{{.*}} step %{{.*}} {
// CHECK: memref.store %{{.*}}, %[[PANEL]][%[[LB]], %{{.*}}, %[[Z]]] : memref<?x?x16xf32>
// CHECK: %[[PAIRS:[A-Za-z0-9_$.-]+]] = arith.divsi %[[BLOCKS]], %{{.*}} : index
// CHECK-NEXT: %[[PAIRED:[A-Za-z0-9_$.-]+]] = arith.muli %[[PAIRS]], %{{.*}} : index
// CHECK: loop.foreach %[[J0:[A-Za-z0-9_$.-]+]] = %{{.*}} to %[[TILES]] step %{{.*}} schedule #loop.schedule<parallel> {
// CHECK-NEXT: %[[AFTER:[A-Za-z0-9_$.-]+]] = arith.addi %[[J0]], %{{.*}} : index
// CHECK-NEXT: %[[NEXT:[A-Za-z0-9_$.-]+]] = arith.minsi %[[AFTER]], %c32 : index
// CHECK-NEXT: %[[G:[A-Za-z0-9_$.-]+]] = loop.alloc dram (%[[WHOLE]]) : memref<16x?xf32>
// CHECK-NEXT: loop.foreach %[[Q:[A-Za-z0-9_$.-]+]] = %{{.*}} to %[[PAIRS]] step %{{.*}} {
// CHECK-NEXT: %[[B0:[A-Za-z0-9_$.-]+]] = arith.muli %[[Q]], %{{.*}} : index
// CHECK-NEXT: %[[B1:[A-Za-z0-9_$.-]+]] = arith.addi %[[B0]], %{{.*}} : index
// CHECK: loop.reduce %[[K:[A-Za-z0-9_$.-]+]] = %{{.*}} combine(add, add, add, add, add, add, add, add, add, add, add, add, add, add, add, add) {{.*}} schedule #loop.schedule<unroll = 4> {
// CHECK-NEXT: %[[XT:[A-Za-z0-9_$.-]+]] = vector.load %[[PANEL]][%[[B0]], %[[K]], %{{.*}}] : memref<?x?x16xf32>, vector<16xf32>
// CHECK-NEXT: %[[W0:[A-Za-z0-9_$.-]+]] = memref.load %[[W]][%[[J0]], %[[K]]] : memref<48x32xf32>
// CHECK-NEXT: %[[W0V:[A-Za-z0-9_$.-]+]] = vector.broadcast %[[W0]] : f32 to vector<16xf32>
// CHECK-NEXT: %{{.*}} = arith.mulf %[[XT]], %[[W0V]] : vector<16xf32>
// CHECK-COUNT-7: memref.load %[[W]]
// CHECK: %[[XT1:[A-Za-z0-9_$.-]+]] = vector.load %[[PANEL]][%[[B1]], %[[K]], %{{.*}}] : memref<?x?x16xf32>, vector<16xf32>
// CHECK-NEXT: %{{.*}} = arith.mulf %[[XT1]], %[[W0V]] : vector<16xf32>
// CHECK-NOT: memref.load %[[W]]
// CHECK: %[[ROWOF:[A-Za-z0-9_$.-]+]] = arith.andi %[[K]], %{{.*}} : index
// CHECK-NEXT: %[[LINE:[A-Za-z0-9_$.-]+]] = arith.subi %[[K]], %[[ROWOF]] : index
// CHECK-NEXT: %[[PROW:[A-Za-z0-9_$.-]+]] = arith.addi %[[NEXT]], %[[ROWOF]] : index
// CHECK-NEXT: loop.prefetch %[[W]][%[[PROW]], %[[LINE]]] {locality = 3 : i64} : memref<48x32xf32>
// CHECK-NEXT: loop.yield
// CHECK-COUNT-16: vector.store %{{.*}}, %[[G]][%{{.*}}, %{{.*}}] : memref<16x?xf32>, vector<16xf32>
// CHECK: loop.foreach %{{.*}} = %{{.*}} to %[[PAIRS]] step %{{.*}} {
// CHECK: loop.reduce
// CHECK-COUNT-16: vector.store %{{.*}}, %[[G]][%{{.*}}, %{{.*}}] : memref<16x?xf32>, vector<16xf32>
// CHECK: loop.foreach %[[ODD:[A-Za-z0-9_$.-]+]] = %[[PAIRED]] to %[[BLOCKS]] step %{{.*}} {
// CHECK: loop.reduce
// CHECK-NEXT: vector.load %[[PANEL]][%[[ODD]], %{{.*}}, %{{.*}}] : memref<?x?x16xf32>, vector<16xf32>
// CHECK-COUNT-16: vector.store %{{.*}}, %[[G]][%{{.*}}, %{{.*}}] : memref<16x?xf32>, vector<16xf32>
// CHECK: loop.foreach %[[TB:[A-Za-z0-9_$.-]+]] = %{{.*}} to %[[BLOCKS]] step %{{.*}} {
// CHECK-NEXT: %[[I0:[A-Za-z0-9_$.-]+]] = arith.muli %[[TB]], %{{.*}} : index
// CHECK-COUNT-16: vector.load %[[G]][%{{.*}}, %[[I0]]] : memref<16x?xf32>, vector<16xf32>
// CHECK-COUNT-64: vector.shuffle
// CHECK: %[[BIAS:[A-Za-z0-9_$.-]+]] = vector.load %[[B]][%[[J0]]] : memref<48xf32>, vector<16xf32>
// CHECK-COUNT-16: vector.store %{{.*}}, %[[OUT]][%{{.*}}, %[[J0]]] : memref<?x48xf32>, vector<16xf32>
// CHECK: loop.foreach %[[PT:[A-Za-z0-9_$.-]+]] = %[[BLOCKS]] to %[[TOTAL]] step %{{.*}} {
// CHECK: vector.load %[[PANEL]][%[[PT]], %{{.*}}, %{{.*}}] : memref<?x?x16xf32>, vector<16xf32>
// CHECK-COUNT-64: vector.shuffle
// CHECK: %[[RB:[A-Za-z0-9_$.-]+]] = loop.alloc reg : memref<16x16xf32>
// CHECK-COUNT-16: vector.store %{{.*}}, %[[RB]][%{{.*}}, %{{.*}}] : memref<16x16xf32>, vector<16xf32>
// CHECK-NEXT: loop.foreach %[[R:[A-Za-z0-9_$.-]+]] = %{{.*}} to %[[PART]] step %{{.*}} {
// CHECK-NEXT: %[[ROW:[A-Za-z0-9_$.-]+]] = vector.load %[[RB]][%[[R]], %{{.*}}] : memref<16x16xf32>, vector<16xf32>
// CHECK: vector.store %{{.*}}, %[[OUT]][%{{.*}}, %[[J0]]] : memref<?x48xf32>, vector<16xf32>
// CHECK-NOT: memref.store %{{.*}}, %[[OUT]]
// CHECK: loop.return
loop.kernel @rows_in_lanes(%x: memref<?x32xf32>, %w: memref<48x32xf32>, %b: memref<48xf32>, %out: memref<?x48xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c48 = arith.constant 48 : index
  %m = memref.dim %x, %c0 : memref<?x32xf32>
  %zero = arith.constant 0.0 : f32
  loop.foreach %i = %c0 to %m step %c1 schedule #loop.schedule<vector = 16, parallel> {
    loop.foreach %j = %c0 to %c48 step %c1 schedule #loop.schedule<unroll = 16> {
      %s = loop.reduce %k = %c0 to %c32 step %c1 combine(add) init(%zero) : f32 schedule #loop.schedule<unroll = 4> {
        %p = memref.load %x[%i, %k] : memref<?x32xf32>
        %q = memref.load %w[%j, %k] : memref<48x32xf32>
        %r = arith.mulf %p, %q : f32
        loop.yield %r : f32
      }
      %bias = memref.load %b[%j] : memref<48xf32>
      %y = arith.addf %s, %bias : f32
      memref.store %y, %out[%i, %j] : memref<?x48xf32>
      loop.yield
    }
    loop.yield
  }
  loop.return
}

// -----

// With `pack` on the columns, each tile first copies its 16 rows of W (K = 1024 here:
// rows 4 KiB apart share an L1 set) to a buffer with an odd number of 16-float lines per
// row, and its broadcasts read that copy (the rows left over too, as one more panel:
// W is never read in place).
// CHECK-LABEL: loop.kernel @staged_rows
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: memref<?x1024xf32>, %[[W:[A-Za-z0-9_$.-]+]]: memref<32x1024xf32>, %[[OUT:[A-Za-z0-9_$.-]+]]: memref<?x32xf32>)
// CHECK: %[[STRIDE:[A-Za-z0-9_$.-]+]] = arith.constant 1040 : index
// CHECK: loop.foreach %[[J0:[A-Za-z0-9_$.-]+]] = %{{.*}} to %{{.*}} step %{{.*}} schedule #loop.schedule<parallel> {
// CHECK-NEXT: %[[ROWS:[A-Za-z0-9_$.-]+]] = loop.alloc dram (%[[STRIDE]]) : memref<16x?xf32>
// CHECK-NEXT: loop.foreach %[[R:[A-Za-z0-9_$.-]+]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT: %[[J:[A-Za-z0-9_$.-]+]] = arith.addi %[[J0]], %[[R]] : index
// CHECK-NEXT: loop.foreach %[[KC:[A-Za-z0-9_$.-]+]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT: %[[ROW:[A-Za-z0-9_$.-]+]] = vector.load %[[W]][%[[J]], %[[KC]]] : memref<32x1024xf32>, vector<16xf32>
// CHECK-NEXT: vector.store %[[ROW]], %[[ROWS]][%[[R]], %[[KC]]] : memref<16x?xf32>, vector<16xf32>
// CHECK: loop.reduce %[[K:[A-Za-z0-9_$.-]+]] =
// CHECK-NEXT: vector.load %{{.*}}[%{{.*}}, %[[K]], %{{.*}}] : memref<?x?x16xf32>, vector<16xf32>
// CHECK-NEXT: memref.load %[[ROWS]][%{{.*}}, %[[K]]] : memref<16x?xf32>
// CHECK-NOT: memref.load %[[W]]
// CHECK: loop.alloc reg : memref<16x16xf32>
// CHECK-NOT: memref.load %[[W]]
// CHECK: loop.return
loop.kernel @staged_rows(%x: memref<?x1024xf32>, %w: memref<32x1024xf32>, %out: memref<?x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c1024 = arith.constant 1024 : index
  %m = memref.dim %x, %c0 : memref<?x1024xf32>
  %zero = arith.constant 0.0 : f32
  loop.foreach %i = %c0 to %m step %c1 schedule #loop.schedule<vector = 16, parallel> {
    loop.foreach %j = %c0 to %c32 step %c1 schedule #loop.schedule<unroll = 16, pack> {
      %s = loop.reduce %k = %c0 to %c1024 step %c1 combine(add) init(%zero) : f32 schedule #loop.schedule<unroll = 4> {
        %p = memref.load %x[%i, %k] : memref<?x1024xf32>
        %q = memref.load %w[%j, %k] : memref<32x1024xf32>
        %r = arith.mulf %p, %q : f32
        loop.yield %r : f32
      }
      memref.store %s, %out[%i, %j] : memref<?x32xf32>
      loop.yield
    }
    loop.yield
  }
  loop.return
}
