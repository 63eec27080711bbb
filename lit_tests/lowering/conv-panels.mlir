// RUN: nimble-opt %s --split-input-file -p lower-graph-to-loops | filecheck %s

// A conv read at its own pixels runs over panels of 64 flattened pixels, the panel loop
// outside the output channels; each panel stages its im2col rows (18 x 64 here) per
// output row, kernel tap and input channel: zeros / a copy / zeros.

// CHECK-LABEL: func.func @conv
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<1x2x?x?xf32>, %[[W:[A-Za-z0-9_$.-]+]]: tensor<3x2x3x3xf32>) -> tensor<1x3x?x?xf32> {
// CHECK-NEXT: %[[Y:[A-Za-z0-9_$.-]+]] = graph.fused (%[[X_1:[A-Za-z0-9_$.-]+]] = %[[X]], %[[W_1:[A-Za-z0-9_$.-]+]] = %[[W]]) : (tensor<1x2x?x?xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x?x?xf32> {
// CHECK-NEXT: %[[Y_1:[A-Za-z0-9_$.-]+]] = graph.conv2d %[[X_1]], %[[W_1]] {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x2x?x?xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x?x?xf32>
// CHECK-NEXT: graph.yield %[[Y_1]] : tensor<1x3x?x?xf32>
// CHECK-NEXT: } attributes {kernel = @conv_conv2d_0}
// CHECK-NEXT: func.return %[[Y]] : tensor<1x3x?x?xf32>
// CHECK-NEXT: }
// CHECK-LABEL: func.func @conv_conv2d_0
// CHECK-SAME: (%[[V0:[A-Za-z0-9_$.-]+]]: memref<1x2x?x?xf32>, %[[V1:[A-Za-z0-9_$.-]+]]: memref<3x2x3x3xf32>, %[[V2:[A-Za-z0-9_$.-]+]]: memref<1x3x?x?xf32>) attributes {nimble.kernel = "conv_conv2d_0"} {
// CHECK-NEXT: %[[V3:[A-Za-z0-9_$.-]+]] = arith.constant 2 : index
// CHECK-NEXT: %[[V4:[A-Za-z0-9_$.-]+]] = memref.dim %[[V0]], %[[V3]] : memref<1x2x?x?xf32>
// CHECK-NEXT: %[[V5:[A-Za-z0-9_$.-]+]] = arith.constant 3 : index
// CHECK-NEXT: %[[V6:[A-Za-z0-9_$.-]+]] = memref.dim %[[V0]], %[[V5]] : memref<1x2x?x?xf32>
// CHECK-NEXT: %[[V7:[A-Za-z0-9_$.-]+]] = arith.constant 2 : index
// CHECK-NEXT: %[[V8:[A-Za-z0-9_$.-]+]] = arith.addi %[[V4]], %[[V7]] : index
// CHECK-NEXT: %[[V9:[A-Za-z0-9_$.-]+]] = arith.constant 3 : index
// CHECK-NEXT: %[[V10:[A-Za-z0-9_$.-]+]] = arith.subi %[[V8]], %[[V9]] : index
// CHECK-NEXT: %[[V11:[A-Za-z0-9_$.-]+]] = arith.constant 1 : index
// CHECK-NEXT: %[[V12:[A-Za-z0-9_$.-]+]] = arith.floordivsi %[[V10]], %[[V11]] : index
// CHECK-NEXT: %[[V13:[A-Za-z0-9_$.-]+]] = arith.addi %[[V12]], %[[V11]] : index
// CHECK-NEXT: %[[V14:[A-Za-z0-9_$.-]+]] = arith.addi %[[V6]], %[[V7]] : index
// CHECK-NEXT: %[[V15:[A-Za-z0-9_$.-]+]] = arith.subi %[[V14]], %[[V9]] : index
// CHECK-NEXT: %[[V16:[A-Za-z0-9_$.-]+]] = arith.floordivsi %[[V15]], %[[V11]] : index
// CHECK-NEXT: %[[V17:[A-Za-z0-9_$.-]+]] = arith.addi %[[V16]], %[[V11]] : index
// CHECK-NEXT: %[[V18:[A-Za-z0-9_$.-]+]] = arith.constant 64 : index
// CHECK-NEXT: %[[V19:[A-Za-z0-9_$.-]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[V20:[A-Za-z0-9_$.-]+]] = arith.constant 1 : index
// CHECK-NEXT: %[[V21:[A-Za-z0-9_$.-]+]] = memref.collapse_shape %[[V1]] {{\[\[}}0 : i64], [1 : i64, 2 : i64, 3 : i64]] : memref<3x2x3x3xf32> into memref<3x18xf32>
// CHECK-NEXT: %[[V22:[A-Za-z0-9_$.-]+]] = arith.constant 9 : index
// CHECK-NEXT: %[[V23:[A-Za-z0-9_$.-]+]] = arith.constant 18 : index
// CHECK-NEXT: %[[V24:[A-Za-z0-9_$.-]+]] = memref.collapse_shape %[[V2]] {{\[\[}}0 : i64], [1 : i64], [2 : i64, 3 : i64]] : memref<1x3x?x?xf32> into memref<1x3x?xf32>
// CHECK-NEXT: %[[V25:[A-Za-z0-9_$.-]+]] = arith.muli %[[V13]], %[[V17]] : index
// CHECK-NEXT: %[[V26:[A-Za-z0-9_$.-]+]] = arith.ceildivsi %[[V25]], %[[V18]] : index
// CHECK-NEXT: loop.foreach %[[V27:[A-Za-z0-9_$.-]+]] = %[[V19]] to %[[V20]] step %[[V20]] {
// CHECK-NEXT: loop.foreach %[[V28:[A-Za-z0-9_$.-]+]] = %[[V19]] to %[[V26]] step %[[V20]] {
// CHECK-NEXT: %[[V29:[A-Za-z0-9_$.-]+]] = arith.muli %[[V28]], %[[V18]] : index
// CHECK-NEXT: %[[V30:[A-Za-z0-9_$.-]+]] = arith.subi %[[V25]], %[[V29]] : index
// CHECK-NEXT: %[[V31:[A-Za-z0-9_$.-]+]] = arith.minsi %[[V30]], %[[V18]] : index
// CHECK-NEXT: %[[V32:[A-Za-z0-9_$.-]+]] = loop.alloc dram : memref<18x64xf32>
// CHECK-NEXT: %[[V33:[A-Za-z0-9_$.-]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V34:[A-Za-z0-9_$.-]+]] = arith.addi %[[V29]], %[[V31]] : index
// CHECK-NEXT: %[[V35:[A-Za-z0-9_$.-]+]] = arith.divsi %[[V29]], %[[V17]] : index
// CHECK-NEXT: %[[V36:[A-Za-z0-9_$.-]+]] = arith.subi %[[V34]], %[[V20]] : index
// CHECK-NEXT: %[[V37:[A-Za-z0-9_$.-]+]] = arith.divsi %[[V36]], %[[V17]] : index
// CHECK-NEXT: %[[V38:[A-Za-z0-9_$.-]+]] = arith.subi %[[V37]], %[[V35]] : index
// CHECK-NEXT: %[[V39:[A-Za-z0-9_$.-]+]] = arith.addi %[[V38]], %[[V20]] : index
// CHECK-NEXT: loop.foreach %[[V40:[A-Za-z0-9_$.-]+]] = %[[V19]] to %[[V39]] step %[[V20]] {
// CHECK-NEXT: %[[V41:[A-Za-z0-9_$.-]+]] = arith.addi %[[V35]], %[[V40]] : index
// CHECK-NEXT: %[[V42:[A-Za-z0-9_$.-]+]] = arith.muli %[[V41]], %[[V17]] : index
// CHECK-NEXT: %[[V43:[A-Za-z0-9_$.-]+]] = arith.maxsi %[[V29]], %[[V42]] : index
// CHECK-NEXT: %[[V44:[A-Za-z0-9_$.-]+]] = arith.subi %[[V43]], %[[V42]] : index
// CHECK-NEXT: %[[V45:[A-Za-z0-9_$.-]+]] = arith.addi %[[V42]], %[[V17]] : index
// CHECK-NEXT: %[[V46:[A-Za-z0-9_$.-]+]] = arith.minsi %[[V34]], %[[V45]] : index
// CHECK-NEXT: %[[V47:[A-Za-z0-9_$.-]+]] = arith.subi %[[V46]], %[[V42]] : index
// CHECK-NEXT: %[[V48:[A-Za-z0-9_$.-]+]] = arith.subi %[[V42]], %[[V29]] : index
// CHECK-NEXT: loop.foreach %[[V49:[A-Za-z0-9_$.-]+]] = %[[V19]] to %[[V5]] step %[[V20]] {
// CHECK-NEXT: loop.foreach %[[V50:[A-Za-z0-9_$.-]+]] = %[[V19]] to %[[V5]] step %[[V20]] {
// CHECK-NEXT: %[[V51:[A-Za-z0-9_$.-]+]] = arith.addi %[[V41]], %[[V49]] : index
// CHECK-NEXT: %[[V52:[A-Za-z0-9_$.-]+]] = arith.subi %[[V51]], %[[V20]] : index
// CHECK-NEXT: %[[V53:[A-Za-z0-9_$.-]+]] = arith.cmpi sge, %[[V52]], %[[V19]] : index
// CHECK-NEXT: %[[V54:[A-Za-z0-9_$.-]+]] = arith.cmpi slt, %[[V52]], %[[V4]] : index
// CHECK-NEXT: %[[V55:[A-Za-z0-9_$.-]+]] = arith.andi %[[V53]], %[[V54]] : i1
// CHECK-NEXT: %[[V56:[A-Za-z0-9_$.-]+]] = arith.maxsi %[[V52]], %[[V19]] : index
// CHECK-NEXT: %[[V57:[A-Za-z0-9_$.-]+]] = arith.subi %[[V4]], %[[V20]] : index
// CHECK-NEXT: %[[V58:[A-Za-z0-9_$.-]+]] = arith.minsi %[[V56]], %[[V57]] : index
// CHECK-NEXT: %[[V59:[A-Za-z0-9_$.-]+]] = arith.subi %[[V50]], %[[V20]] : index
// CHECK-NEXT: %[[V60:[A-Za-z0-9_$.-]+]] = arith.subi %[[V19]], %[[V59]] : index
// CHECK-NEXT: %[[V61:[A-Za-z0-9_$.-]+]] = arith.ceildivsi %[[V60]], %[[V20]] : index
// CHECK-NEXT: %[[V62:[A-Za-z0-9_$.-]+]] = arith.subi %[[V6]], %[[V20]] : index
// CHECK-NEXT: %[[V63:[A-Za-z0-9_$.-]+]] = arith.subi %[[V62]], %[[V59]] : index
// CHECK-NEXT: %[[V64:[A-Za-z0-9_$.-]+]] = arith.floordivsi %[[V63]], %[[V20]] : index
// CHECK-NEXT: %[[V65:[A-Za-z0-9_$.-]+]] = arith.addi %[[V64]], %[[V20]] : index
// CHECK-NEXT: %[[V66:[A-Za-z0-9_$.-]+]] = arith.maxsi %[[V61]], %[[V19]] : index
// CHECK-NEXT: %[[V67:[A-Za-z0-9_$.-]+]] = arith.minsi %[[V66]], %[[V17]] : index
// CHECK-NEXT: %[[V68:[A-Za-z0-9_$.-]+]] = arith.maxsi %[[V65]], %[[V67]] : index
// CHECK-NEXT: %[[V69:[A-Za-z0-9_$.-]+]] = arith.minsi %[[V68]], %[[V17]] : index
// CHECK-NEXT: %[[V70:[A-Za-z0-9_$.-]+]] = arith.select %[[V55]], %[[V67]], %[[V19]] : index
// CHECK-NEXT: %[[V71:[A-Za-z0-9_$.-]+]] = arith.select %[[V55]], %[[V69]], %[[V19]] : index
// CHECK-NEXT: %[[V72:[A-Za-z0-9_$.-]+]] = arith.addi %[[V70]], %[[V59]] : index
// CHECK-NEXT: %[[V73:[A-Za-z0-9_$.-]+]] = arith.maxsi %[[V70]], %[[V44]] : index
// CHECK-NEXT: %[[V74:[A-Za-z0-9_$.-]+]] = arith.minsi %[[V73]], %[[V47]] : index
// CHECK-NEXT: %[[V75:[A-Za-z0-9_$.-]+]] = arith.minsi %[[V71]], %[[V47]] : index
// CHECK-NEXT: %[[V76:[A-Za-z0-9_$.-]+]] = arith.maxsi %[[V75]], %[[V74]] : index
// CHECK-NEXT: %[[V77:[A-Za-z0-9_$.-]+]] = arith.subi %[[V74]], %[[V70]] : index
// CHECK-NEXT: %[[V78:[A-Za-z0-9_$.-]+]] = arith.addi %[[V72]], %[[V77]] : index
// CHECK-NEXT: %[[V79:[A-Za-z0-9_$.-]+]] = arith.muli %[[V49]], %[[V5]] : index
// CHECK-NEXT: %[[V80:[A-Za-z0-9_$.-]+]] = arith.addi %[[V79]], %[[V50]] : index
// CHECK-NEXT: loop.foreach %[[V81:[A-Za-z0-9_$.-]+]] = %[[V19]] to %[[V3]] step %[[V20]] {
// CHECK-NEXT: %[[V82:[A-Za-z0-9_$.-]+]] = arith.muli %[[V81]], %[[V22]] : index
// CHECK-NEXT: %[[V83:[A-Za-z0-9_$.-]+]] = arith.addi %[[V82]], %[[V80]] : index
// CHECK-NEXT: %[[V84:[A-Za-z0-9_$.-]+]] = arith.subi %[[V74]], %[[V44]] : index
// CHECK-NEXT: loop.foreach %[[V85:[A-Za-z0-9_$.-]+]] = %[[V19]] to %[[V84]] step %[[V20]] {
// CHECK-NEXT: %[[V86:[A-Za-z0-9_$.-]+]] = arith.addi %[[V44]], %[[V85]] : index
// CHECK-NEXT: %[[V87:[A-Za-z0-9_$.-]+]] = arith.addi %[[V48]], %[[V86]] : index
// CHECK-NEXT: memref.store %[[V33]], %[[V32]][%[[V83]], %[[V87]]] : memref<18x64xf32>
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[V88:[A-Za-z0-9_$.-]+]] = arith.subi %[[V76]], %[[V74]] : index
// CHECK-NEXT: loop.foreach %[[V89:[A-Za-z0-9_$.-]+]] = %[[V19]] to %[[V88]] step %[[V20]] {
// CHECK-NEXT: %[[V90:[A-Za-z0-9_$.-]+]] = arith.addi %[[V89]], %[[V78]] : index
// CHECK-NEXT: %[[V91:[A-Za-z0-9_$.-]+]] = arith.addi %[[V89]], %[[V74]] : index
// CHECK-NEXT: %[[V92:[A-Za-z0-9_$.-]+]] = arith.addi %[[V48]], %[[V91]] : index
// CHECK-NEXT: %[[V93:[A-Za-z0-9_$.-]+]] = memref.load %[[V0]][%[[V27]], %[[V81]], %[[V58]], %[[V90]]] : memref<1x2x?x?xf32>
// CHECK-NEXT: memref.store %[[V93]], %[[V32]][%[[V83]], %[[V92]]] : memref<18x64xf32>
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[V94:[A-Za-z0-9_$.-]+]] = arith.subi %[[V47]], %[[V76]] : index
// CHECK-NEXT: loop.foreach %[[V95:[A-Za-z0-9_$.-]+]] = %[[V19]] to %[[V94]] step %[[V20]] {
// CHECK-NEXT: %[[V96:[A-Za-z0-9_$.-]+]] = arith.addi %[[V76]], %[[V95]] : index
// CHECK-NEXT: %[[V97:[A-Za-z0-9_$.-]+]] = arith.addi %[[V48]], %[[V96]] : index
// CHECK-NEXT: memref.store %[[V33]], %[[V32]][%[[V83]], %[[V97]]] : memref<18x64xf32>
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.foreach %[[V98:[A-Za-z0-9_$.-]+]] = %[[V19]] to %[[V5]] step %[[V20]] {
// CHECK-NEXT: loop.foreach %[[V99:[A-Za-z0-9_$.-]+]] = %[[V19]] to %[[V31]] step %[[V20]] {
// CHECK-NEXT: %[[V100:[A-Za-z0-9_$.-]+]] = arith.addi %[[V29]], %[[V99]] : index
// CHECK-NEXT: %[[V101:[A-Za-z0-9_$.-]+]] = arith.divsi %[[V100]], %[[V17]] : index
// CHECK-NEXT: %[[V102:[A-Za-z0-9_$.-]+]] = arith.remsi %[[V100]], %[[V17]] : index
// CHECK-NEXT: %[[V103:[A-Za-z0-9_$.-]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V104:[A-Za-z0-9_$.-]+]] = loop.reduce %[[V105:[A-Za-z0-9_$.-]+]] = %[[V19]] to %[[V23]] step %[[V20]] combine(add) init(%[[V103]]) : f32 {
// CHECK-NEXT: %[[V106:[A-Za-z0-9_$.-]+]] = memref.load %[[V21]][%[[V98]], %[[V105]]] : memref<3x18xf32>
// CHECK-NEXT: %[[V107:[A-Za-z0-9_$.-]+]] = memref.load %[[V32]][%[[V105]], %[[V99]]] : memref<18x64xf32>
// CHECK-NEXT: %[[V108:[A-Za-z0-9_$.-]+]] = arith.mulf %[[V106]], %[[V107]] : f32
// CHECK-NEXT: loop.yield %[[V108]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: memref.store %[[V104]], %[[V24]][%[[V27]], %[[V98]], %[[V100]]] : memref<1x3x?xf32>
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: func.return
// CHECK-NEXT: }
func.func @conv(%x: tensor<1x2x?x?xf32>, %w: tensor<3x2x3x3xf32>) -> tensor<1x3x?x?xf32> {
  %y = graph.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x2x?x?xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x?x?xf32>
  func.return %y : tensor<1x3x?x?xf32>
}
