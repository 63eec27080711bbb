// RUN: nimble-opt %s --split-input-file -p fuse-ops | filecheck %s

// CHECK-LABEL: func.func @dense_bias_activation
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?x8xf32>, %[[W:[A-Za-z0-9_$.-]+]]: tensor<4x8xf32>, %[[B:[A-Za-z0-9_$.-]+]]: tensor<4xf32>) -> tensor<?x4xf32> {
// CHECK-NEXT: %[[R:[A-Za-z0-9_$.-]+]] = graph.fused (%[[X_1:[A-Za-z0-9_$.-]+]] = %[[X]], %[[W_1:[A-Za-z0-9_$.-]+]] = %[[W]], %[[B_1:[A-Za-z0-9_$.-]+]] = %[[B]]) : (tensor<?x8xf32>, tensor<4x8xf32>, tensor<4xf32>) -> tensor<?x4xf32> {
// CHECK-NEXT: %[[D:[A-Za-z0-9_$.-]+]] = graph.dense %[[X_1]], %[[W_1]] : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<?x4xf32>
// CHECK-NEXT: %[[A:[A-Za-z0-9_$.-]+]] = graph.add %[[D]], %[[B_1]] : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
// CHECK-NEXT: %[[R_1:[A-Za-z0-9_$.-]+]] = graph.relu %[[A]] : tensor<?x4xf32> -> tensor<?x4xf32>
// CHECK-NEXT: graph.yield %[[R_1]] : tensor<?x4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[R]] : tensor<?x4xf32>
// CHECK-NEXT: }

func.func @dense_bias_activation(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>, %b: tensor<4xf32>) -> tensor<?x4xf32> {
  %d = graph.dense %x, %w : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<?x4xf32>
  %a = graph.add %d, %b : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %r = graph.relu %a : tensor<?x4xf32> -> tensor<?x4xf32>
  func.return %r : tensor<?x4xf32>
}

// -----

// CHECK-LABEL: func.func @gru_like_two_matmuls
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<1x8xf32>, %[[H:[A-Za-z0-9_$.-]+]]: tensor<1x4xf32>, %[[W:[A-Za-z0-9_$.-]+]]: tensor<4x8xf32>, %[[U:[A-Za-z0-9_$.-]+]]: tensor<4x4xf32>) -> tensor<1x4xf32> {
// CHECK-NEXT: %[[N:[A-Za-z0-9_$.-]+]] = graph.fused (%[[X_1:[A-Za-z0-9_$.-]+]] = %[[X]], %[[W_1:[A-Za-z0-9_$.-]+]] = %[[W]], %[[H_1:[A-Za-z0-9_$.-]+]] = %[[H]], %[[U_1:[A-Za-z0-9_$.-]+]] = %[[U]]) : (tensor<1x8xf32>, tensor<4x8xf32>, tensor<1x4xf32>, tensor<4x4xf32>) -> tensor<1x4xf32> {
// CHECK-NEXT: %[[WX:[A-Za-z0-9_$.-]+]] = graph.dense %[[X_1]], %[[W_1]] : (tensor<1x8xf32>, tensor<4x8xf32>) -> tensor<1x4xf32>
// CHECK-NEXT: %[[UH:[A-Za-z0-9_$.-]+]] = graph.dense %[[H_1]], %[[U_1]] : (tensor<1x4xf32>, tensor<4x4xf32>) -> tensor<1x4xf32>
// CHECK-NEXT: %[[S:[A-Za-z0-9_$.-]+]] = graph.add %[[WX]], %[[UH]] : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
// CHECK-NEXT: %[[Z:[A-Za-z0-9_$.-]+]] = graph.sigmoid %[[S]] : tensor<1x4xf32> -> tensor<1x4xf32>
// CHECK-NEXT: %[[N_1:[A-Za-z0-9_$.-]+]] = graph.mul %[[Z]], %[[H_1]] : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
// CHECK-NEXT: graph.yield %[[N_1]] : tensor<1x4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[N]] : tensor<1x4xf32>
// CHECK-NEXT: }
func.func @gru_like_two_matmuls(%x: tensor<1x8xf32>, %h: tensor<1x4xf32>, %w: tensor<4x8xf32>, %u: tensor<4x4xf32>) -> tensor<1x4xf32> {
  %wx = graph.dense %x, %w : (tensor<1x8xf32>, tensor<4x8xf32>) -> tensor<1x4xf32>
  %uh = graph.dense %h, %u : (tensor<1x4xf32>, tensor<4x4xf32>) -> tensor<1x4xf32>
  %s = graph.add %wx, %uh : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %z = graph.sigmoid %s : tensor<1x4xf32> -> tensor<1x4xf32>
  %n = graph.mul %z, %h : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  func.return %n : tensor<1x4xf32>
}

// -----

// CHECK-LABEL: func.func @reduction_prologue_epilogue
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?x16xf32>, %[[T:[A-Za-z0-9_$.-]+]]: tensor<f32>) -> tensor<?x16xf32> {
// CHECK-NEXT: %[[E:[A-Za-z0-9_$.-]+]] = graph.fused (%[[X_1:[A-Za-z0-9_$.-]+]] = %[[X]], %[[T_1:[A-Za-z0-9_$.-]+]] = %[[T]]) : (tensor<?x16xf32>, tensor<f32>) -> tensor<?x16xf32> {
// CHECK-NEXT: %[[S:[A-Za-z0-9_$.-]+]] = graph.mul %[[X_1]], %[[T_1]] : (tensor<?x16xf32>, tensor<f32>) -> tensor<?x16xf32>
// CHECK-NEXT: %[[P:[A-Za-z0-9_$.-]+]] = graph.softmax %[[S]] : tensor<?x16xf32> -> tensor<?x16xf32>
// CHECK-NEXT: %[[E_1:[A-Za-z0-9_$.-]+]] = graph.exp %[[P]] : tensor<?x16xf32> -> tensor<?x16xf32>
// CHECK-NEXT: graph.yield %[[E_1]] : tensor<?x16xf32>
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[E]] : tensor<?x16xf32>
// CHECK-NEXT: }
func.func @reduction_prologue_epilogue(%x: tensor<?x16xf32>, %t: tensor<f32>) -> tensor<?x16xf32> {
  %s = graph.mul %x, %t : (tensor<?x16xf32>, tensor<f32>) -> tensor<?x16xf32>
  %p = graph.softmax %s : tensor<?x16xf32> -> tensor<?x16xf32>
  %e = graph.exp %p : tensor<?x16xf32> -> tensor<?x16xf32>
  func.return %e : tensor<?x16xf32>
}

