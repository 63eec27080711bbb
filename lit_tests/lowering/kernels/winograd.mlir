// RUN: nimble-opt %s --split-input-file -p lower-graph-to-loops | filecheck %s

// A 3 x 3 stride-1 conv with 32 channels or more and at least 576 output pixels takes
// the Winograd form, F(2, 3) along the rows: U[i, o, (c, kw)] = (G g)_i once per call,
// then per panel of 64 columns of the pair-flattened map (pair r, column) -> r * 24 +
// column: V[i, (c, kw), column] = (B^T d)_i for the pair's four input rows d, the four
// products M[i] = U[i] V[i] over (c, kw), and each pixel of the pair's rows from M.

// CHECK-LABEL: loop.kernel @winograd_conv2d_0
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: memref<1x32x24x24xf32>, %[[W:[A-Za-z0-9_$.-]+]]: memref<32x32x3x3xf32>, %[[Y:[A-Za-z0-9_$.-]+]]: memref<1x32x24x24xf32>)
// CHECK-DAG: %[[C2:[A-Za-z0-9_$.-]+]] = arith.constant 2 : index
// CHECK: %[[U:[A-Za-z0-9_$.-]+]] = loop.alloc dram : memref<4x32x96xf32>
// CHECK-NEXT: %[[HALF:[A-Za-z0-9_$.-]+]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT: loop.foreach %[[O:[A-Za-z0-9_$.-]+]] =
// CHECK-NEXT: loop.foreach %[[C:[A-Za-z0-9_$.-]+]] =
// CHECK-NEXT: %[[G0:[A-Za-z0-9_$.-]+]] = memref.load %[[W]][%[[O]], %[[C]], %{{.*}}, %{{.*}}]
// CHECK-NEXT: %[[G1:[A-Za-z0-9_$.-]+]] = memref.load %[[W]][%[[O]], %[[C]], %{{.*}}, %{{.*}}]
// CHECK-NEXT: %[[G2:[A-Za-z0-9_$.-]+]] = memref.load %[[W]][%[[O]], %[[C]], %{{.*}}, %{{.*}}]
// CHECK-NEXT: %[[ENDS:[A-Za-z0-9_$.-]+]] = arith.addf %[[G0]], %[[G2]] : f32
// CHECK-NEXT: %[[SUM:[A-Za-z0-9_$.-]+]] = arith.addf %[[ENDS]], %[[G1]] : f32
// CHECK-NEXT: %[[U1:[A-Za-z0-9_$.-]+]] = arith.mulf %[[SUM]], %[[HALF]] : f32
// CHECK-NEXT: %[[DIFF:[A-Za-z0-9_$.-]+]] = arith.subf %[[ENDS]], %[[G1]] : f32
// CHECK-NEXT: %[[U2:[A-Za-z0-9_$.-]+]] = arith.mulf %[[DIFF]], %[[HALF]] : f32
// CHECK-NEXT: %[[AT:[A-Za-z0-9_$.-]+]] = arith.muli %[[C]], %{{.*}} : index
// CHECK-NEXT: memref.store %[[G0]], %[[U]][%{{.*}}, %[[O]], %[[AT]]] : memref<4x32x96xf32>
// CHECK-NEXT: memref.store %[[U1]], %[[U]][%{{.*}}, %[[O]], %[[AT]]] : memref<4x32x96xf32>
// CHECK-NEXT: memref.store %[[U2]], %[[U]][%{{.*}}, %[[O]], %[[AT]]] : memref<4x32x96xf32>
// CHECK-NEXT: memref.store %[[G2]], %[[U]][%{{.*}}, %[[O]], %[[AT]]] : memref<4x32x96xf32>
// 12 pairs of 24 columns: 288 columns, 64 a panel.
// CHECK: %[[PAIRS:[A-Za-z0-9_$.-]+]] = arith.divsi %{{.*}}, %{{.*}} : index
// CHECK-NEXT: %[[COLUMNS:[A-Za-z0-9_$.-]+]] = arith.muli %[[PAIRS]], %{{.*}} : index
// CHECK-NEXT: loop.foreach %[[N:[A-Za-z0-9_$.-]+]] =
// CHECK-NEXT: loop.foreach %[[START:[A-Za-z0-9_$.-]+]] = %{{.*}} to %[[COLUMNS]] step %{{.*}} {
// CHECK: %[[V:[A-Za-z0-9_$.-]+]] = loop.alloc dram : memref<4x96x64xf32>
// Per pair the panel spans: its input rows 2r - 1 to 2r + 2, clamped, each with whether
// it is inside.
// CHECK: loop.foreach %[[PR:[A-Za-z0-9_$.-]+]] =
// CHECK-NEXT: %[[R:[A-Za-z0-9_$.-]+]] = arith.addi %{{.*}}, %[[PR]] : index
// CHECK: %[[TWICE:[A-Za-z0-9_$.-]+]] = arith.muli %[[R]], %[[C2]] : index
// CHECK-NEXT: %[[TOP:[A-Za-z0-9_$.-]+]] = arith.subi %[[TWICE]], %{{.*}} : index
// Per tap kw, the columns where it lies inside the image; per input channel, zeros
// left of them, d0 - d2, d1 + d2, d2 - d1, d1 - d3 there, zeros right of them.
// CHECK: loop.foreach %[[KW:[A-Za-z0-9_$.-]+]] =
// CHECK: loop.foreach %[[CH:[A-Za-z0-9_$.-]+]] =
// CHECK-NEXT: %[[C3:[A-Za-z0-9_$.-]+]] = arith.muli %[[CH]], %{{.*}} : index
// CHECK-NEXT: %[[ROW:[A-Za-z0-9_$.-]+]] = arith.addi %[[C3]], %[[KW]] : index
// CHECK-NEXT: %{{.*}} = arith.subi %{{.*}}, %{{.*}} : index
// CHECK-NEXT: loop.foreach %[[Z:[A-Za-z0-9_$.-]+]] =
// CHECK-NEXT: %[[ZOW:[A-Za-z0-9_$.-]+]] = arith.addi %{{.*}}, %[[Z]] : index
// CHECK-NEXT: %[[ZCOL:[A-Za-z0-9_$.-]+]] = arith.addi %{{.*}}, %[[ZOW]] : index
// CHECK-NEXT: memref.store %[[ZERO:[A-Za-z0-9_$.-]+]], %[[V]][%{{.*}}, %[[ROW]], %[[ZCOL]]] : memref<4x96x64xf32>
// CHECK: loop.foreach %[[T:[A-Za-z0-9_$.-]+]] =
// CHECK-NEXT: %[[OW:[A-Za-z0-9_$.-]+]] = arith.addi %[[T]], %{{.*}} : index
// CHECK-NEXT: %[[IW:[A-Za-z0-9_$.-]+]] = arith.addi %[[OW]], %{{.*}} : index
// CHECK-NEXT: %[[X0:[A-Za-z0-9_$.-]+]] = memref.load %[[X]][%[[N]], %[[CH]], %{{.*}}, %[[IW]]]
// CHECK-NEXT: %[[D0:[A-Za-z0-9_$.-]+]] = arith.select %{{.*}}, %[[X0]], %[[ZERO]] : f32
// CHECK-NEXT: %[[X1:[A-Za-z0-9_$.-]+]] = memref.load %[[X]][%[[N]], %[[CH]], %{{.*}}, %[[IW]]]
// CHECK-NEXT: %[[D1:[A-Za-z0-9_$.-]+]] = arith.select %{{.*}}, %[[X1]], %{{.*}} : f32
// CHECK-NEXT: %[[X2:[A-Za-z0-9_$.-]+]] = memref.load %[[X]][%[[N]], %[[CH]], %{{.*}}, %[[IW]]]
// CHECK-NEXT: %[[D2:[A-Za-z0-9_$.-]+]] = arith.select %{{.*}}, %[[X2]], %{{.*}} : f32
// CHECK-NEXT: %[[X3:[A-Za-z0-9_$.-]+]] = memref.load %[[X]][%[[N]], %[[CH]], %{{.*}}, %[[IW]]]
// CHECK-NEXT: %[[D3:[A-Za-z0-9_$.-]+]] = arith.select %{{.*}}, %[[X3]], %{{.*}} : f32
// CHECK-NEXT: %[[V0:[A-Za-z0-9_$.-]+]] = arith.subf %[[D0]], %[[D2]] : f32
// CHECK-NEXT: %[[V1:[A-Za-z0-9_$.-]+]] = arith.addf %[[D1]], %[[D2]] : f32
// CHECK-NEXT: %[[V2:[A-Za-z0-9_$.-]+]] = arith.subf %[[D2]], %[[D1]] : f32
// CHECK-NEXT: %[[V3:[A-Za-z0-9_$.-]+]] = arith.subf %[[D1]], %[[D3]] : f32
// CHECK-NEXT: %[[COL:[A-Za-z0-9_$.-]+]] = arith.addi %{{.*}}, %[[OW]] : index
// CHECK-NEXT: memref.store %[[V0]], %[[V]][%{{.*}}, %[[ROW]], %[[COL]]] : memref<4x96x64xf32>
// CHECK-NEXT: memref.store %[[V1]], %[[V]][%{{.*}}, %[[ROW]], %[[COL]]] : memref<4x96x64xf32>
// CHECK-NEXT: memref.store %[[V2]], %[[V]][%{{.*}}, %[[ROW]], %[[COL]]] : memref<4x96x64xf32>
// CHECK-NEXT: memref.store %[[V3]], %[[V]][%{{.*}}, %[[ROW]], %[[COL]]] : memref<4x96x64xf32>
// The four products: the register tile's reduction over (c, kw), V read in place.
// CHECK: %[[M:[A-Za-z0-9_$.-]+]] = loop.alloc dram : memref<4x32x64xf32>
// CHECK-NEXT: loop.foreach %[[I:[A-Za-z0-9_$.-]+]] =
// CHECK-NEXT: loop.foreach %[[OUT:[A-Za-z0-9_$.-]+]] =
// CHECK-NEXT: loop.foreach %[[J:[A-Za-z0-9_$.-]+]] =
// CHECK: %[[ACC:[A-Za-z0-9_$.-]+]] = loop.reduce %[[K:[A-Za-z0-9_$.-]+]] =
// CHECK-NEXT: %[[A:[A-Za-z0-9_$.-]+]] = memref.load %[[U]][%[[I]], %[[OUT]], %[[K]]] : memref<4x32x96xf32>
// CHECK-NEXT: %[[B:[A-Za-z0-9_$.-]+]] = memref.load %[[V]][%[[I]], %[[K]], %[[J]]] : memref<4x96x64xf32>
// CHECK-NEXT: %[[P:[A-Za-z0-9_$.-]+]] = arith.mulf %[[A]], %[[B]] : f32
// CHECK-NEXT: loop.yield %[[P]] : f32
// CHECK: memref.store %[[ACC]], %[[M]][%[[I]], %[[OUT]], %[[J]]] : memref<4x32x64xf32>
// Per output channel, pair, row of the pair (the last pair of an odd map has one) and
// column: m0 + m1 + m2 on the pair's first row, m1 - m2 - m3 on its second.
// CHECK: loop.foreach %[[OC:[A-Za-z0-9_$.-]+]] =
// CHECK: loop.foreach %[[OPR:[A-Za-z0-9_$.-]+]] =
// CHECK: loop.foreach %[[DY:[A-Za-z0-9_$.-]+]] =
// CHECK-NEXT: %[[FIRST:[A-Za-z0-9_$.-]+]] = arith.muli %{{.*}}, %{{.*}} : index
// CHECK-NEXT: %[[OH:[A-Za-z0-9_$.-]+]] = arith.addi %[[FIRST]], %[[DY]] : index
// CHECK: loop.foreach %[[S:[A-Za-z0-9_$.-]+]] =
// CHECK: %[[M0:[A-Za-z0-9_$.-]+]] = memref.load %[[M]][%{{.*}}, %[[OC]], %[[MC:[A-Za-z0-9_$.-]+]]] : memref<4x32x64xf32>
// CHECK-NEXT: %[[M1:[A-Za-z0-9_$.-]+]] = memref.load %[[M]][%{{.*}}, %[[OC]], %[[MC]]] : memref<4x32x64xf32>
// CHECK-NEXT: %[[M2:[A-Za-z0-9_$.-]+]] = memref.load %[[M]][%{{.*}}, %[[OC]], %[[MC]]] : memref<4x32x64xf32>
// CHECK-NEXT: %[[M3:[A-Za-z0-9_$.-]+]] = memref.load %[[M]][%{{.*}}, %[[OC]], %[[MC]]] : memref<4x32x64xf32>
// CHECK-NEXT: %[[S01:[A-Za-z0-9_$.-]+]] = arith.addf %[[M0]], %[[M1]] : f32
// CHECK-NEXT: %[[UPPER:[A-Za-z0-9_$.-]+]] = arith.addf %[[S01]], %[[M2]] : f32
// CHECK-NEXT: %[[D12:[A-Za-z0-9_$.-]+]] = arith.subf %[[M1]], %[[M2]] : f32
// CHECK-NEXT: %[[LOWER:[A-Za-z0-9_$.-]+]] = arith.subf %[[D12]], %[[M3]] : f32
// CHECK-NEXT: %[[PARITY:[A-Za-z0-9_$.-]+]] = arith.remsi %[[OH]], %{{.*}} : index
// CHECK-NEXT: %[[EVEN:[A-Za-z0-9_$.-]+]] = arith.cmpi eq, %[[PARITY]], %{{.*}} : index
// CHECK-NEXT: %[[OUTV:[A-Za-z0-9_$.-]+]] = arith.select %[[EVEN]], %[[UPPER]], %[[LOWER]] : f32
// CHECK-NEXT: memref.store %[[OUTV]], %{{.*}}[%[[N]], %[[OC]], %{{.*}}] : memref<1x32x576xf32>
// CHECK-NOT: memref<288x64xf32>
func.func @winograd(%x: tensor<1x32x24x24xf32>, %w: tensor<32x32x3x3xf32>) -> tensor<1x32x24x24xf32> {
  %y = graph.conv2d %x, %w {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x32x24x24xf32>, tensor<32x32x3x3xf32>) -> tensor<1x32x24x24xf32>
  func.return %y : tensor<1x32x24x24xf32>
}

