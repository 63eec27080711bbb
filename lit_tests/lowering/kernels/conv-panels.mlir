// RUN: nimble-opt %s --split-input-file -p lower-graph-to-loops | filecheck %s

// A conv read at its own pixels runs over panels of 64 flattened pixels, the panel loop
// outside the output channels; each panel stages its im2col rows (18 x 64 here), then
// the matrix product over (c, kh, kw) reads them.

// Stride 1, output rows as long as input rows: a panel's row for tap (kh, kw) is one run
// of the flat input plane shifted by (kh - 1) * w + kw - 1, zero above and below the
// image (a prefix and a suffix of the panel) and where `edge[kw, column]` says the tap
// wraps past the left or right edge (set once per panel, per output row it spans).

// CHECK-LABEL: loop.kernel @same_conv2d_0
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: memref<1x2x?x?xf32>, %[[W:[A-Za-z0-9_$.-]+]]: memref<3x2x3x3xf32>, %[[Y:[A-Za-z0-9_$.-]+]]: memref<1x3x?x?xf32>)
// CHECK-DAG: %[[H:[A-Za-z0-9_$.-]+]] = memref.dim %[[X]], %{{.*}} : memref<1x2x?x?xf32>
// CHECK-DAG: %[[WIDTH:[A-Za-z0-9_$.-]+]] = memref.dim %[[X]], %{{.*}} : memref<1x2x?x?xf32>
// CHECK: %[[FLAT:[A-Za-z0-9_$.-]+]] = memref.collapse_shape %[[X]] {{\[\[}}0 : i64], [1 : i64], [2 : i64, 3 : i64]] : memref<1x2x?x?xf32> into memref<1x2x?xf32>
// The panel loop steps over the pixels 64 at a time (a split between chunks can then
// tell whole panels from a short last one).
// CHECK: %[[PIXELS:[A-Za-z0-9_$.-]+]] = arith.muli %{{.*}}, %{{.*}} : index
// CHECK-NEXT: loop.foreach %[[N:[A-Za-z0-9_$.-]+]] =
// CHECK-NEXT: loop.foreach %[[PANEL:[A-Za-z0-9_$.-]+]] = %{{.*}} to %[[PIXELS]] step %[[C64:[A-Za-z0-9_$.-]+]] {
// CHECK-NEXT: %{{.*}} = arith.subi %[[PIXELS]], %[[PANEL]] : index
// CHECK-NEXT: %{{.*}} = arith.minsi %{{.*}}, %[[C64]] : index
// CHECK: %[[COL:[A-Za-z0-9_$.-]+]] = loop.alloc dram : memref<18x64xf32>
// CHECK-NEXT: %[[ZERO:[A-Za-z0-9_$.-]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[PLANE:[A-Za-z0-9_$.-]+]] = arith.muli %[[H]], %[[WIDTH]] : index
// CHECK-NEXT: %[[ONE:[A-Za-z0-9_$.-]+]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[EDGE:[A-Za-z0-9_$.-]+]] = loop.alloc dram : memref<3x64xf32>
// CHECK: loop.foreach %[[ROW:[A-Za-z0-9_$.-]+]] =
// CHECK: loop.foreach %[[T:[A-Za-z0-9_$.-]+]] =
// CHECK-NEXT: %[[OW:[A-Za-z0-9_$.-]+]] = arith.addi %[[T]], %{{.*}} : index
// CHECK-NEXT: %[[AT:[A-Za-z0-9_$.-]+]] = arith.addi %{{.*}}, %[[OW]] : index
// CHECK-NEXT: %[[IW:[A-Za-z0-9_$.-]+]] = arith.addi %[[OW]], %{{.*}} : index
// CHECK-NEXT: %[[GE:[A-Za-z0-9_$.-]+]] = arith.cmpi sge, %[[IW]], %{{.*}} : index
// CHECK-NEXT: %[[LT:[A-Za-z0-9_$.-]+]] = arith.cmpi slt, %[[IW]], %[[WIDTH]] : index
// CHECK-NEXT: %[[IN:[A-Za-z0-9_$.-]+]] = arith.andi %[[GE]], %[[LT]] : i1
// CHECK-NEXT: %[[FLAG:[A-Za-z0-9_$.-]+]] = arith.select %[[IN]], %[[ONE]], %[[ZERO]] : f32
// CHECK-NEXT: memref.store %[[FLAG]], %[[EDGE]][%{{.*}}, %[[AT]]] : memref<3x64xf32>
// CHECK: loop.foreach %[[KH:[A-Za-z0-9_$.-]+]] =
// CHECK-NEXT: loop.foreach %[[KW:[A-Za-z0-9_$.-]+]] =
// CHECK-NEXT: %[[DH:[A-Za-z0-9_$.-]+]] = arith.subi %[[KH]], %{{.*}} : index
// CHECK-NEXT: %[[ROWS:[A-Za-z0-9_$.-]+]] = arith.muli %[[DH]], %[[WIDTH]] : index
// CHECK-NEXT: %[[TAP:[A-Za-z0-9_$.-]+]] = arith.addi %[[ROWS]], %[[KW]] : index
// CHECK-NEXT: %[[SHIFT:[A-Za-z0-9_$.-]+]] = arith.subi %[[TAP]], %{{.*}} : index
// CHECK-NEXT: %[[START:[A-Za-z0-9_$.-]+]] = arith.addi %{{.*}}, %[[SHIFT]] : index
// CHECK: loop.foreach %[[C:[A-Za-z0-9_$.-]+]] =
// CHECK: loop.foreach %[[J0:[A-Za-z0-9_$.-]+]] = %{{.*}} to %[[LO:[A-Za-z0-9_$.-]+]] step
// CHECK-NEXT: memref.store %[[ZERO]], %[[COL]][%[[K:[A-Za-z0-9_$.-]+]], %[[J0]]] : memref<18x64xf32>
// CHECK: loop.foreach %[[T1:[A-Za-z0-9_$.-]+]] =
// CHECK-NEXT: %[[J:[A-Za-z0-9_$.-]+]] = arith.addi %[[T1]], %[[LO]] : index
// CHECK-NEXT: %[[SRC:[A-Za-z0-9_$.-]+]] = arith.addi %[[START]], %[[J]] : index
// CHECK-NEXT: %[[V:[A-Za-z0-9_$.-]+]] = memref.load %[[FLAT]][%[[N]], %[[C]], %[[SRC]]] : memref<1x2x?xf32>
// CHECK-NEXT: %[[E:[A-Za-z0-9_$.-]+]] = memref.load %[[EDGE]][%[[KW]], %[[J]]] : memref<3x64xf32>
// CHECK-NEXT: %[[OK:[A-Za-z0-9_$.-]+]] = arith.cmpf one, %[[E]], %[[ZERO]] : f32
// CHECK-NEXT: %[[PICK:[A-Za-z0-9_$.-]+]] = arith.select %[[OK]], %[[V]], %[[ZERO]] : f32
// CHECK-NEXT: memref.store %[[PICK]], %[[COL]][%[[K]], %[[J]]] : memref<18x64xf32>
// CHECK: loop.foreach %[[T2:[A-Za-z0-9_$.-]+]] =
// CHECK-NEXT: %[[J2:[A-Za-z0-9_$.-]+]] = arith.addi %{{.*}}, %[[T2]] : index
// CHECK-NEXT: memref.store %[[ZERO]], %[[COL]][%[[K]], %[[J2]]] : memref<18x64xf32>
// CHECK: loop.reduce
// CHECK: memref.load %[[COL]]
func.func @same(%x: tensor<1x2x?x?xf32>, %w: tensor<3x2x3x3xf32>) -> tensor<1x3x?x?xf32> {
  %y = graph.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x2x?x?xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x?x?xf32>
  func.return %y : tensor<1x3x?x?xf32>
}

