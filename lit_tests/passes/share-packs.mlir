// RUN: nimble-opt %s --split-input-file -p share-packs | filecheck %s

// Two nests pack the same rows of %x into equal buffers (the second with constants of
// its own, as CSE may leave them): the second pack goes, its reader reads the first.
// CHECK-LABEL: loop.kernel @same_pack_twice
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: memref<?x4xf32>, %[[O1:[A-Za-z0-9_$.-]+]]: memref<?x4xf32>, %[[O2:[A-Za-z0-9_$.-]+]]: memref<?x4xf32>)
// CHECK: %[[P:[A-Za-z0-9_$.-]+]] = loop.alloc dram (%[[N:[A-Za-z0-9_$.-]+]]) : memref<?x4xf32>
// CHECK-NEXT: loop.foreach
// CHECK: memref.store %{{.*}}, %[[P]][%{{.*}}, %{{.*}}] : memref<?x4xf32>
// CHECK: memref.load %[[P]][%{{.*}}, %{{.*}}] : memref<?x4xf32>
// CHECK: memref.store %{{.*}}, %[[O1]][%{{.*}}, %{{.*}}] : memref<?x4xf32>
// CHECK-NOT: loop.alloc
// CHECK: memref.load %[[P]][%{{.*}}, %{{.*}}] : memref<?x4xf32>
// CHECK: memref.store %{{.*}}, %[[O2]][%{{.*}}, %{{.*}}] : memref<?x4xf32>
// CHECK: loop.return

loop.kernel @same_pack_twice(%x: memref<?x4xf32>, %o1: memref<?x4xf32>, %o2: memref<?x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %n = memref.dim %x, %c0 : memref<?x4xf32>
  %p1 = loop.alloc dram (%n) : memref<?x4xf32>
  loop.foreach %i = %c0 to %n step %c1 {
    loop.foreach %k = %c0 to %c4 step %c1 {
      %v = memref.load %x[%i, %k] : memref<?x4xf32>
      memref.store %v, %p1[%i, %k] : memref<?x4xf32>
      loop.yield
    }
    loop.yield
  }
  loop.foreach %i = %c0 to %n step %c1 schedule #loop.schedule<parallel> {
    loop.foreach %k = %c0 to %c4 step %c1 {
      %v = memref.load %p1[%i, %k] : memref<?x4xf32>
      memref.store %v, %o1[%i, %k] : memref<?x4xf32>
      loop.yield
    }
    loop.yield
  }
  %p2 = loop.alloc dram (%n) : memref<?x4xf32>
  loop.foreach %i = %c0 to %n step %c1 {
    %four = arith.constant 4 : index
    loop.foreach %k = %c0 to %four step %c1 {
      %v = memref.load %x[%i, %k] : memref<?x4xf32>
      memref.store %v, %p2[%i, %k] : memref<?x4xf32>
      loop.yield
    }
    loop.yield
  }
  loop.foreach %i = %c0 to %n step %c1 schedule #loop.schedule<parallel> {
    loop.foreach %k = %c0 to %c4 step %c1 {
      %v = memref.load %p2[%i, %k] : memref<?x4xf32>
      memref.store %v, %o2[%i, %k] : memref<?x4xf32>
      loop.yield
    }
    loop.yield
  }
  loop.return
}

// -----

// Packs that differ are both kept: another column order, and a source the kernel writes
// (between the packs it could change).
// CHECK-LABEL: loop.kernel @different_packs
// CHECK-COUNT-4: loop.alloc dram
// CHECK-NOT: loop.alloc
// CHECK: loop.return

loop.kernel @different_packs(%x: memref<?x4xf32>, %y: memref<?x4xf32>, %o: memref<?x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %n = memref.dim %x, %c0 : memref<?x4xf32>
  %p1 = loop.alloc dram (%n) : memref<?x4xf32>
  loop.foreach %i = %c0 to %n step %c1 {
    loop.foreach %k = %c0 to %c4 step %c1 {
      %v = memref.load %x[%i, %k] : memref<?x4xf32>
      memref.store %v, %p1[%i, %k] : memref<?x4xf32>
      loop.yield
    }
    loop.yield
  }
  %p2 = loop.alloc dram (%n) : memref<?x4xf32>
  loop.foreach %i = %c0 to %n step %c1 {
    loop.foreach %k = %c0 to %c4 step %c1 {
      %r = arith.subi %c3, %k : index
      %v = memref.load %x[%i, %r] : memref<?x4xf32>
      memref.store %v, %p2[%i, %k] : memref<?x4xf32>
      loop.yield
    }
    loop.yield
  }
  %p3 = loop.alloc dram (%n) : memref<?x4xf32>
  loop.foreach %i = %c0 to %n step %c1 {
    loop.foreach %k = %c0 to %c4 step %c1 {
      %v = memref.load %y[%i, %k] : memref<?x4xf32>
      memref.store %v, %p3[%i, %k] : memref<?x4xf32>
      loop.yield
    }
    loop.yield
  }
  %p4 = loop.alloc dram (%n) : memref<?x4xf32>
  loop.foreach %i = %c0 to %n step %c1 {
    loop.foreach %k = %c0 to %c4 step %c1 {
      %v = memref.load %y[%i, %k] : memref<?x4xf32>
      memref.store %v, %p4[%i, %k] : memref<?x4xf32>
      loop.yield
    }
    loop.yield
  }
  loop.foreach %i = %c0 to %n step %c1 {
    loop.foreach %k = %c0 to %c4 step %c1 {
      %a = memref.load %p1[%i, %k] : memref<?x4xf32>
      %b = memref.load %p2[%i, %k] : memref<?x4xf32>
      %c = memref.load %p3[%i, %k] : memref<?x4xf32>
      %d = memref.load %p4[%i, %k] : memref<?x4xf32>
      %ab = arith.addf %a, %b : f32
      %cd = arith.addf %c, %d : f32
      %s = arith.addf %ab, %cd : f32
      memref.store %s, %o[%i, %k] : memref<?x4xf32>
      memref.store %s, %y[%i, %k] : memref<?x4xf32>
      loop.yield
    }
    loop.yield
  }
  loop.return
}
