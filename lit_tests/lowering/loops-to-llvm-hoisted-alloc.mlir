// RUN: nimble-opt %s --split-input-file -p lower-loops-to-llvm | filecheck %s

// A heap buffer allocated inside a loop, sized by values known before the loop (a conv's
// im2col panel per panel of pixels), is allocated once before the loop and freed when the
// kernel returns, not mapped and unmapped at every iteration. A run-time size of 0 bytes
// calls no malloc: the buffer is null (free of null does nothing).

// CHECK-LABEL: llvm.func internal @panels_body
// CHECK: %[[SOME:[A-Za-z0-9_$.-]+]] = llvm.icmp "ne" %[[BYTES:[A-Za-z0-9_$.-]+]], %{{.*}} : i64
// CHECK-NEXT: %[[NULL:[A-Za-z0-9_$.-]+]] = llvm.inttoptr %{{.*}} : i64 to !llvm.ptr
// CHECK-NEXT: llvm.cond_br %[[SOME]], ^[[CALL:[A-Za-z0-9]+]], ^[[JOIN:[A-Za-z0-9]+]](%[[NULL]] : !llvm.ptr)
// CHECK-NEXT: ^[[CALL]]:
// CHECK-NEXT: %[[M:[A-Za-z0-9_$.-]+]] = llvm.call @malloc(%[[BYTES]]) : (i64) -> !llvm.ptr
// CHECK-NEXT: llvm.br ^[[JOIN]](%[[M]] : !llvm.ptr)
// CHECK-NEXT: ^[[JOIN]](%[[P:[A-Za-z0-9_$.-]+]]: !llvm.ptr):
// CHECK-NEXT: llvm.br ^[[HEADER:[A-Za-z0-9]+]](
// CHECK-NEXT: ^[[HEADER]](
// CHECK-NOT: @malloc
// CHECK: llvm.call @free(%[[P]]) : (!llvm.ptr) -> ()
// CHECK-NEXT: llvm.return
// CHECK-NOT: @malloc
// CHECK-LABEL: llvm.func @panels
func.func @panels(%a: memref<?x8xf32>, %out: memref<?x8xf32>) attributes {nimble.kernel = "panels"} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %n = memref.dim %a, %c0 : memref<?x8xf32>
  loop.foreach %i = %c0 to %n step %c1 {
    %panel = loop.alloc dram (%n) : memref<?x8xf32>
    loop.foreach %j = %c0 to %c8 step %c1 {
      %v = memref.load %a[%i, %j] : memref<?x8xf32>
      memref.store %v, %panel[%i, %j] : memref<?x8xf32>
      %w = memref.load %panel[%i, %j] : memref<?x8xf32>
      memref.store %w, %out[%i, %j] : memref<?x8xf32>
      loop.yield
    }
    loop.yield
  }
  func.return
}

// -----

// Sized inside the loop (by its index): allocated and freed at every iteration.

// CHECK-LABEL: llvm.func internal @rows_body
// CHECK: ^[[HEADER:[A-Za-z0-9]+]](%{{.*}}: i64):
// CHECK: %[[M:[A-Za-z0-9_$.-]+]] = llvm.call @malloc(%{{.*}}) : (i64) -> !llvm.ptr
// CHECK-NEXT: llvm.br ^[[JOIN:[A-Za-z0-9]+]](%[[M]] : !llvm.ptr)
// CHECK-NEXT: ^[[JOIN]](%[[P:[A-Za-z0-9_$.-]+]]: !llvm.ptr):
// CHECK: llvm.call @free(%[[P]]) : (!llvm.ptr) -> ()
// CHECK-NEXT: llvm.add
// CHECK-NEXT: llvm.br ^[[HEADER]](
func.func @rows(%a: memref<?x8xf32>, %out: memref<?x8xf32>) attributes {nimble.kernel = "rows"} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %n = memref.dim %a, %c0 : memref<?x8xf32>
  loop.foreach %i = %c0 to %n step %c1 {
    %m = arith.addi %i, %c1 : index
    %row = loop.alloc dram (%m) : memref<?x8xf32>
    loop.foreach %j = %c0 to %c8 step %c1 {
      %v = memref.load %a[%i, %j] : memref<?x8xf32>
      memref.store %v, %row[%i, %j] : memref<?x8xf32>
      %w = memref.load %row[%i, %j] : memref<?x8xf32>
      memref.store %w, %out[%i, %j] : memref<?x8xf32>
      loop.yield
    }
    loop.yield
  }
  func.return
}