// -----

// Any other conv (stride 2 here) fills the rows per output row the panel spans, kernel
// tap and input channel: zeros / every second input column / zeros; no edge flags. With
// few input channels (2 here, an image's 3), one segment's loops fill every channel's row.

// CHECK-LABEL: loop.kernel @strided_conv2d_0
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: memref<1x2x?x?xf32>, %[[W:[A-Za-z0-9_$.-]+]]: memref<3x2x3x3xf32>, %[[Y:[A-Za-z0-9_$.-]+]]: memref<1x3x?x?xf32>)
// CHECK-NOT: memref<1x2x?xf32>
// CHECK: %[[COL:[A-Za-z0-9_$.-]+]] = loop.alloc dram : memref<18x64xf32>
// CHECK-NEXT: %[[ZERO:[A-Za-z0-9_$.-]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NOT: memref<3x64xf32>
// CHECK: loop.foreach %[[ROW:[A-Za-z0-9_$.-]+]] =
// CHECK: loop.foreach %[[KH:[A-Za-z0-9_$.-]+]] =
// CHECK-NEXT: loop.foreach %[[KW:[A-Za-z0-9_$.-]+]] =
// CHECK: %[[K0:[A-Za-z0-9_$.-]+]] = arith.addi %{{.*}}, %[[KW]] : index
// CHECK-NEXT: %[[K1:[A-Za-z0-9_$.-]+]] = arith.addi %{{.*}}, %[[K0]] : index
// CHECK: loop.foreach
// CHECK: memref.store %[[ZERO]], %[[COL]][%[[K0]], %[[Z:[A-Za-z0-9_$.-]+]]]
// CHECK-NEXT: memref.store %[[ZERO]], %[[COL]][%[[K1]], %[[Z]]]
// CHECK: loop.foreach %[[T:[A-Za-z0-9_$.-]+]] =
// CHECK-NEXT: %[[STEP:[A-Za-z0-9_$.-]+]] = arith.muli %[[T]], %{{.*}} : index
// CHECK-NEXT: %[[IW:[A-Za-z0-9_$.-]+]] = arith.addi %[[STEP]], %{{.*}} : index
// CHECK: %[[V0:[A-Za-z0-9_$.-]+]] = memref.load %[[X]][%{{.*}}, %{{.*}}, %{{.*}}, %[[IW]]] : memref<1x2x?x?xf32>
// CHECK-NEXT: memref.store %[[V0]], %[[COL]][%[[K0]], %[[J:[A-Za-z0-9_$.-]+]]]
// CHECK-NEXT: %[[V1:[A-Za-z0-9_$.-]+]] = memref.load %[[X]][%{{.*}}, %{{.*}}, %{{.*}}, %[[IW]]] : memref<1x2x?x?xf32>
// CHECK-NEXT: memref.store %[[V1]], %[[COL]][%[[K1]], %[[J]]]
// CHECK: memref.store %[[ZERO]], %[[COL]]
// CHECK: loop.reduce
// CHECK: memref.load %[[COL]]
func.func @strided(%x: tensor<1x2x?x?xf32>, %w: tensor<3x2x3x3xf32>) -> tensor<1x3x?x?xf32> {
  %y = graph.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x2x?x?xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x?x?xf32>
  func.return %y : tensor<1x3x?x?xf32>
}

