// RUN: nimble-opt %s --split-input-file -p fuse-ops,lower-graph-to-loops,manifest-alloc,canonicalize,cse | filecheck %s

// CHECK-LABEL: func.func @elementwise_group
// CHECK-SAME: (%[[A:[A-Za-z0-9_$.-]+]]: tensor<?x8xf32>, %[[B:[A-Za-z0-9_$.-]+]]: tensor<?x8xf32>) -> tensor<?x8xf32> {
// CHECK-NEXT: %[[V0:[A-Za-z0-9_$.-]+]] = dynshape.dim %[[A]], 0 : tensor<?x8xf32>
// CHECK-NEXT: %[[V1:[A-Za-z0-9_$.-]+]] = dynshape.dim %[[B]], 0 : tensor<?x8xf32>
// CHECK-NEXT: %[[V2:[A-Za-z0-9_$.-]+]] = arith.cmpi eq, %[[V0]], %[[V1]] : index
// CHECK-NEXT: dynshape.assert %[[V2]], "dim 0 of %[[B]] must equal dim 0 of %[[A]] (both are 'n')" dims(%[[V1]], %[[V0]])
// CHECK-NEXT: %[[V3:[A-Za-z0-9_$.-]+]] = arith.constant 4 : index
// CHECK-NEXT: %[[V4:[A-Za-z0-9_$.-]+]] = arith.muli %[[V0]], %[[V3]] : index
// CHECK-NEXT: %[[V5:[A-Za-z0-9_$.-]+]] = arith.constant 8 : index
// CHECK-NEXT: %[[V6:[A-Za-z0-9_$.-]+]] = arith.muli %[[V4]], %[[V5]] : index
// CHECK-NEXT: %[[V7:[A-Za-z0-9_$.-]+]] = device.alloc_storage %[[V6]] align 64 on "cpu"
// CHECK-NEXT: %[[V8:[A-Za-z0-9_$.-]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[T:[A-Za-z0-9_$.-]+]] = device.alloc_tensor %[[V7]][%[[V8]]] (%[[V0]]) : tensor<?x8xf32>
// CHECK-NEXT: device.launch @elementwise_group_add_0(%[[A]], %[[B]]) outs(%[[T]]) on "cpu" : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
// CHECK-NEXT: func.return %[[T]] : tensor<?x8xf32>
// CHECK-NEXT: }
// CHECK-LABEL: func.func private @elementwise_group_add_0_group
// CHECK-SAME: (%[[A:[A-Za-z0-9_$.-]+]]: tensor<?x8xf32>, %[[B:[A-Za-z0-9_$.-]+]]: tensor<?x8xf32>) -> tensor<?x8xf32> attributes {device.host_function = "graph.fused", device.group_of = [@elementwise_group_add_0]} {
// CHECK-NEXT: %[[C:[A-Za-z0-9_$.-]+]] = graph.add %[[A]], %[[B]] : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
// CHECK-NEXT: %[[T:[A-Za-z0-9_$.-]+]] = graph.tanh %[[C]] : tensor<?x8xf32> -> tensor<?x8xf32>
// CHECK-NEXT: func.return %[[T]] : tensor<?x8xf32>
// CHECK-NEXT: }

func.func @elementwise_group(%a: tensor<?x8xf32>, %b: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %0 = dynshape.dim %a, 0 : tensor<?x8xf32>
  %1 = dynshape.dim %b, 0 : tensor<?x8xf32>
  %2 = arith.cmpi eq, %0, %1 : index
  dynshape.assert %2, "dim 0 of %b must equal dim 0 of %a (both are 'n')" dims(%1, %0)
  %c = graph.add %a, %b : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  %t = graph.tanh %c : tensor<?x8xf32> -> tensor<?x8xf32>
  func.return %t : tensor<?x8xf32>
}

// -----

