// RUN: nimble-opt %s --split-input-file -p "int-range-optimizations{kernels=false}" | filecheck %s

// With kernels=false (the memory stage: the loops stage folded the kernels and made them
// final) a host function's bounds fold and a kernel is left as it is.

// CHECK-LABEL: func.func @host
// CHECK-NEXT: %[[ZERO:[A-Za-z0-9_$.-]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[N:[A-Za-z0-9_$.-]+]] = dynshape.dim %{{.*}}, 0 : tensor<?x4xf32>
// CHECK-NEXT: func.return %[[N]] : index
func.func @host(%xs: tensor<?x4xf32>) -> index {
  %zero = arith.constant 0 : index
  %n = dynshape.dim %xs, 0 : tensor<?x4xf32>
  %m = arith.maxsi %n, %zero : index
  func.return %m : index
}

// -----

// CHECK-LABEL: loop.kernel @kernel
// CHECK: loop.foreach %[[I:[A-Za-z0-9_$.-]+]] =
// CHECK-NEXT: %[[NEG:[A-Za-z0-9_$.-]+]] = arith.cmpi slt, %[[I]], %{{.*}} : index
// CHECK-NEXT: %[[J:[A-Za-z0-9_$.-]+]] = arith.select %[[NEG]]
loop.kernel @kernel(%xs: memref<?xindex>) {
  %zero = arith.constant 0 : index
  %one = arith.constant 1 : index
  %n = memref.dim %xs, %zero : memref<?xindex>
  loop.foreach %i = %zero to %n step %one {
    %neg = arith.cmpi slt, %i, %zero : index
    %j = arith.select %neg, %n, %i : index
    memref.store %j, %xs[%i] : memref<?xindex>
  }
  loop.return
}