// -----

// A map of the size known only at run time: a kernel of each form, the group naming the
// Winograd one (the host launches it where the sizes ask for it: manifest-alloc).

// CHECK-LABEL: func.func @dynamic
// CHECK: attributes {nimble.kernel = @dynamic_conv2d_0, nimble.winograd_kernel = @dynamic_conv2d_0_wg}
// CHECK-LABEL: loop.kernel @dynamic_conv2d_0(
// CHECK-NOT: memref<4x
// CHECK: loop.alloc dram : memref<288x64xf32>
// CHECK-NOT: memref<4x
// CHECK-LABEL: loop.kernel @dynamic_conv2d_0_wg(
// CHECK-NOT: memref<288x64xf32>
// CHECK: loop.alloc dram : memref<4x32x96xf32>
// CHECK: loop.alloc dram : memref<4x96x64xf32>
// CHECK-NOT: memref<288x64xf32>
func.func @dynamic(%x: tensor<1x32x?x?xf32>, %w: tensor<32x32x3x3xf32>) -> tensor<1x32x?x?xf32> {
  %y = graph.conv2d %x, %w {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x32x?x?xf32>, tensor<32x32x3x3xf32>) -> tensor<1x32x?x?xf32>
  func.return %y : tensor<1x32x?x?xf32>
}

