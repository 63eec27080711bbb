// RUN: nimble-opt %s -p 'fuse-ops,lower-graph-to-loops,canonicalize,cse' | filecheck %s --check-prefix=CPU
// RUN: nimble-opt %s -p 'fuse-ops,place-devices{default=opencl},lower-graph-to-loops,canonicalize,cse' | filecheck %s --check-prefix=DEVICE

// roi_align stages each box's sample rows (then columns) in tables before the output
// nest: two source indices, two weights, and an 'outside' flag per (box, bin, sample).
// On the CPU they are sized by the largest grid of the call (a max over the boxes); the
// sample positions carry `nimble.exact` (no fused multiply-add: their rounding decides
// whether a sample lies inside the map).

// CPU-LABEL: loop.kernel @roi_roi_align_0
// CPU-SAME: (%[[F:[0-9]+]]: memref<1x64x?x?xf32>, %[[R:[0-9]+]]: memref<?x4xf32>, %[[I:[0-9]+]]: memref<?xi64>, %[[OUT:[0-9]+]]: memref<?x64x7x7xf32>)
// CPU: %[[K:[0-9]+]] = memref.dim %[[R]], %{{[0-9]+}} : memref<?x4xf32>
// CPU-NEXT: %[[KI:[0-9]+]] = memref.dim %[[I]], %{{[0-9]+}} : memref<?xi64>
// CPU: %[[MOST:[0-9]+]] = loop.reduce %{{[0-9]+}} = %{{[0-9]+}} to %[[K]] step %{{[0-9]+}} combine(max) init(%{{[0-9]+}}) : i64 {
// CPU: arith.mulf %{{[0-9]+}}, %{{[0-9]+}} {nimble.exact} : f64
// CPU: math.ceil
// CPU: %[[GRID:[0-9]+]] = arith.index_cast %[[MOST]] : i64 to index
// CPU-NEXT: %[[LOW:[0-9]+]] = loop.alloc dram (%[[K]], %[[GRID]]) : memref<?x7x?xi64>
// CPU-NEXT: %[[HIGH:[0-9]+]] = loop.alloc dram (%[[K]], %[[GRID]]) : memref<?x7x?xi64>
// CPU-NEXT: %[[WLOW:[0-9]+]] = loop.alloc dram (%[[K]], %[[GRID]]) : memref<?x7x?xf64>
// CPU-NEXT: %[[WHIGH:[0-9]+]] = loop.alloc dram (%[[K]], %[[GRID]]) : memref<?x7x?xf64>
// CPU-NEXT: %[[OUTSIDE:[0-9]+]] = loop.alloc dram (%[[K]], %[[GRID]]) : memref<?x7x?xi64>
// CPU-NEXT: loop.foreach %[[BOX:[0-9]+]] = %{{[0-9]+}} to %[[K]]
// CPU: %[[G:[0-9]+]] = arith.minsi %{{[0-9]+}}, %[[GRID]] : index
// CPU: loop.foreach %[[BIN:[0-9]+]] =
// CPU-NEXT: loop.foreach %[[S:[0-9]+]] = %{{[0-9]+}} to %[[G]]
// CPU: %[[STEP:[0-9]+]] = arith.mulf %{{[0-9]+}}, %{{[0-9]+}} {nimble.exact} : f64
// CPU-NEXT: %{{[0-9]+}} = arith.addf %{{[0-9]+}}, %[[STEP]] {nimble.exact} : f64
// CPU: memref.store %{{[0-9]+}}, %[[LOW]][%[[BOX]], %[[BIN]], %[[S]]] : memref<?x7x?xi64>
// CPU: memref.store %{{[0-9]+}}, %[[OUTSIDE]][%[[BOX]], %[[BIN]], %[[S]]] : memref<?x7x?xi64>
// The output nest reads the tables for every channel, never past their grid.
// CPU: loop.foreach %[[N:[0-9]+]] = %{{[0-9]+}} to %[[KI]]
// CPU-NEXT: loop.foreach %[[C:[0-9]+]] =
// CPU-NEXT: loop.foreach %[[PH:[0-9]+]] =
// CPU-NEXT: loop.foreach %[[PW:[0-9]+]] =
// CPU: %[[GH:[0-9]+]] = arith.minsi %{{[0-9]+}}, %[[GRID]] : index
// CPU-NEXT: %[[GW:[0-9]+]] = arith.minsi %{{[0-9]+}}, %{{[0-9]+}} : index
// CPU-NEXT: %{{[0-9]+}} = loop.reduce %[[IY:[0-9]+]] = %{{[0-9]+}} to %[[GH]]
// CPU-NEXT: %{{[0-9]+}} = loop.reduce %[[IX:[0-9]+]] = %{{[0-9]+}} to %[[GW]]
// CPU-NEXT: %{{[0-9]+}} = memref.load %[[LOW]][%[[N]], %[[PH]], %[[IY]]] : memref<?x7x?xi64>
// CPU: memref.load %[[F]][%{{[0-9]+}}, %[[C]], %{{[0-9]+}}, %{{[0-9]+}}] : memref<1x64x?x?xf32>
// CPU: memref.store %{{[0-9]+}}, %[[OUT]][%[[N]], %[[C]], %[[PH]], %[[PW]]]

// A device kernel's buffers are sized on the host: its tables hold 16 samples a bin,
// and a box with a larger grid samples inline (the tables' nest then runs no step).

// DEVICE-LABEL: loop.kernel @roi_roi_align_0
// DEVICE: %[[CAP:[0-9]+]] = arith.constant 16 : index
// DEVICE: %[[LOW:[0-9]+]] = loop.alloc dram (%{{[0-9]+}}) : memref<?x7x16xi64>
// DEVICE-NOT: combine(max)
// DEVICE: %[[FITS_H:[0-9]+]] = arith.cmpi sle, %[[GH:[0-9]+]], %[[CAP]] : index
// DEVICE-NEXT: %[[FITS_W:[0-9]+]] = arith.cmpi sle, %[[GW:[0-9]+]], %[[CAP]] : index
// DEVICE-NEXT: %[[FITS:[0-9]+]] = arith.andi %[[FITS_H]], %[[FITS_W]] : i1
// DEVICE-NEXT: %[[TABLED:[0-9]+]] = arith.select %[[FITS]], %{{[0-9]+}}, %[[ZERO:[0-9]+]] : index
// DEVICE-NEXT: %{{[0-9]+}} = loop.reduce %{{[0-9]+}} = %{{[0-9]+}} to %[[TABLED]]
// DEVICE: memref.load %[[LOW]]
// DEVICE: %[[INLINE:[0-9]+]] = arith.select %[[FITS]], %[[ZERO]], %[[GH]] : index
// DEVICE-NEXT: %{{[0-9]+}} = loop.reduce %{{[0-9]+}} = %{{[0-9]+}} to %[[INLINE]]
// DEVICE-NEXT: %{{[0-9]+}} = loop.reduce %{{[0-9]+}} = %{{[0-9]+}} to %[[GW]]
// DEVICE: math.floor

func.func @roi(%f: tensor<1x64x?x?xf32>, %r: tensor<?x4xf32>, %i: tensor<?xi64>) -> tensor<?x64x7x7xf32> {
  %y = graph.roi_align %f, %r, %i {output_height = 7 : i64, output_width = 7 : i64, spatial_scale = 2.5e-01 : f64} : (tensor<1x64x?x?xf32>, tensor<?x4xf32>, tensor<?xi64>) -> tensor<?x64x7x7xf32>
  func.return %y : tensor<?x64x7x7xf32>
}
