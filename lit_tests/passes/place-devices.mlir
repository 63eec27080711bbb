// RUN: nimble-opt %s --split-input-file -p 'place-devices{default=opencl}' | filecheck %s

// CHECK-LABEL: func.func @pinned_middle
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?x8xf32>) -> tensor<?x8xf32> {
// CHECK-NEXT: %[[V0:[A-Za-z0-9_$.-]+]] = device.copy %[[X]] from "cpu" to "opencl" : tensor<?x8xf32> -> tensor<?x8xf32>
// CHECK-NEXT: %[[T:[A-Za-z0-9_$.-]+]] = graph.fused (%[[X_1:[A-Za-z0-9_$.-]+]] = %[[V0]]) : (tensor<?x8xf32>) -> tensor<?x8xf32> {
// CHECK-NEXT: %[[T_1:[A-Za-z0-9_$.-]+]] = graph.tanh %[[X_1]] : tensor<?x8xf32> -> tensor<?x8xf32>
// CHECK-NEXT: graph.yield %[[T_1]] : tensor<?x8xf32>
// CHECK-NEXT: } attributes {device.placement = "opencl"}
// CHECK-NEXT: %[[V1:[A-Za-z0-9_$.-]+]] = device.copy %[[T]] from "opencl" to "cpu" : tensor<?x8xf32> -> tensor<?x8xf32>
// CHECK-NEXT: %[[E:[A-Za-z0-9_$.-]+]] = graph.fused (%[[T_1]] = %[[V1]]) : (tensor<?x8xf32>) -> tensor<?x8xf32> {
// CHECK-NEXT: %[[E_1:[A-Za-z0-9_$.-]+]] = graph.exp %[[T_1]] {device.placement = "cpu"} : tensor<?x8xf32> -> tensor<?x8xf32>
// CHECK-NEXT: graph.yield %[[E_1]] : tensor<?x8xf32>
// CHECK-NEXT: } attributes {device.placement = "cpu"}
// CHECK-NEXT: %[[V2:[A-Za-z0-9_$.-]+]] = device.copy %[[E]] from "cpu" to "opencl" : tensor<?x8xf32> -> tensor<?x8xf32>
// CHECK-NEXT: %[[S:[A-Za-z0-9_$.-]+]] = graph.fused (%[[E_1]] = %[[V2]]) : (tensor<?x8xf32>) -> tensor<?x8xf32> {
// CHECK-NEXT: %[[S_1:[A-Za-z0-9_$.-]+]] = graph.mul %[[E_1]], %[[E_1]] : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
// CHECK-NEXT: graph.yield %[[S_1]] : tensor<?x8xf32>
// CHECK-NEXT: } attributes {device.placement = "opencl"}
// CHECK-NEXT: %[[V3:[A-Za-z0-9_$.-]+]] = device.copy %[[S]] from "opencl" to "cpu" : tensor<?x8xf32> -> tensor<?x8xf32>
// CHECK-NEXT: func.return %[[V3]] : tensor<?x8xf32>
// CHECK-NEXT: }

// A chain whose middle op is pinned to the CPU: a copy at each of the four real
// boundaries (argument in, to the pinned op, back, result out), none elsewhere.
func.func @pinned_middle(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %t = graph.tanh %x : tensor<?x8xf32> -> tensor<?x8xf32>
  %e = graph.exp %t {device.placement = "cpu"} : tensor<?x8xf32> -> tensor<?x8xf32>
  %s = graph.mul %e, %e : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  func.return %s : tensor<?x8xf32>
}

// -----

// CHECK-LABEL: func.func @carried_on_device
// CHECK-SAME: (%[[H0:[A-Za-z0-9_$.-]+]]: tensor<?x8xf32>, %[[N:[A-Za-z0-9_$.-]+]]: index) -> tensor<?x8xf32> {
// CHECK-NEXT: %[[V0:[A-Za-z0-9_$.-]+]] = device.copy %[[H0]] from "cpu" to "opencl" : tensor<?x8xf32> -> tensor<?x8xf32>
// CHECK-NEXT: %[[C0:[A-Za-z0-9_$.-]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[I:[A-Za-z0-9_$.-]+]], %[[H:[A-Za-z0-9_$.-]+]] = graph.while (%[[I0:[A-Za-z0-9_$.-]+]] = %[[C0]], %[[HH:[A-Za-z0-9_$.-]+]] = %[[V0]]) : (index, tensor<?x8xf32>) -> (index, tensor<?x8xf32>) {
// CHECK-NEXT: %[[ROWS:[A-Za-z0-9_$.-]+]] = dynshape.dim %[[HH]], 0 : tensor<?x8xf32>
// CHECK-NEXT: %[[MORE:[A-Za-z0-9_$.-]+]] = arith.cmpi slt, %[[I0]], %[[ROWS]] : index
// CHECK-NEXT: graph.condition %[[MORE]] : i1
// CHECK-NEXT: } do {
// CHECK-NEXT: ^bb0(%[[I1:[A-Za-z0-9_$.-]+]]: index, %[[H1:[A-Za-z0-9_$.-]+]]: tensor<?x8xf32>):
// CHECK-NEXT: %[[C1:[A-Za-z0-9_$.-]+]] = arith.constant 1 : index
// CHECK-NEXT: %[[NEXT:[A-Za-z0-9_$.-]+]] = arith.addi %[[I1]], %[[C1]] : index
// CHECK-NEXT: %[[H2:[A-Za-z0-9_$.-]+]] = graph.fused (%[[H1_1:[A-Za-z0-9_$.-]+]] = %[[H1]]) : (tensor<?x8xf32>) -> tensor<?x8xf32> {
// CHECK-NEXT: %[[H2_1:[A-Za-z0-9_$.-]+]] = graph.tanh %[[H1_1]] : tensor<?x8xf32> -> tensor<?x8xf32>
// CHECK-NEXT: graph.yield %[[H2_1]] : tensor<?x8xf32>
// CHECK-NEXT: } attributes {device.placement = "opencl"}
// CHECK-NEXT: graph.yield %[[NEXT]], %[[H2]] : index, tensor<?x8xf32>
// CHECK-NEXT: }
// CHECK-NEXT: %[[V1:[A-Za-z0-9_$.-]+]] = device.copy %[[H]] from "opencl" to "cpu" : tensor<?x8xf32> -> tensor<?x8xf32>
// CHECK-NEXT: func.return %[[V1]] : tensor<?x8xf32>
// CHECK-NEXT: }
// A loop whose carried tensor a device kernel makes: it stays on the device across
// iterations (one domain for initial, carried, yielded and result values); the copies
// sit before and after the loop, and the dims read for the exit test need none.
func.func @carried_on_device(%h0: tensor<?x8xf32>, %n: index) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %i, %h = graph.while (%i0 = %c0, %hh = %h0) : (index, tensor<?x8xf32>) -> (index, tensor<?x8xf32>) {
    %rows = dynshape.dim %hh, 0 : tensor<?x8xf32>
    %more = arith.cmpi slt, %i0, %rows : index
    graph.condition %more : i1
  } do {
  ^bb0(%i1: index, %h1: tensor<?x8xf32>):
    %c1 = arith.constant 1 : index
    %next = arith.addi %i1, %c1 : index
    %h2 = graph.tanh %h1 : tensor<?x8xf32> -> tensor<?x8xf32>
    graph.yield %next, %h2 : index, tensor<?x8xf32>
  }
  func.return %h : tensor<?x8xf32>
}