// -----

// Fewer than 576 output pixels, or 16 channels: the im2col form only.

// CHECK-LABEL: loop.kernel @small_conv2d_0
// CHECK-NOT: memref<4x
// CHECK: loop.alloc dram : memref<288x64xf32>
// CHECK-NOT: memref<4x
// CHECK-LABEL: loop.kernel @narrow_conv2d_0
// CHECK-NOT: memref<4x
// CHECK: loop.alloc dram : memref<144x64xf32>
// CHECK-NOT: memref<4x
func.func @small(%x: tensor<1x32x23x25xf32>, %w: tensor<32x32x3x3xf32>) -> tensor<1x32x23x25xf32> {
  %y = graph.conv2d %x, %w {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x32x23x25xf32>, tensor<32x32x3x3xf32>) -> tensor<1x32x23x25xf32>
  func.return %y : tensor<1x32x23x25xf32>
}

func.func @narrow(%x: tensor<1x16x32x32xf32>, %w: tensor<32x16x3x3xf32>) -> tensor<1x32x32x32xf32> {
  %y = graph.conv2d %x, %w {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x16x32x32xf32>, tensor<32x16x3x3xf32>) -> tensor<1x32x32x32xf32>
  func.return %y : tensor<1x32x32x32xf32>
}

// -----