// CHECK-LABEL: func.func @broadcast_picks_a_variant
// CHECK-SAME: (%[[A:[A-Za-z0-9_$.-]+]]: tensor<?x?xf32>, %[[B:[A-Za-z0-9_$.-]+]]: tensor<?xf32>) -> tensor<?x?xf32> {
// CHECK-NEXT: %[[V0:[A-Za-z0-9_$.-]+]] = dynshape.dim %[[A]], 0 : tensor<?x?xf32>
// CHECK-NEXT: %[[V1:[A-Za-z0-9_$.-]+]] = dynshape.dim %[[A]], 1 : tensor<?x?xf32>
// CHECK-NEXT: %[[V2:[A-Za-z0-9_$.-]+]] = dynshape.dim %[[B]], 0 : tensor<?xf32>
// CHECK-NEXT: %[[V3:[A-Za-z0-9_$.-]+]] = arith.constant 1 : index
// CHECK-NEXT: %[[V4:[A-Za-z0-9_$.-]+]] = arith.cmpi eq, %[[V1]], %[[V3]] : index
// CHECK-NEXT: %[[V5:[A-Za-z0-9_$.-]+]] = arith.cmpi eq, %[[V2]], %[[V3]] : index
// CHECK-NEXT: %[[V6:[A-Za-z0-9_$.-]+]] = arith.cmpi eq, %[[V1]], %[[V2]] : index
// CHECK-NEXT: %[[V7:[A-Za-z0-9_$.-]+]] = arith.ori %[[V4]], %[[V5]] : i1
// CHECK-NEXT: %[[V8:[A-Za-z0-9_$.-]+]] = arith.ori %[[V7]], %[[V6]] : i1
// CHECK-NEXT: dynshape.assert %[[V8]], "dim 1 cannot be broadcast" dims(%[[V1]], %[[V2]])
// CHECK-NEXT: %[[V9:[A-Za-z0-9_$.-]+]] = arith.select %[[V4]], %[[V2]], %[[V1]] : index
// CHECK-NEXT: %[[V10:[A-Za-z0-9_$.-]+]] = arith.constant 4 : index
// CHECK-NEXT: %[[V11:[A-Za-z0-9_$.-]+]] = arith.muli %[[V0]], %[[V10]] : index
// CHECK-NEXT: %[[V12:[A-Za-z0-9_$.-]+]] = arith.muli %[[V11]], %[[V9]] : index
// CHECK-NEXT: %[[V13:[A-Za-z0-9_$.-]+]] = device.alloc_storage %[[V12]] align 64 on "cpu"
// CHECK-NEXT: %[[V14:[A-Za-z0-9_$.-]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[C:[A-Za-z0-9_$.-]+]] = device.alloc_tensor %[[V13]][%[[V14]]] (%[[V0]], %[[V9]]) : tensor<?x?xf32>
// CHECK-NEXT: %[[V15:[A-Za-z0-9_$.-]+]] = arith.cmpi eq, %[[V1]], %[[V9]] : index
// CHECK-NEXT: %[[V16:[A-Za-z0-9_$.-]+]] = arith.cmpi eq, %[[V2]], %[[V9]] : index
// CHECK-NEXT: %[[V17:[A-Za-z0-9_$.-]+]] = arith.andi %[[V15]], %[[V16]] : i1
// CHECK-NEXT: device.launch @broadcast_picks_a_variant_add_0(%[[A]], %[[B]]) outs(%[[C]]) variants [@broadcast_picks_a_variant_add_0_ns] if %[[V17]] on "cpu" : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32>
// CHECK-NEXT: func.return %[[C]] : tensor<?x?xf32>
// CHECK-NEXT: }
// CHECK-LABEL: func.func private @broadcast_picks_a_variant_add_0_group
// CHECK-SAME: (%[[A:[A-Za-z0-9_$.-]+]]: tensor<?x?xf32>, %[[B:[A-Za-z0-9_$.-]+]]: tensor<?xf32>) -> tensor<?x?xf32> attributes {device.host_function = "graph.fused", device.group_of = [@broadcast_picks_a_variant_add_0, @broadcast_picks_a_variant_add_0_ns]} {
// CHECK-NEXT: %[[C:[A-Za-z0-9_$.-]+]] = graph.add %[[A]], %[[B]] : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32>
// CHECK-NEXT: func.return %[[C]] : tensor<?x?xf32>
// CHECK-NEXT: }
func.func @broadcast_picks_a_variant(%a: tensor<?x?xf32>, %b: tensor<?xf32>) -> tensor<?x?xf32> {
  %c = graph.add %a, %b : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32>
  func.return %c : tensor<?x?xf32>
}

// -----

// A 3x3 stride-1 conv whose map size is known only at run time: its Winograd kernel is
// launched where the output has at least 576 pixels, the im2col kernel elsewhere.