// -----

// CHECK-LABEL: func.func @layer
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?x8xf32>, %[[W:[A-Za-z0-9_$.-]+]]: tensor<8x8xf32>) -> tensor<?x8xf32> {
// CHECK-NEXT: %[[Y:[A-Za-z0-9_$.-]+]] = graph.fused (%[[X_1:[A-Za-z0-9_$.-]+]] = %[[X]], %[[W_1:[A-Za-z0-9_$.-]+]] = %[[W]]) : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32> {
// CHECK-NEXT: %[[Y_1:[A-Za-z0-9_$.-]+]] = graph.matmul %[[X_1]], %[[W_1]] : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
// CHECK-NEXT: graph.yield %[[Y_1]] : tensor<?x8xf32>
// CHECK-NEXT: } attributes {device.placement = "opencl"}
// CHECK-NEXT: func.return %[[Y]] : tensor<?x8xf32>
// CHECK-NEXT: }
// CHECK-LABEL: func.func @two_layers
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?x8xf32>, %[[W:[A-Za-z0-9_$.-]+]]: tensor<8x8xf32>) -> tensor<?x8xf32> {
// CHECK-NEXT: %[[V0:[A-Za-z0-9_$.-]+]] = device.copy %[[W]] from "cpu" to "opencl" : tensor<8x8xf32> -> tensor<8x8xf32>
// CHECK-NEXT: %[[V1:[A-Za-z0-9_$.-]+]] = device.copy %[[X]] from "cpu" to "opencl" : tensor<?x8xf32> -> tensor<?x8xf32>
// CHECK-NEXT: %[[A:[A-Za-z0-9_$.-]+]] = func.call @layer(%[[V1]], %[[V0]]) : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
// CHECK-NEXT: %[[B:[A-Za-z0-9_$.-]+]] = func.call @layer(%[[A]], %[[V0]]) : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
// CHECK-NEXT: %[[V2:[A-Za-z0-9_$.-]+]] = device.copy %[[B]] from "opencl" to "cpu" : tensor<?x8xf32> -> tensor<?x8xf32>
// CHECK-NEXT: func.return %[[V2]] : tensor<?x8xf32>
// CHECK-NEXT: }
// A callee's parameters join the callers' arguments: the weight is copied once by the
// entry function, not at every call.
func.func @layer(%x: tensor<?x8xf32>, %w: tensor<8x8xf32>) -> tensor<?x8xf32> {
  %y = graph.matmul %x, %w : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  func.return %y : tensor<?x8xf32>
}
func.func @two_layers(%x: tensor<?x8xf32>, %w: tensor<8x8xf32>) -> tensor<?x8xf32> {
  %a = func.call @layer(%x, %w) : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  %b = func.call @layer(%a, %w) : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  func.return %b : tensor<?x8xf32>
}

// -----

// CHECK-LABEL: func.func @nms_on_device
// CHECK-SAME: (%[[BOXES:[A-Za-z0-9_$.-]+]]: tensor<?x4xf32>, %[[LOGITS:[A-Za-z0-9_$.-]+]]: tensor<?xf32>) -> tensor<?xi64> {
// CHECK-NEXT: %[[V0:[A-Za-z0-9_$.-]+]] = device.copy %[[BOXES]] from "cpu" to "opencl" : tensor<?x4xf32> -> tensor<?x4xf32>
// CHECK-NEXT: %[[V1:[A-Za-z0-9_$.-]+]] = device.copy %[[LOGITS]] from "cpu" to "opencl" : tensor<?xf32> -> tensor<?xf32>
// CHECK-NEXT: %[[SCORES:[A-Za-z0-9_$.-]+]] = graph.fused (%[[LOGITS_1:[A-Za-z0-9_$.-]+]] = %[[V1]]) : (tensor<?xf32>) -> tensor<?xf32> {
// CHECK-NEXT: %[[SCORES_1:[A-Za-z0-9_$.-]+]] = graph.sigmoid %[[LOGITS_1]] : tensor<?xf32> -> tensor<?xf32>
// CHECK-NEXT: graph.yield %[[SCORES_1]] : tensor<?xf32>
// CHECK-NEXT: } attributes {device.placement = "opencl"}
// CHECK-NEXT: %[[KEEP:[A-Za-z0-9_$.-]+]] = graph.nms %[[V0]], %[[SCORES]] {device.placement = "opencl", iou_threshold = 5.000000e-01 : f32, score_threshold = 0.000000e+00 : f32, max_output = 10 : i64} : (tensor<?x4xf32>, tensor<?xf32>) -> tensor<?xi64>
// CHECK-NEXT: %[[V2:[A-Za-z0-9_$.-]+]] = device.copy %[[KEEP]] from "opencl" to "cpu" : tensor<?xi64> -> tensor<?xi64>
// CHECK-NEXT: func.return %[[V2]] : tensor<?xi64>
// CHECK-NEXT: }
// nms has an OpenCL implementation: it takes its operands on the device (the scores
// straight from the kernel that made them), and only its result comes back.
func.func @nms_on_device(%boxes: tensor<?x4xf32>, %logits: tensor<?xf32>) -> tensor<?xi64> {
  %scores = graph.sigmoid %logits : tensor<?xf32> -> tensor<?xf32>
  %keep = graph.nms %boxes, %scores {iou_threshold = 5.000000e-01 : f32, score_threshold = 0.0 : f32, max_output = 10 : i64} : (tensor<?x4xf32>, tensor<?xf32>) -> tensor<?xi64>
  func.return %keep : tensor<?xi64>
}