// A constant weight's transform is made at compile time: a new constant the group takes
// as one more input, named on the conv; the kernel reads it (no transform per call), so
// maps from 196 pixels take the Winograd form.

// CHECK-LABEL: func.func @folded
// CHECK: %[[W:[A-Za-z0-9_$.-]+]] = graph.constant dense<1.000000e+00> : tensor<32x32x3x3xf32>
// CHECK-NEXT: %[[U:[A-Za-z0-9_$.-]+]] = graph.constant dense<"0x{{[0-9A-F]+}}"> : tensor<4x32x96xf32>
// CHECK-NEXT: graph.fused (%{{.*}} = %{{.*}}, %{{.*}} = %[[W]], %{{.*}} = %[[U]])
// CHECK-NEXT: graph.conv2d %{{.*}}, %{{.*}} {nimble.winograd_weights = 2 : i64,
// CHECK-LABEL: loop.kernel @folded_conv2d_0
// CHECK-SAME: %[[UK:[A-Za-z0-9_$.-]+]]: memref<4x32x96xf32>
// CHECK-NOT: loop.alloc dram : memref<4x32x96xf32>
// CHECK: loop.alloc dram : memref<4x96x64xf32>
// CHECK: memref.load %[[UK]][%{{.*}}, %{{.*}}, %{{.*}}] : memref<4x32x96xf32>
func.func @folded(%x: tensor<1x32x14x14xf32>) -> tensor<1x32x14x14xf32> {
  %w = graph.constant dense<1.0> : tensor<32x32x3x3xf32>
  %y = graph.conv2d %x, %w {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x32x14x14xf32>, tensor<32x32x3x3xf32>) -> tensor<1x32x14x14xf32>
  func.return %y : tensor<1x32x14x14xf32>
}

// A map known to have fewer pixels keeps its weight as it is.

// CHECK-LABEL: func.func @few_pixels
// CHECK-NOT: tensor<4x32x96xf32>
// CHECK: graph.fused
// CHECK-NOT: tensor<4x32x96xf32>
// CHECK: func.return
func.func @few_pixels(%x: tensor<1x32x13x15xf32>) -> tensor<1x32x13x15xf32> {
  %w = graph.constant dense<1.0> : tensor<32x32x3x3xf32>
  %y = graph.conv2d %x, %w {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x32x13x15xf32>, tensor<32x32x3x3xf32>) -> tensor<1x32x13x15xf32>
  func.return %y : tensor<1x32x13x15xf32>
}
