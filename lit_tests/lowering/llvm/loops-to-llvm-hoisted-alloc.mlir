// RUN: nimble-opt %s --split-input-file -p lower-loops-to-llvm | filecheck %s

// A heap buffer allocated inside a loop, sized by values known before the loop (a conv's
// im2col panel per panel of pixels), is made once and freed when the kernel returns, not
// taken and given back at every iteration: its address lives in a slot, 0 before the
// loop, and the first iteration that gets to it allocates it (from the runtime's kept
// blocks, runtime/scratch.py; a loop that runs no iteration allocates nothing; freeing
// null does nothing).

// CHECK-LABEL: llvm.func internal @panels_body
// CHECK: llvm.alloca %{{.*}} x i64 {alignment = 8 : i64} : (i64) -> !llvm.ptr
// CHECK: %[[SLOT:[A-Za-z0-9_$.-]+]] = llvm.inttoptr %{{.*}} : i64 to !llvm.ptr
// CHECK: llvm.store %[[ZERO:[A-Za-z0-9_$.-]+]], %[[SLOT]] : i64, !llvm.ptr
// CHECK-NEXT: llvm.br ^[[HEADER:[A-Za-z0-9]+]](
// CHECK-NEXT: ^[[HEADER]](
// CHECK-NOT: @nimble_scratch_alloc
// CHECK: %[[BITS:[A-Za-z0-9_$.-]+]] = llvm.load %[[SLOT]] : !llvm.ptr -> i64
// CHECK-NEXT: %[[MADE:[A-Za-z0-9_$.-]+]] = llvm.icmp "ne" %[[BITS]], %[[ZERO]] : i64
// CHECK-NEXT: %[[OLD:[A-Za-z0-9_$.-]+]] = llvm.inttoptr %[[BITS]] : i64 to !llvm.ptr
// CHECK-NEXT: llvm.cond_br %[[MADE]], ^[[JOIN:[A-Za-z0-9]+]](%[[OLD]] : !llvm.ptr), ^[[CALL:[A-Za-z0-9]+]]
// CHECK: %[[LAST:[A-Za-z0-9_$.-]+]] = llvm.load %[[SLOT]] : !llvm.ptr -> i64
// CHECK-NEXT: %[[P:[A-Za-z0-9_$.-]+]] = llvm.inttoptr %[[LAST]] : i64 to !llvm.ptr
// CHECK-NEXT: llvm.call @nimble_scratch_free(%[[P]]) : (!llvm.ptr) -> ()
// CHECK-NEXT: llvm.return
// CHECK-NEXT: ^[[CALL]]:
// CHECK-NEXT: %[[M:[A-Za-z0-9_$.-]+]] = llvm.call @nimble_scratch_alloc(%{{.*}}) : (i64) -> !llvm.ptr
// CHECK-NEXT: %[[MBITS:[A-Za-z0-9_$.-]+]] = llvm.ptrtoint %[[M]] : !llvm.ptr to i64
// CHECK-NEXT: llvm.store %[[MBITS]], %[[SLOT]] : i64, !llvm.ptr
// CHECK-NEXT: llvm.br ^[[JOIN]](%[[M]] : !llvm.ptr)
// CHECK-NEXT: ^[[JOIN]](
// CHECK-NOT: @nimble_scratch_alloc
// CHECK-LABEL: llvm.func @panels
loop.kernel @panels(%a: memref<?x8xf32>, %out: memref<?x8xf32>) {
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
  loop.return
}

// -----

// Sized inside the loop (by its index): allocated and freed at every iteration.

// CHECK-LABEL: llvm.func internal @rows_body
// CHECK: ^[[HEADER:[A-Za-z0-9]+]](%{{.*}}: i64):
// CHECK: %[[M:[A-Za-z0-9_$.-]+]] = llvm.call @nimble_scratch_alloc(%{{.*}}) : (i64) -> !llvm.ptr
// CHECK-NEXT: llvm.br ^[[JOIN:[A-Za-z0-9]+]](%[[M]] : !llvm.ptr)
// CHECK-NEXT: ^[[JOIN]](%[[P:[A-Za-z0-9_$.-]+]]: !llvm.ptr):
// CHECK: llvm.call @nimble_scratch_free(%[[P]]) : (!llvm.ptr) -> ()
// CHECK-NEXT: llvm.add
// CHECK-NEXT: llvm.br ^[[HEADER]](
loop.kernel @rows(%a: memref<?x8xf32>, %out: memref<?x8xf32>) {
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
  loop.return
}