// CHECK-LABEL: func.func @conv_form_at_run_time
// CHECK: %[[Y:[A-Za-z0-9_$.-]+]] = device.alloc_tensor %{{.*}}[%{{.*}}] (%[[OH:[A-Za-z0-9_$.-]+]], %[[OW:[A-Za-z0-9_$.-]+]]) : tensor<1x32x?x?xf32>
// CHECK-NEXT: %[[PIXELS:[A-Za-z0-9_$.-]+]] = arith.muli %[[OH]], %[[OW]] : index
// CHECK-NEXT: %[[LEAST:[A-Za-z0-9_$.-]+]] = arith.constant 576 : index
// CHECK-NEXT: %[[WANTED:[A-Za-z0-9_$.-]+]] = arith.cmpi sge, %[[PIXELS]], %[[LEAST]] : index
// CHECK-NEXT: device.launch @conv_form_at_run_time_conv2d_0(%{{.*}}, %{{.*}}) outs(%[[Y]]) variants [@conv_form_at_run_time_conv2d_0_wg] if %[[WANTED]] on "cpu"
// CHECK-LABEL: func.func private @conv_form_at_run_time_conv2d_0_group
// CHECK-SAME: device.group_of = [@conv_form_at_run_time_conv2d_0, @conv_form_at_run_time_conv2d_0_wg]
func.func @conv_form_at_run_time(%x: tensor<1x32x?x?xf32>, %w: tensor<32x32x3x3xf32>) -> tensor<1x32x?x?xf32> {
  %y = graph.conv2d %x, %w {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x32x?x?xf32>, tensor<32x32x3x3xf32>) -> tensor<1x32x?x?xf32>
  func.return %y : tensor<1x32x?x?xf32>
}

// -----

// With a residual that could stretch the conv's output, the Winograd form applies only in
// the no-stretch variant: launched where nothing stretches and the sizes (input channels
// too, `?` here) ask for it; the no-stretch im2col kernel where only nothing stretches.

// CHECK-LABEL: func.func @conv_form_and_residual
// CHECK: %[[CIN:[A-Za-z0-9_$.-]+]] = dynshape.dim %{{.*}}, 1 : tensor<32x?x3x3xf32>
// CHECK: %[[S1:[A-Za-z0-9_$.-]+]] = arith.andi %{{.*}}, %{{.*}} : i1
// CHECK-NEXT: %[[S2:[A-Za-z0-9_$.-]+]] = arith.andi %[[S1]], %{{.*}} : i1
// CHECK-NEXT: %[[SAME:[A-Za-z0-9_$.-]+]] = arith.andi %[[S2]], %{{.*}} : i1
// CHECK-NEXT: %[[PIXELS:[A-Za-z0-9_$.-]+]] = arith.muli %{{.*}}, %{{.*}} : index
// CHECK-NEXT: %[[C32:[A-Za-z0-9_$.-]+]] = arith.constant 32 : index
// CHECK-NEXT: %[[WIDE:[A-Za-z0-9_$.-]+]] = arith.cmpi sge, %[[CIN]], %[[C32]] : index
// CHECK-NEXT: %[[C576:[A-Za-z0-9_$.-]+]] = arith.constant 576 : index
// CHECK-NEXT: %[[MANY:[A-Za-z0-9_$.-]+]] = arith.cmpi sge, %[[PIXELS]], %[[C576]] : index
// CHECK-NEXT: %[[WANTED:[A-Za-z0-9_$.-]+]] = arith.andi %[[WIDE]], %[[MANY]] : i1
// CHECK-NEXT: %[[BOTH:[A-Za-z0-9_$.-]+]] = arith.andi %[[WANTED]], %[[SAME]] : i1
// CHECK-NEXT: device.launch @conv_form_and_residual_conv2d_0(%{{.*}}, %{{.*}}, %{{.*}}) outs(%{{.*}}) variants [@conv_form_and_residual_conv2d_0_wg_ns, @conv_form_and_residual_conv2d_0_ns] if %[[BOTH]], %[[SAME]] on "cpu"
func.func @conv_form_and_residual(%x: tensor<1x?x?x?xf32>, %w: tensor<32x?x3x3xf32>, %r: tensor<1x32x?x?xf32>) -> tensor<1x32x?x?xf32> {
  %y = graph.conv2d %x, %w {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x?x?x?xf32>, tensor<32x?x3x3xf32>) -> tensor<1x32x?x?xf32>
  %s = graph.add %y, %r : (tensor<1x32x?x?xf32>, tensor<1x32x?x?xf32>) -> tensor<1x32x?x?xf32>
  func.return %s : tensor<1x32x?x?xf32>
}