// -----

// CHECK-LABEL: func.func @heavy_ops_do_not_chain
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<2x8xf32>, %[[W:[A-Za-z0-9_$.-]+]]: tensor<8x8xf32>) -> tensor<2x8xf32> {
// CHECK-NEXT: %[[A:[A-Za-z0-9_$.-]+]] = graph.matmul %[[X]], %[[W]] : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
// CHECK-NEXT: %[[B:[A-Za-z0-9_$.-]+]] = graph.matmul %[[A]], %[[W]] : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
// CHECK-NEXT: func.return %[[B]] : tensor<2x8xf32>
// CHECK-NEXT: }
func.func @heavy_ops_do_not_chain(%x: tensor<2x8xf32>, %w: tensor<8x8xf32>) -> tensor<2x8xf32> {
  %a = graph.matmul %x, %w : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %b = graph.matmul %a, %w : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  func.return %b : tensor<2x8xf32>
}

// -----

// CHECK-LABEL: func.func @opaque_ops_stay_outside
// CHECK-SAME: (%[[B:[A-Za-z0-9_$.-]+]]: tensor<?x4xf32>, %[[S:[A-Za-z0-9_$.-]+]]: tensor<?xf32>) -> tensor<?x4xf32> {
// CHECK-NEXT: %[[T:[A-Za-z0-9_$.-]+]] = graph.tanh %[[S]] : tensor<?xf32> -> tensor<?xf32>
// CHECK-NEXT: %[[K:[A-Za-z0-9_$.-]+]] = graph.nms %[[B]], %[[T]] {iou_threshold = 5.000000e-01 : f64} : (tensor<?x4xf32>, tensor<?xf32>) -> tensor<?xi64>
// CHECK-NEXT: %[[N:[A-Za-z0-9_$.-]+]] = graph.fused (%[[B_1:[A-Za-z0-9_$.-]+]] = %[[B]], %[[K_1:[A-Za-z0-9_$.-]+]] = %[[K]]) : (tensor<?x4xf32>, tensor<?xi64>) -> tensor<?x4xf32> {
// CHECK-NEXT: %[[G:[A-Za-z0-9_$.-]+]] = graph.gather %[[B_1]], %[[K_1]] : (tensor<?x4xf32>, tensor<?xi64>) -> tensor<?x4xf32>
// CHECK-NEXT: %[[N_1:[A-Za-z0-9_$.-]+]] = graph.neg %[[G]] : tensor<?x4xf32> -> tensor<?x4xf32>
// CHECK-NEXT: graph.yield %[[N_1]] : tensor<?x4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[N]] : tensor<?x4xf32>
// CHECK-NEXT: }
func.func @opaque_ops_stay_outside(%b: tensor<?x4xf32>, %s: tensor<?xf32>) -> tensor<?x4xf32> {
  %t = graph.tanh %s : tensor<?xf32> -> tensor<?xf32>
  %k = graph.nms %b, %t {iou_threshold = 5.0e-01 : f64} : (tensor<?x4xf32>, tensor<?xf32>) -> tensor<?xi64>
  %g = graph.gather %b, %k {axis = 0 : i64} : (tensor<?x4xf32>, tensor<?xi64>) -> tensor<?x4xf32>
  %n = graph.neg %g : tensor<?x4xf32> -> tensor<?x4xf32>
  func.return %n : tensor<?x4xf32>
}

// -----

// CHECK-LABEL: func.func @intermediate_used_outside
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
// CHECK-NEXT: %[[A:[A-Za-z0-9_$.-]+]], %[[B:[A-Za-z0-9_$.-]+]] = graph.fused (%[[X_1:[A-Za-z0-9_$.-]+]] = %[[X]]) : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
// CHECK-NEXT: %[[A_1:[A-Za-z0-9_$.-]+]] = graph.exp %[[X_1]] : tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[B_1:[A-Za-z0-9_$.-]+]] = graph.neg %[[A_1]] : tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: graph.yield %[[A_1]], %[[B_1]] : tensor<4xf32>, tensor<4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[A]], %[[B]] : tensor<4xf32>, tensor<4xf32>
// CHECK-NEXT: }
func.func @intermediate_used_outside(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %a = graph.exp %x : tensor<4xf32> -> tensor<4xf32>
  %b = graph.neg %a : tensor<4xf32> -> tensor<4xf32>
  func.return %a, %b : tensor<4xf32>, tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @use_inside_a_region_keeps_groups_apart
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<4xf32>, %[[C:[A-Za-z0-9_$.-]+]]: tensor<i1>) -> tensor<4xf32> {
// CHECK-NEXT: %[[A:[A-Za-z0-9_$.-]+]] = graph.relu %[[X]] : tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[R:[A-Za-z0-9_$.-]+]] = graph.if %[[C]] : tensor<i1> -> (tensor<4xf32>) {
// CHECK-NEXT: %[[N:[A-Za-z0-9_$.-]+]] = graph.neg %[[A]] : tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: graph.yield %[[N]] : tensor<4xf32>
// CHECK-NEXT: } else {
// CHECK-NEXT: graph.yield %[[X]] : tensor<4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: %[[B:[A-Za-z0-9_$.-]+]] = graph.add %[[A]], %[[R]] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: func.return %[[B]] : tensor<4xf32>
// CHECK-NEXT: }
func.func @use_inside_a_region_keeps_groups_apart(%x: tensor<4xf32>, %c: tensor<i1>) -> tensor<4xf32> {
  %a = graph.relu %x : tensor<4xf32> -> tensor<4xf32>
  %r = graph.if %c : tensor<i1> -> (tensor<4xf32>) {
    %n = graph.neg %a : tensor<4xf32> -> tensor<4xf32>
    graph.yield %n : tensor<4xf32>
  } else {
    graph.yield %x : tensor<4xf32>
  }
  %b = graph.add %a, %r : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %b : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @transpose_leaves_a_heavy_output_alone
// CHECK-SAME: (%[[A:[A-Za-z0-9_$.-]+]]: tensor<4x?x64xf32>, %[[B:[A-Za-z0-9_$.-]+]]: tensor<4x64x?xf32>) -> tensor<?x4x?xf32> {
// CHECK-NEXT: %[[M:[A-Za-z0-9_$.-]+]] = graph.matmul %[[A]], %[[B]] : (tensor<4x?x64xf32>, tensor<4x64x?xf32>) -> tensor<4x?x?xf32>
// CHECK-NEXT: %[[R:[A-Za-z0-9_$.-]+]] = graph.fused (%[[M_1:[A-Za-z0-9_$.-]+]] = %[[M]]) : (tensor<4x?x?xf32>) -> tensor<?x4x?xf32> {
// CHECK-NEXT: %[[T:[A-Za-z0-9_$.-]+]] = graph.transpose %[[M_1]] [1, 0, 2] : tensor<4x?x?xf32> -> tensor<?x4x?xf32>
// CHECK-NEXT: %[[R_1:[A-Za-z0-9_$.-]+]] = graph.relu %[[T]] : tensor<?x4x?xf32> -> tensor<?x4x?xf32>
// CHECK-NEXT: graph.yield %[[R_1]] : tensor<?x4x?xf32>
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[R]] : tensor<?x4x?xf32>
// CHECK-NEXT: }
func.func @transpose_leaves_a_heavy_output_alone(%a: tensor<4x?x64xf32>, %b: tensor<4x64x?xf32>) -> tensor<?x4x?xf32> {
  %m = graph.matmul %a, %b : (tensor<4x?x64xf32>, tensor<4x64x?xf32>) -> tensor<4x?x?xf32>
  %t = graph.transpose %m [1, 0, 2] : tensor<4x?x?xf32> -> tensor<?x4x?xf32>
  %r = graph.relu %t : tensor<?x4x?xf32> -> tensor<?x4x?xf32>
  func.return %r : tensor<?x4x?xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_leaves_a_heavy_output_alone
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?x256xf32>, %[[W:[A-Za-z0-9_$.-]+]]: tensor<256x256xf32>, %[[B:[A-Za-z0-9_$.-]+]]: tensor<256xf32>) -> tensor<?x4x64xf32> {
// CHECK-NEXT: %[[G:[A-Za-z0-9_$.-]+]] = graph.fused (%[[X_1:[A-Za-z0-9_$.-]+]] = %[[X]], %[[W_1:[A-Za-z0-9_$.-]+]] = %[[W]], %[[B_1:[A-Za-z0-9_$.-]+]] = %[[B]]) : (tensor<?x256xf32>, tensor<256x256xf32>, tensor<256xf32>) -> tensor<?x256xf32> {
// CHECK-NEXT: %[[D:[A-Za-z0-9_$.-]+]] = graph.dense %[[X_1]], %[[W_1]], %[[B_1]] : (tensor<?x256xf32>, tensor<256x256xf32>, tensor<256xf32>) -> tensor<?x256xf32>
// CHECK-NEXT: %[[G_1:[A-Za-z0-9_$.-]+]] = graph.gelu %[[D]] : tensor<?x256xf32> -> tensor<?x256xf32>
// CHECK-NEXT: graph.yield %[[G_1]] : tensor<?x256xf32>
// CHECK-NEXT: }
// CHECK-NEXT: %[[R:[A-Za-z0-9_$.-]+]] = graph.reshape %[[G]] [-1, 4, 64] : tensor<?x256xf32> -> tensor<?x4x64xf32>
// CHECK-NEXT: func.return %[[R]] : tensor<?x4x64xf32>
// CHECK-NEXT: }

// A reshape of a heavy op's output stays out of its group (a view of its buffer, no
// kernel); the bias and activation before it still join.
func.func @reshape_leaves_a_heavy_output_alone(%x: tensor<?x256xf32>, %w: tensor<256x256xf32>, %b: tensor<256xf32>) -> tensor<?x4x64xf32> {
  %d = graph.dense %x, %w, %b : (tensor<?x256xf32>, tensor<256x256xf32>, tensor<256xf32>) -> tensor<?x256xf32>
  %g = graph.gelu %d : tensor<?x256xf32> -> tensor<?x256xf32>
  %r = graph.reshape %g [-1, 4, 64] : tensor<?x256xf32> -> tensor<?x4x64xf32>
  func.return %r : tensor<?x4x64xf32>
}

// -----

// CHECK-LABEL: func.func @convs_do_not_share_a_group
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<1x8x?x?xf32>, %[[W1:[A-Za-z0-9_$.-]+]]: tensor<8x8x3x3xf32>, %[[W2:[A-Za-z0-9_$.-]+]]: tensor<8x8x1x1xf32>) -> tensor<1x8x?x?xf32> {
// CHECK-NEXT: %[[B:[A-Za-z0-9_$.-]+]] = graph.conv2d %[[X]], %[[W2]] : (tensor<1x8x?x?xf32>, tensor<8x8x1x1xf32>) -> tensor<1x8x?x?xf32>
// CHECK-NEXT: %[[R:[A-Za-z0-9_$.-]+]] = graph.fused (%[[X_1:[A-Za-z0-9_$.-]+]] = %[[X]], %[[W1_1:[A-Za-z0-9_$.-]+]] = %[[W1]], %[[B_1:[A-Za-z0-9_$.-]+]] = %[[B]]) : (tensor<1x8x?x?xf32>, tensor<8x8x3x3xf32>, tensor<1x8x?x?xf32>) -> tensor<1x8x?x?xf32> {
// CHECK-NEXT: %[[A:[A-Za-z0-9_$.-]+]] = graph.conv2d %[[X_1]], %[[W1_1]] {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x8x?x?xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x?x?xf32>
// CHECK-NEXT: %[[S:[A-Za-z0-9_$.-]+]] = graph.add %[[A]], %[[B_1]] : (tensor<1x8x?x?xf32>, tensor<1x8x?x?xf32>) -> tensor<1x8x?x?xf32>
// CHECK-NEXT: %[[R_1:[A-Za-z0-9_$.-]+]] = graph.relu %[[S]] : tensor<1x8x?x?xf32> -> tensor<1x8x?x?xf32>
// CHECK-NEXT: graph.yield %[[R_1]] : tensor<1x8x?x?xf32>
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[R]] : tensor<1x8x?x?xf32>
// CHECK-NEXT: }

// Two convs feeding one add (a projection shortcut) stay in their own groups: the add
// joins the first; the second conv keeps its own im2col kernel.
func.func @convs_do_not_share_a_group(%x: tensor<1x8x?x?xf32>, %w1: tensor<8x8x3x3xf32>, %w2: tensor<8x8x1x1xf32>) -> tensor<1x8x?x?xf32> {
  %a = graph.conv2d %x, %w1 {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x8x?x?xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x?x?xf32>
  %b = graph.conv2d %x, %w2 {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x8x?x?xf32>, tensor<8x8x1x1xf32>) -> tensor<1x8x?x?xf32>
  %s = graph.add %a, %b : (tensor<1x8x?x?xf32>, tensor<1x8x?x?xf32>) -> tensor<1x8x?x?xf32>
  %r = graph.relu %s : tensor<1x8x?x?xf32> -> tensor<1x8x?x?xf32>
  func.return %r : tensor<1x8x?x?xf32>
}

// -----

// A small elementwise prologue (one static row) joins the dense layer it feeds: the
// kernel recomputes it per output column, and saves a launch (a Tree-LSTM's hl + hr).
// CHECK-LABEL: func.func @small_prologue_joins_dense
// CHECK-SAME: (%[[A:[A-Za-z0-9_$.-]+]]: tensor<1x150xf32>, %[[B:[A-Za-z0-9_$.-]+]]: tensor<1x150xf32>, %[[W:[A-Za-z0-9_$.-]+]]: tensor<450x150xf32>) -> tensor<1x450xf32> {
// CHECK-NEXT: %[[Y:[A-Za-z0-9_$.-]+]] = graph.fused (%[[A_1:[A-Za-z0-9_$.-]+]] = %[[A]], %[[B_1:[A-Za-z0-9_$.-]+]] = %[[B]], %[[W_1:[A-Za-z0-9_$.-]+]] = %[[W]]) : (tensor<1x150xf32>, tensor<1x150xf32>, tensor<450x150xf32>) -> tensor<1x450xf32> {
// CHECK-NEXT: %[[S:[A-Za-z0-9_$.-]+]] = graph.add %[[A_1]], %[[B_1]] : (tensor<1x150xf32>, tensor<1x150xf32>) -> tensor<1x150xf32>
// CHECK-NEXT: %[[Y_1:[A-Za-z0-9_$.-]+]] = graph.dense %[[S]], %[[W_1]] : (tensor<1x150xf32>, tensor<450x150xf32>) -> tensor<1x450xf32>
// CHECK-NEXT: graph.yield %[[Y_1]] : tensor<1x450xf32>
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[Y]] : tensor<1x450xf32>
// CHECK-NEXT: }

func.func @small_prologue_joins_dense(%a: tensor<1x150xf32>, %b: tensor<1x150xf32>, %w: tensor<450x150xf32>) -> tensor<1x450xf32> {
  %s = graph.add %a, %b : (tensor<1x150xf32>, tensor<1x150xf32>) -> tensor<1x150xf32>
  %y = graph.dense %s, %w : (tensor<1x150xf32>, tensor<450x150xf32>) -> tensor<1x450xf32>
  func.return %y : tensor<1x450xf32>
}

// -----

// With `?` rows it could be any size: it stays a kernel of its own.
// CHECK-LABEL: func.func @dynamic_prologue_stays_apart
// CHECK-SAME: (%[[A:[A-Za-z0-9_$.-]+]]: tensor<?x150xf32>, %[[B:[A-Za-z0-9_$.-]+]]: tensor<?x150xf32>, %[[W:[A-Za-z0-9_$.-]+]]: tensor<450x150xf32>) -> tensor<?x450xf32> {
// CHECK-NEXT: %[[S:[A-Za-z0-9_$.-]+]] = graph.add %[[A]], %[[B]] : (tensor<?x150xf32>, tensor<?x150xf32>) -> tensor<?x150xf32>
// CHECK-NEXT: %[[Y:[A-Za-z0-9_$.-]+]] = graph.dense %[[S]], %[[W]] : (tensor<?x150xf32>, tensor<450x150xf32>) -> tensor<?x450xf32>
// CHECK-NEXT: func.return %[[Y]] : tensor<?x450xf32>
// CHECK-NEXT: }

func.func @dynamic_prologue_stays_apart(%a: tensor<?x150xf32>, %b: tensor<?x150xf32>, %w: tensor<450x150xf32>) -> tensor<?x450xf32> {
  %s = graph.add %a, %b : (tensor<?x150xf32>, tensor<?x150xf32>) -> tensor<?x150xf32>
  %y = graph.dense %s, %w : (tensor<?x150xf32>, tensor<450x150xf32>) -> tensor<?x450xf32>
  func.return %y : tensor<?x450xf32>
}

// -----

// A concat of a conv's output with a feature map made elsewhere stays out of the conv's
// group (with the ops after it): joined, it would copy that map inside the conv's kernel
// (a DenseNet layer's next input, all earlier features: each conv its own kernel).
// CHECK-LABEL: func.func @concat_of_outside_maps_leaves_the_conv
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?x8x?x?xf32>, %[[W:[A-Za-z0-9_$.-]+]]: tensor<4x8x3x3xf32>) -> tensor<?x12x?x?xf32> {
// CHECK-NEXT: %[[C:[A-Za-z0-9_$.-]+]] = graph.conv2d %[[X]], %[[W]] {padding = array<i64: 1, 1, 1, 1>} : (tensor<?x8x?x?xf32>, tensor<4x8x3x3xf32>) -> tensor<?x4x?x?xf32>
// CHECK-NEXT: %[[R:[A-Za-z0-9_$.-]+]] = graph.fused (%[[X_1:[A-Za-z0-9_$.-]+]] = %[[X]], %[[C_1:[A-Za-z0-9_$.-]+]] = %[[C]]) : (tensor<?x8x?x?xf32>, tensor<?x4x?x?xf32>) -> tensor<?x12x?x?xf32> {
// CHECK-NEXT: %[[J:[A-Za-z0-9_$.-]+]] = graph.concat %[[X_1]], %[[C_1]] {axis = 1 : i64} : (tensor<?x8x?x?xf32>, tensor<?x4x?x?xf32>) -> tensor<?x12x?x?xf32>
// CHECK-NEXT: %[[R_1:[A-Za-z0-9_$.-]+]] = graph.relu %[[J]] : tensor<?x12x?x?xf32> -> tensor<?x12x?x?xf32>
// CHECK-NEXT: graph.yield %[[R_1]] : tensor<?x12x?x?xf32>
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[R]] : tensor<?x12x?x?xf32>
// CHECK-NEXT: }

func.func @concat_of_outside_maps_leaves_the_conv(%x: tensor<?x8x?x?xf32>, %w: tensor<4x8x3x3xf32>) -> tensor<?x12x?x?xf32> {
  %c = graph.conv2d %x, %w {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<?x8x?x?xf32>, tensor<4x8x3x3xf32>) -> tensor<?x4x?x?xf32>
  %j = graph.concat %x, %c {axis = 1 : i64} : (tensor<?x8x?x?xf32>, tensor<?x4x?x?xf32>) -> tensor<?x12x?x?xf32>
  %r = graph.relu %j : tensor<?x12x?x?xf32> -> tensor<?x12x?x?xf32>
  func.return %r : tensor<?x12x?x?xf32>
}

// -----

// A concat whose other input is small (a static row) still joins the dense layer.
// CHECK-LABEL: func.func @concat_of_a_small_value_joins_dense
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<1x8xf32>, %[[W:[A-Za-z0-9_$.-]+]]: tensor<4x8xf32>, %[[E:[A-Za-z0-9_$.-]+]]: tensor<1x2xf32>) -> tensor<1x6xf32> {
// CHECK-NEXT: %[[J:[A-Za-z0-9_$.-]+]] = graph.fused (%[[X_1:[A-Za-z0-9_$.-]+]] = %[[X]], %[[W_1:[A-Za-z0-9_$.-]+]] = %[[W]], %[[E_1:[A-Za-z0-9_$.-]+]] = %[[E]]) : (tensor<1x8xf32>, tensor<4x8xf32>, tensor<1x2xf32>) -> tensor<1x6xf32> {
// CHECK-NEXT: %[[D:[A-Za-z0-9_$.-]+]] = graph.dense %[[X_1]], %[[W_1]] : (tensor<1x8xf32>, tensor<4x8xf32>) -> tensor<1x4xf32>
// CHECK-NEXT: %[[J_1:[A-Za-z0-9_$.-]+]] = graph.concat %[[D]], %[[E_1]] {axis = 1 : i64} : (tensor<1x4xf32>, tensor<1x2xf32>) -> tensor<1x6xf32>
// CHECK-NEXT: graph.yield %[[J_1]] : tensor<1x6xf32>
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[J]] : tensor<1x6xf32>
// CHECK-NEXT: }

func.func @concat_of_a_small_value_joins_dense(%x: tensor<1x8xf32>, %w: tensor<4x8xf32>, %e: tensor<1x2xf32>) -> tensor<1x6xf32> {
  %d = graph.dense %x, %w : (tensor<1x8xf32>, tensor<4x8xf32>) -> tensor<1x4xf32>
  %j = graph.concat %d, %e {axis = 1 : i64} : (tensor<1x4xf32>, tensor<1x2xf32>) -> tensor<1x6xf32>
  func.return %j : tensor<1x6xf32>
}