// -----

// More input channels: a channel loop inside each tap, one segment's loops per channel.

// CHECK-LABEL: loop.kernel @strided_channels_conv2d_0
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: memref<1x8x?x?xf32>,
// CHECK: %[[COL:[A-Za-z0-9_$.-]+]] = loop.alloc dram : memref<72x64xf32>
// CHECK: loop.foreach %[[ROW:[A-Za-z0-9_$.-]+]] =
// CHECK: loop.foreach %[[KH:[A-Za-z0-9_$.-]+]] =
// CHECK-NEXT: loop.foreach %[[KW:[A-Za-z0-9_$.-]+]] =
// CHECK: loop.foreach %[[C:[A-Za-z0-9_$.-]+]] =
// CHECK: loop.foreach %[[T:[A-Za-z0-9_$.-]+]] =
// CHECK: %[[V:[A-Za-z0-9_$.-]+]] = memref.load %[[X]][%{{.*}}, %[[C]], %{{.*}}, %{{.*}}] : memref<1x8x?x?xf32>
// CHECK-NEXT: memref.store %[[V]], %[[COL]]
// CHECK-NOT: memref.load %[[X]]
// CHECK: loop.reduce
func.func @strided_channels(%x: tensor<1x8x?x?xf32>, %w: tensor<3x8x3x3xf32>) -> tensor<1x3x?x?xf32> {
  %y = graph.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x8x?x?xf32>, tensor<3x8x3x3xf32>) -> tensor<1x3x?x?xf32>
  func.return %y : tensor<1x3x?x?xf32>
}
