// RUN: nimble-opt %s --split-input-file | filecheck %s
// RUN: nimble-opt %s --split-input-file --print-op-generic | nimble-opt --split-input-file | filecheck %s

// CHECK-LABEL: func.func @binary
// CHECK-SAME: (%[[A:[A-Za-z0-9_$.-]+]]: tensor<?x4xf32>, %[[B:[A-Za-z0-9_$.-]+]]: tensor<4xf32>) -> tensor<?x4xf32> {
// CHECK-NEXT: %[[V0:[A-Za-z0-9_$.-]+]] = graph.add %[[A]], %[[B]] : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
// CHECK-NEXT: %[[V1:[A-Za-z0-9_$.-]+]] = graph.sub %[[V0]], %[[B]] : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
// CHECK-NEXT: %[[V2:[A-Za-z0-9_$.-]+]] = graph.mul %[[V1]], %[[A]] : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
// CHECK-NEXT: %[[V3:[A-Za-z0-9_$.-]+]] = graph.div %[[V2]], %[[B]] : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
// CHECK-NEXT: %[[V4:[A-Za-z0-9_$.-]+]] = graph.pow %[[V3]], %[[B]] : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
// CHECK-NEXT: %[[V5:[A-Za-z0-9_$.-]+]] = graph.maximum %[[V4]], %[[A]] : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
// CHECK-NEXT: %[[V6:[A-Za-z0-9_$.-]+]] = graph.minimum %[[V5]], %[[B]] : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
// CHECK-NEXT: func.return %[[V6]] : tensor<?x4xf32>
// CHECK-NEXT: }
func.func @binary(%a: tensor<?x4xf32>, %b: tensor<4xf32>) -> tensor<?x4xf32> {
  %0 = graph.add %a, %b : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %1 = graph.sub %0, %b : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %2 = graph.mul %1, %a : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  %3 = graph.div %2, %b : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %4 = graph.pow %3, %b : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %5 = graph.maximum %4, %a : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  %6 = graph.minimum %5, %b : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  func.return %6 : tensor<?x4xf32>
}

// -----

// CHECK-LABEL: func.func @compare_and_select
// CHECK-SAME: (%[[A:[A-Za-z0-9_$.-]+]]: tensor<?x?xf32>, %[[B:[A-Za-z0-9_$.-]+]]: tensor<?x1xf32>) -> tensor<?x?xf32> {
// CHECK-NEXT: %[[EQ:[A-Za-z0-9_$.-]+]] = graph.equal %[[A]], %[[B]] : (tensor<?x?xf32>, tensor<?x1xf32>) -> tensor<?x?xi1>
// CHECK-NEXT: %[[LT:[A-Za-z0-9_$.-]+]] = graph.less %[[A]], %[[B]] : (tensor<?x?xf32>, tensor<?x1xf32>) -> tensor<?x?xi1>
// CHECK-NEXT: %[[GT:[A-Za-z0-9_$.-]+]] = graph.greater %[[A]], %[[B]] : (tensor<?x?xf32>, tensor<?x1xf32>) -> tensor<?x?xi1>
// CHECK-NEXT: %[[OR:[A-Za-z0-9_$.-]+]] = graph.or %[[EQ]], %[[LT]] : (tensor<?x?xi1>, tensor<?x?xi1>) -> tensor<?x?xi1>
// CHECK-NEXT: %[[AND:[A-Za-z0-9_$.-]+]] = graph.and %[[OR]], %[[GT]] : (tensor<?x?xi1>, tensor<?x?xi1>) -> tensor<?x?xi1>
// CHECK-NEXT: %[[NOT:[A-Za-z0-9_$.-]+]] = graph.not %[[AND]] : tensor<?x?xi1> -> tensor<?x?xi1>
// CHECK-NEXT: %[[R:[A-Za-z0-9_$.-]+]] = graph.where %[[NOT]], %[[A]], %[[B]] : (tensor<?x?xi1>, tensor<?x?xf32>, tensor<?x1xf32>) -> tensor<?x?xf32>
// CHECK-NEXT: func.return %[[R]] : tensor<?x?xf32>
// CHECK-NEXT: }
func.func @compare_and_select(%a: tensor<?x?xf32>, %b: tensor<?x1xf32>) -> tensor<?x?xf32> {
  %eq = graph.equal %a, %b : (tensor<?x?xf32>, tensor<?x1xf32>) -> tensor<?x?xi1>
  %lt = graph.less %a, %b : (tensor<?x?xf32>, tensor<?x1xf32>) -> tensor<?x?xi1>
  %gt = graph.greater %a, %b : (tensor<?x?xf32>, tensor<?x1xf32>) -> tensor<?x?xi1>
  %or = graph.or %eq, %lt : (tensor<?x?xi1>, tensor<?x?xi1>) -> tensor<?x?xi1>
  %and = graph.and %or, %gt : (tensor<?x?xi1>, tensor<?x?xi1>) -> tensor<?x?xi1>
  %not = graph.not %and : tensor<?x?xi1> -> tensor<?x?xi1>
  %r = graph.where %not, %a, %b : (tensor<?x?xi1>, tensor<?x?xf32>, tensor<?x1xf32>) -> tensor<?x?xf32>
  func.return %r : tensor<?x?xf32>
}

// -----

// CHECK-LABEL: func.func @unary
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?x4xf32>) -> tensor<?x4xf32> {
// CHECK-NEXT: %[[V0:[A-Za-z0-9_$.-]+]] = graph.neg %[[X]] : tensor<?x4xf32> -> tensor<?x4xf32>
// CHECK-NEXT: %[[V1:[A-Za-z0-9_$.-]+]] = graph.abs %[[V0]] : tensor<?x4xf32> -> tensor<?x4xf32>
// CHECK-NEXT: %[[V2:[A-Za-z0-9_$.-]+]] = graph.exp %[[V1]] : tensor<?x4xf32> -> tensor<?x4xf32>
// CHECK-NEXT: %[[V3:[A-Za-z0-9_$.-]+]] = graph.log %[[V2]] : tensor<?x4xf32> -> tensor<?x4xf32>
// CHECK-NEXT: %[[V4:[A-Za-z0-9_$.-]+]] = graph.sqrt %[[V3]] : tensor<?x4xf32> -> tensor<?x4xf32>
// CHECK-NEXT: %[[V5:[A-Za-z0-9_$.-]+]] = graph.rsqrt %[[V4]] : tensor<?x4xf32> -> tensor<?x4xf32>
// CHECK-NEXT: %[[V6:[A-Za-z0-9_$.-]+]] = graph.tanh %[[V5]] : tensor<?x4xf32> -> tensor<?x4xf32>
// CHECK-NEXT: %[[V7:[A-Za-z0-9_$.-]+]] = graph.sigmoid %[[V6]] : tensor<?x4xf32> -> tensor<?x4xf32>
// CHECK-NEXT: %[[V8:[A-Za-z0-9_$.-]+]] = graph.relu %[[V7]] : tensor<?x4xf32> -> tensor<?x4xf32>
// CHECK-NEXT: %[[V9:[A-Za-z0-9_$.-]+]] = graph.gelu %[[V8]] : tensor<?x4xf32> -> tensor<?x4xf32>
// CHECK-NEXT: %[[V10:[A-Za-z0-9_$.-]+]] = graph.erf %[[V9]] : tensor<?x4xf32> -> tensor<?x4xf32>
// CHECK-NEXT: %[[V11:[A-Za-z0-9_$.-]+]] = graph.clip %[[V10]] {min = 0.000000e+00 : f64, max = 6.000000e+00 : f64} : tensor<?x4xf32> -> tensor<?x4xf32>
// CHECK-NEXT: func.return %[[V11]] : tensor<?x4xf32>
// CHECK-NEXT: }
func.func @unary(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = graph.neg %x : tensor<?x4xf32> -> tensor<?x4xf32>
  %1 = graph.abs %0 : tensor<?x4xf32> -> tensor<?x4xf32>
  %2 = graph.exp %1 : tensor<?x4xf32> -> tensor<?x4xf32>
  %3 = graph.log %2 : tensor<?x4xf32> -> tensor<?x4xf32>
  %4 = graph.sqrt %3 : tensor<?x4xf32> -> tensor<?x4xf32>
  %5 = graph.rsqrt %4 : tensor<?x4xf32> -> tensor<?x4xf32>
  %6 = graph.tanh %5 : tensor<?x4xf32> -> tensor<?x4xf32>
  %7 = graph.sigmoid %6 : tensor<?x4xf32> -> tensor<?x4xf32>
  %8 = graph.relu %7 : tensor<?x4xf32> -> tensor<?x4xf32>
  %9 = graph.gelu %8 : tensor<?x4xf32> -> tensor<?x4xf32>
  %10 = graph.erf %9 : tensor<?x4xf32> -> tensor<?x4xf32>
  %11 = graph.clip %10 {min = 0.0 : f64, max = 6.0 : f64} : tensor<?x4xf32> -> tensor<?x4xf32>
  func.return %11 : tensor<?x4xf32>
}

// -----

// CHECK-LABEL: func.func @rounding_and_trig
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?x4xf32>) -> tensor<?x4xf32> {
// CHECK-NEXT: %[[V0:[A-Za-z0-9_$.-]+]] = graph.floor %[[X]] : tensor<?x4xf32> -> tensor<?x4xf32>
// CHECK-NEXT: %[[V1:[A-Za-z0-9_$.-]+]] = graph.ceil %[[V0]] : tensor<?x4xf32> -> tensor<?x4xf32>
// CHECK-NEXT: %[[V2:[A-Za-z0-9_$.-]+]] = graph.round %[[V1]] : tensor<?x4xf32> -> tensor<?x4xf32>
// CHECK-NEXT: %[[V3:[A-Za-z0-9_$.-]+]] = graph.sin %[[V2]] : tensor<?x4xf32> -> tensor<?x4xf32>
// CHECK-NEXT: %[[V4:[A-Za-z0-9_$.-]+]] = graph.cos %[[V3]] : tensor<?x4xf32> -> tensor<?x4xf32>
// CHECK-NEXT: func.return %[[V4]] : tensor<?x4xf32>
// CHECK-NEXT: }
func.func @rounding_and_trig(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = graph.floor %x : tensor<?x4xf32> -> tensor<?x4xf32>
  %1 = graph.ceil %0 : tensor<?x4xf32> -> tensor<?x4xf32>
  %2 = graph.round %1 : tensor<?x4xf32> -> tensor<?x4xf32>
  %3 = graph.sin %2 : tensor<?x4xf32> -> tensor<?x4xf32>
  %4 = graph.cos %3 : tensor<?x4xf32> -> tensor<?x4xf32>
  func.return %4 : tensor<?x4xf32>
}

// -----

// CHECK-LABEL: func.func @cast
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?xf32>) -> tensor<?xi32> {
// CHECK-NEXT: %[[Y:[A-Za-z0-9_$.-]+]] = graph.cast %[[X]] : tensor<?xf32> -> tensor<?xi32>
// CHECK-NEXT: func.return %[[Y]] : tensor<?xi32>
// CHECK-NEXT: }
func.func @cast(%x: tensor<?xf32>) -> tensor<?xi32> {
  %y = graph.cast %x : tensor<?xf32> -> tensor<?xi32>
  func.return %y : tensor<?xi32>
}

// -----

// CHECK-LABEL: func.func @matmul_dense
// CHECK-SAME: (%[[A:[A-Za-z0-9_$.-]+]]: tensor<?x?x64xf32>, %[[B:[A-Za-z0-9_$.-]+]]: tensor<64x32xf32>, %[[W:[A-Za-z0-9_$.-]+]]: tensor<16x32xf32>, %[[BIAS:[A-Za-z0-9_$.-]+]]: tensor<16xf32>) -> (tensor<?x?x16xf32>, tensor<?x?x16xf32>) {
// CHECK-NEXT: %[[M:[A-Za-z0-9_$.-]+]] = graph.matmul %[[A]], %[[B]] : (tensor<?x?x64xf32>, tensor<64x32xf32>) -> tensor<?x?x32xf32>
// CHECK-NEXT: %[[D:[A-Za-z0-9_$.-]+]] = graph.dense %[[M]], %[[W]], %[[BIAS]] : (tensor<?x?x32xf32>, tensor<16x32xf32>, tensor<16xf32>) -> tensor<?x?x16xf32>
// CHECK-NEXT: %[[E:[A-Za-z0-9_$.-]+]] = graph.dense %[[M]], %[[W]] : (tensor<?x?x32xf32>, tensor<16x32xf32>) -> tensor<?x?x16xf32>
// CHECK-NEXT: func.return %[[D]], %[[E]] : tensor<?x?x16xf32>, tensor<?x?x16xf32>
// CHECK-NEXT: }
func.func @matmul_dense(%a: tensor<?x?x64xf32>, %b: tensor<64x32xf32>, %w: tensor<16x32xf32>, %bias: tensor<16xf32>) -> (tensor<?x?x16xf32>, tensor<?x?x16xf32>) {
  %m = graph.matmul %a, %b : (tensor<?x?x64xf32>, tensor<64x32xf32>) -> tensor<?x?x32xf32>
  %d = graph.dense %m, %w, %bias : (tensor<?x?x32xf32>, tensor<16x32xf32>, tensor<16xf32>) -> tensor<?x?x16xf32>
  %e = graph.dense %m, %w : (tensor<?x?x32xf32>, tensor<16x32xf32>) -> tensor<?x?x16xf32>
  func.return %d, %e : tensor<?x?x16xf32>, tensor<?x?x16xf32>
}

// -----

// CHECK-LABEL: func.func @einsum
// CHECK-SAME: (%[[Q:[A-Za-z0-9_$.-]+]]: tensor<?x4x?x16xf32>, %[[K:[A-Za-z0-9_$.-]+]]: tensor<?x4x?x16xf32>, %[[M:[A-Za-z0-9_$.-]+]]: tensor<6x6xf32>) -> (tensor<?x4x?x?xf32>, tensor<6xf32>) {
// CHECK-NEXT: %[[S:[A-Za-z0-9_$.-]+]] = graph.einsum %[[Q]], %[[K]] {equation = "bhqd,bhkd->bhqk"} : (tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>) -> tensor<?x4x?x?xf32>
// CHECK-NEXT: %[[D:[A-Za-z0-9_$.-]+]] = graph.einsum %[[M]] {equation = "ii->i"} : (tensor<6x6xf32>) -> tensor<6xf32>
// CHECK-NEXT: func.return %[[S]], %[[D]] : tensor<?x4x?x?xf32>, tensor<6xf32>
// CHECK-NEXT: }
func.func @einsum(%q: tensor<?x4x?x16xf32>, %k: tensor<?x4x?x16xf32>, %m: tensor<6x6xf32>) -> (tensor<?x4x?x?xf32>, tensor<6xf32>) {
  %s = graph.einsum %q, %k {equation = "bhqd,bhkd->bhqk"} : (tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>) -> tensor<?x4x?x?xf32>
  %d = graph.einsum %m {equation = "ii->i"} : (tensor<6x6xf32>) -> tensor<6xf32>
  func.return %s, %d : tensor<?x4x?x?xf32>, tensor<6xf32>
}

// -----

// CHECK-LABEL: func.func @conv_pool
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?x3x?x?xf32>, %[[W:[A-Za-z0-9_$.-]+]]: tensor<8x3x3x3xf32>, %[[B:[A-Za-z0-9_$.-]+]]: tensor<8xf32>, %[[W2:[A-Za-z0-9_$.-]+]]: tensor<4x4x3x3xf32>) -> tensor<?x8x1x1xf32> {
// CHECK-NEXT: %[[C:[A-Za-z0-9_$.-]+]] = graph.conv2d %[[X]], %[[W]], %[[B]] {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<?x3x?x?xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>) -> tensor<?x8x?x?xf32>
// CHECK-NEXT: %[[G:[A-Za-z0-9_$.-]+]] = graph.conv2d %[[C]], %[[W2]] {groups = 2 : i64, dilations = array<i64: 2, 2>} : (tensor<?x8x?x?xf32>, tensor<4x4x3x3xf32>) -> tensor<?x4x?x?xf32>
// CHECK-NEXT: %[[M:[A-Za-z0-9_$.-]+]] = graph.max_pool2d %[[C]] {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : tensor<?x8x?x?xf32> -> tensor<?x8x?x?xf32>
// CHECK-NEXT: %[[A:[A-Za-z0-9_$.-]+]] = graph.avg_pool2d %[[M]] {kernel = array<i64: 2, 2>, count_include_pad = true} : tensor<?x8x?x?xf32> -> tensor<?x8x?x?xf32>
// CHECK-NEXT: %[[P:[A-Za-z0-9_$.-]+]] = graph.global_avg_pool2d %[[A]] : tensor<?x8x?x?xf32> -> tensor<?x8x1x1xf32>
// CHECK-NEXT: func.return %[[P]] : tensor<?x8x1x1xf32>
// CHECK-NEXT: }
func.func @conv_pool(%x: tensor<?x3x?x?xf32>, %w: tensor<8x3x3x3xf32>, %b: tensor<8xf32>, %w2: tensor<4x4x3x3xf32>) -> tensor<?x8x1x1xf32> {
  %c = graph.conv2d %x, %w, %b {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<?x3x?x?xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>) -> tensor<?x8x?x?xf32>
  %g = graph.conv2d %c, %w2 {groups = 2 : i64, dilations = array<i64: 2, 2>} : (tensor<?x8x?x?xf32>, tensor<4x4x3x3xf32>) -> tensor<?x4x?x?xf32>
  %m = graph.max_pool2d %c {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : tensor<?x8x?x?xf32> -> tensor<?x8x?x?xf32>
  %a = graph.avg_pool2d %m {kernel = array<i64: 2, 2>, count_include_pad = true} : tensor<?x8x?x?xf32> -> tensor<?x8x?x?xf32>
  %p = graph.global_avg_pool2d %a : tensor<?x8x?x?xf32> -> tensor<?x8x1x1xf32>
  func.return %p : tensor<?x8x1x1xf32>
}

// -----

// CHECK-LABEL: func.func @norms
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?x8x?x?xf32>, %[[S:[A-Za-z0-9_$.-]+]]: tensor<8xf32>, %[[Y:[A-Za-z0-9_$.-]+]]: tensor<?x?x768xf32>, %[[G:[A-Za-z0-9_$.-]+]]: tensor<768xf32>) -> (tensor<?x8x?x?xf32>, tensor<?x?x768xf32>) {
// CHECK-NEXT: %[[B:[A-Za-z0-9_$.-]+]] = graph.batch_norm %[[X]], %[[S]], %[[S]], %[[S]], %[[S]] {epsilon = 1.000000e-03 : f64} : (tensor<?x8x?x?xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x8x?x?xf32>
// CHECK-NEXT: %[[L:[A-Za-z0-9_$.-]+]] = graph.layer_norm %[[Y]], %[[G]], %[[G]] : (tensor<?x?x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<?x?x768xf32>
// CHECK-NEXT: %[[L2:[A-Za-z0-9_$.-]+]] = graph.layer_norm %[[L]], %[[G]] {axis = 2 : i64} : (tensor<?x?x768xf32>, tensor<768xf32>) -> tensor<?x?x768xf32>
// CHECK-NEXT: %[[P:[A-Za-z0-9_$.-]+]] = graph.softmax %[[L2]] {axis = 1 : i64} : tensor<?x?x768xf32> -> tensor<?x?x768xf32>
// CHECK-NEXT: func.return %[[B]], %[[P]] : tensor<?x8x?x?xf32>, tensor<?x?x768xf32>
// CHECK-NEXT: }
func.func @norms(%x: tensor<?x8x?x?xf32>, %s: tensor<8xf32>, %y: tensor<?x?x768xf32>, %g: tensor<768xf32>) -> (tensor<?x8x?x?xf32>, tensor<?x?x768xf32>) {
  %b = graph.batch_norm %x, %s, %s, %s, %s {epsilon = 1.0e-03 : f64} : (tensor<?x8x?x?xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x8x?x?xf32>
  %l = graph.layer_norm %y, %g, %g : (tensor<?x?x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<?x?x768xf32>
  %l2 = graph.layer_norm %l, %g {axis = 2 : i64} : (tensor<?x?x768xf32>, tensor<768xf32>) -> tensor<?x?x768xf32>
  %p = graph.softmax %l2 {axis = 1 : i64} : tensor<?x?x768xf32> -> tensor<?x?x768xf32>
  func.return %b, %p : tensor<?x8x?x?xf32>, tensor<?x?x768xf32>
}

// -----

// CHECK-LABEL: func.func @reductions
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?x?x4xf32>) -> (tensor<?x1x4xf32>, tensor<?xf32>, tensor<f32>, tensor<?x?xi64>, tensor<?x4xf32>, tensor<?x?xf32>) {
// CHECK-NEXT: %[[S:[A-Za-z0-9_$.-]+]] = graph.reduce_sum %[[X]] {axes = array<i64: 1>, keepdims = true} : tensor<?x?x4xf32> -> tensor<?x1x4xf32>
// CHECK-NEXT: %[[M:[A-Za-z0-9_$.-]+]] = graph.reduce_mean %[[X]] {axes = array<i64: 1, -1>} : tensor<?x?x4xf32> -> tensor<?xf32>
// CHECK-NEXT: %[[A:[A-Za-z0-9_$.-]+]] = graph.reduce_max %[[X]] : tensor<?x?x4xf32> -> tensor<f32>
// CHECK-NEXT: %[[I:[A-Za-z0-9_$.-]+]] = graph.argmax %[[X]] {axis = 2 : i64, select_last_index = true} : tensor<?x?x4xf32> -> tensor<?x?xi64>
// CHECK-NEXT: %[[N:[A-Za-z0-9_$.-]+]] = graph.reduce_min %[[X]] {axes = array<i64: 1>} : tensor<?x?x4xf32> -> tensor<?x4xf32>
// CHECK-NEXT: %[[P:[A-Za-z0-9_$.-]+]] = graph.reduce_prod %[[X]] {axes = array<i64: 2>} : tensor<?x?x4xf32> -> tensor<?x?xf32>
// CHECK-NEXT: func.return %[[S]], %[[M]], %[[A]], %[[I]], %[[N]], %[[P]] : tensor<?x1x4xf32>, tensor<?xf32>, tensor<f32>, tensor<?x?xi64>, tensor<?x4xf32>, tensor<?x?xf32>
// CHECK-NEXT: }
func.func @reductions(%x: tensor<?x?x4xf32>) -> (tensor<?x1x4xf32>, tensor<?xf32>, tensor<f32>, tensor<?x?xi64>, tensor<?x4xf32>, tensor<?x?xf32>) {
  %s = graph.reduce_sum %x {axes = array<i64: 1>, keepdims = true} : tensor<?x?x4xf32> -> tensor<?x1x4xf32>
  %m = graph.reduce_mean %x {axes = array<i64: 1, -1>} : tensor<?x?x4xf32> -> tensor<?xf32>
  %a = graph.reduce_max %x : tensor<?x?x4xf32> -> tensor<f32>
  %i = graph.argmax %x {axis = 2 : i64, select_last_index = true} : tensor<?x?x4xf32> -> tensor<?x?xi64>
  %n = graph.reduce_min %x {axes = array<i64: 1>} : tensor<?x?x4xf32> -> tensor<?x4xf32>
  %p = graph.reduce_prod %x {axes = array<i64: 2>} : tensor<?x?x4xf32> -> tensor<?x?xf32>
  func.return %s, %m, %a, %i, %n, %p : tensor<?x1x4xf32>, tensor<?xf32>, tensor<f32>, tensor<?x?xi64>, tensor<?x4xf32>, tensor<?x?xf32>
}

// -----

// CHECK-LABEL: func.func @layout
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?x8x8xf32>, %[[S:[A-Za-z0-9_$.-]+]]: !dynshape.shape<2>) -> (tensor<?x64xf32>, tensor<?x?xf32>, tensor<8x8x?xf32>) {
// CHECK-NEXT: %[[R:[A-Za-z0-9_$.-]+]] = graph.reshape %[[X]] [-1, 64] : tensor<?x8x8xf32> -> tensor<?x64xf32>
// CHECK-NEXT: %[[D:[A-Za-z0-9_$.-]+]] = graph.dynamic_reshape %[[X]], %[[S]] : (tensor<?x8x8xf32>, !dynshape.shape<2>) -> tensor<?x?xf32>
// CHECK-NEXT: %[[T:[A-Za-z0-9_$.-]+]] = graph.transpose %[[X]] [1, 2, 0] : tensor<?x8x8xf32> -> tensor<8x8x?xf32>
// CHECK-NEXT: func.return %[[R]], %[[D]], %[[T]] : tensor<?x64xf32>, tensor<?x?xf32>, tensor<8x8x?xf32>
// CHECK-NEXT: }
func.func @layout(%x: tensor<?x8x8xf32>, %s: !dynshape.shape<2>) -> (tensor<?x64xf32>, tensor<?x?xf32>, tensor<8x8x?xf32>) {
  %r = graph.reshape %x [-1, 64] : tensor<?x8x8xf32> -> tensor<?x64xf32>
  %d = graph.dynamic_reshape %x, %s : (tensor<?x8x8xf32>, !dynshape.shape<2>) -> tensor<?x?xf32>
  %t = graph.transpose %x [1, 2, 0] : tensor<?x8x8xf32> -> tensor<8x8x?xf32>
  func.return %r, %d, %t : tensor<?x64xf32>, tensor<?x?xf32>, tensor<8x8x?xf32>
}

// -----

// CHECK-LABEL: func.func @concat_split
// CHECK-SAME: (%[[A:[A-Za-z0-9_$.-]+]]: tensor<?x256xf32>, %[[B:[A-Za-z0-9_$.-]+]]: tensor<?x768xf32>) -> (tensor<?x256xf32>, tensor<?x768xf32>) {
// CHECK-NEXT: %[[C:[A-Za-z0-9_$.-]+]] = graph.concat %[[A]], %[[B]] {axis = 1 : i64} : (tensor<?x256xf32>, tensor<?x768xf32>) -> tensor<?x1024xf32>
// CHECK-NEXT: %[[I:[A-Za-z0-9_$.-]+]], %[[F:[A-Za-z0-9_$.-]+]], %[[O:[A-Za-z0-9_$.-]+]], %[[G:[A-Za-z0-9_$.-]+]] = graph.split %[[C]] {axis = 1 : i64, num = 4 : i64} : tensor<?x1024xf32> -> (tensor<?x256xf32>, tensor<?x256xf32>, tensor<?x256xf32>, tensor<?x256xf32>)
// CHECK-NEXT: %[[P:[A-Za-z0-9_$.-]+]], %[[Q:[A-Za-z0-9_$.-]+]] = graph.split %[[C]] {axis = -1 : i64, sizes = array<i64: 256, 768>} : tensor<?x1024xf32> -> (tensor<?x256xf32>, tensor<?x768xf32>)
// CHECK-NEXT: func.return %[[I]], %[[Q]] : tensor<?x256xf32>, tensor<?x768xf32>
// CHECK-NEXT: }
func.func @concat_split(%a: tensor<?x256xf32>, %b: tensor<?x768xf32>) -> (tensor<?x256xf32>, tensor<?x768xf32>) {
  %c = graph.concat %a, %b {axis = 1 : i64} : (tensor<?x256xf32>, tensor<?x768xf32>) -> tensor<?x1024xf32>
  %i, %f, %o, %g = graph.split %c {axis = 1 : i64, num = 4 : i64} : tensor<?x1024xf32> -> (tensor<?x256xf32>, tensor<?x256xf32>, tensor<?x256xf32>, tensor<?x256xf32>)
  %p, %q = graph.split %c {axis = -1 : i64, sizes = array<i64: 256, 768>} : tensor<?x1024xf32> -> (tensor<?x256xf32>, tensor<?x768xf32>)
  func.return %i, %q : tensor<?x256xf32>, tensor<?x768xf32>
}

// -----

// CHECK-LABEL: func.func @slice
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?x8x8xf32>, %[[N:[A-Za-z0-9_$.-]+]]: index) -> (tensor<?x5x4xf32>, tensor<?x8x8xf32>) {
// CHECK-NEXT: %[[A:[A-Za-z0-9_$.-]+]] = graph.slice %[[X]][:%[[N]], 2:-1, ::2] : tensor<?x8x8xf32> -> tensor<?x5x4xf32>
// CHECK-NEXT: %[[B:[A-Za-z0-9_$.-]+]] = graph.slice %[[X]][%[[N]]:, :, :] : tensor<?x8x8xf32> -> tensor<?x8x8xf32>
// CHECK-NEXT: func.return %[[A]], %[[B]] : tensor<?x5x4xf32>, tensor<?x8x8xf32>
// CHECK-NEXT: }
func.func @slice(%x: tensor<?x8x8xf32>, %n: index) -> (tensor<?x5x4xf32>, tensor<?x8x8xf32>) {
  %a = graph.slice %x[0:%n, 2:-1, ::2] : tensor<?x8x8xf32> -> tensor<?x5x4xf32>
  %b = graph.slice %x[%n:, :, :] : tensor<?x8x8xf32> -> tensor<?x8x8xf32>
  func.return %a, %b : tensor<?x5x4xf32>, tensor<?x8x8xf32>
}

// -----

// CHECK-LABEL: func.func @gather_broadcast_squeeze
// CHECK-SAME: (%[[T:[A-Za-z0-9_$.-]+]]: tensor<100x16xf32>, %[[IDS:[A-Za-z0-9_$.-]+]]: tensor<?xi64>, %[[X:[A-Za-z0-9_$.-]+]]: tensor<1x?xf32>, %[[S:[A-Za-z0-9_$.-]+]]: !dynshape.shape<2>) -> (tensor<?x16xf32>, tensor<?x?xf32>, tensor<?xf32>, tensor<1x?x16xf32>) {
// CHECK-NEXT: %[[G:[A-Za-z0-9_$.-]+]] = graph.gather %[[T]], %[[IDS]] : (tensor<100x16xf32>, tensor<?xi64>) -> tensor<?x16xf32>
// CHECK-NEXT: %[[B:[A-Za-z0-9_$.-]+]] = graph.broadcast_to %[[X]], %[[S]] : (tensor<1x?xf32>, !dynshape.shape<2>) -> tensor<?x?xf32>
// CHECK-NEXT: %[[Q:[A-Za-z0-9_$.-]+]] = graph.squeeze %[[X]] [0] : tensor<1x?xf32> -> tensor<?xf32>
// CHECK-NEXT: %[[U:[A-Za-z0-9_$.-]+]] = graph.unsqueeze %[[G]] [0] : tensor<?x16xf32> -> tensor<1x?x16xf32>
// CHECK-NEXT: func.return %[[G]], %[[B]], %[[Q]], %[[U]] : tensor<?x16xf32>, tensor<?x?xf32>, tensor<?xf32>, tensor<1x?x16xf32>
// CHECK-NEXT: }
func.func @gather_broadcast_squeeze(%t: tensor<100x16xf32>, %ids: tensor<?xi64>, %x: tensor<1x?xf32>, %s: !dynshape.shape<2>) -> (tensor<?x16xf32>, tensor<?x?xf32>, tensor<?xf32>, tensor<1x?x16xf32>) {
  %g = graph.gather %t, %ids {axis = 0 : i64} : (tensor<100x16xf32>, tensor<?xi64>) -> tensor<?x16xf32>
  %b = graph.broadcast_to %x, %s : (tensor<1x?xf32>, !dynshape.shape<2>) -> tensor<?x?xf32>
  %q = graph.squeeze %x [0] : tensor<1x?xf32> -> tensor<?xf32>
  %u = graph.unsqueeze %g [0] : tensor<?x16xf32> -> tensor<1x?x16xf32>
  func.return %g, %b, %q, %u : tensor<?x16xf32>, tensor<?x?xf32>, tensor<?xf32>, tensor<1x?x16xf32>
}

// -----

// CHECK-LABEL: func.func @gather_elements
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?x5xf32>, %[[IDX:[A-Za-z0-9_$.-]+]]: tensor<?x2xi64>) -> tensor<?x2xf32> {
// CHECK-NEXT: %[[Y:[A-Za-z0-9_$.-]+]] = graph.gather_elements %[[X]], %[[IDX]] {axis = 1 : i64} : (tensor<?x5xf32>, tensor<?x2xi64>) -> tensor<?x2xf32>
// CHECK-NEXT: func.return %[[Y]] : tensor<?x2xf32>
// CHECK-NEXT: }
func.func @gather_elements(%x: tensor<?x5xf32>, %idx: tensor<?x2xi64>) -> tensor<?x2xf32> {
  %y = graph.gather_elements %x, %idx {axis = 1 : i64} : (tensor<?x5xf32>, tensor<?x2xi64>) -> tensor<?x2xf32>
  func.return %y : tensor<?x2xf32>
}

// -----

// CHECK-LABEL: func.func @creation
// CHECK-SAME: (%[[S:[A-Za-z0-9_$.-]+]]: !dynshape.shape<2>, %[[N:[A-Za-z0-9_$.-]+]]: index) -> (tensor<2x2xf32>, tensor<4x4xf32>, tensor<?x?xf32>, tensor<?x?xi32>, tensor<?xi64>) {
// CHECK-NEXT: %[[C:[A-Za-z0-9_$.-]+]] = graph.constant dense<{{\[\[}}1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>
// CHECK-NEXT: %[[W:[A-Za-z0-9_$.-]+]] = graph.external_constant "layer.weight" from "weights.npz" : tensor<4x4xf32>
// CHECK-NEXT: %[[Z:[A-Za-z0-9_$.-]+]] = graph.zeros %[[S]] : !dynshape.shape<2> -> tensor<?x?xf32>
// CHECK-NEXT: %[[F:[A-Za-z0-9_$.-]+]] = graph.full %[[S]] {value = 7 : i32} : !dynshape.shape<2> -> tensor<?x?xi32>
// CHECK-NEXT: %[[C0:[A-Za-z0-9_$.-]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[C1:[A-Za-z0-9_$.-]+]] = arith.constant 1 : index
// CHECK-NEXT: %[[R:[A-Za-z0-9_$.-]+]] = graph.arange %[[C0]], %[[N]], %[[C1]] : tensor<?xi64>
// CHECK-NEXT: func.return %[[C]], %[[W]], %[[Z]], %[[F]], %[[R]] : tensor<2x2xf32>, tensor<4x4xf32>, tensor<?x?xf32>, tensor<?x?xi32>, tensor<?xi64>
// CHECK-NEXT: }
func.func @creation(%s: !dynshape.shape<2>, %n: index) -> (tensor<2x2xf32>, tensor<4x4xf32>, tensor<?x?xf32>, tensor<?x?xi32>, tensor<?xi64>) {
  %c = graph.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %w = graph.external_constant "layer.weight" from "weights.npz" : tensor<4x4xf32>
  %z = graph.zeros %s : !dynshape.shape<2> -> tensor<?x?xf32>
  %f = graph.full %s {value = 7 : i32} : !dynshape.shape<2> -> tensor<?x?xi32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = graph.arange %c0, %n, %c1 : tensor<?xi64>
  func.return %c, %w, %z, %f, %r : tensor<2x2xf32>, tensor<4x4xf32>, tensor<?x?xf32>, tensor<?x?xi32>, tensor<?xi64>
}

// -----

// CHECK-LABEL: func.func @vision
// CHECK-SAME: (%[[BOXES:[A-Za-z0-9_$.-]+]]: tensor<?x4xf32>, %[[SCORES:[A-Za-z0-9_$.-]+]]: tensor<?xf32>, %[[FEAT:[A-Za-z0-9_$.-]+]]: tensor<1x16x?x?xf32>, %[[IDX:[A-Za-z0-9_$.-]+]]: tensor<?xi64>) -> (tensor<?xi64>, tensor<?x16x7x7xf32>) {
// CHECK-NEXT: %[[KEEP:[A-Za-z0-9_$.-]+]] = graph.nms %[[BOXES]], %[[SCORES]] {iou_threshold = 5.000000e-01 : f64, score_threshold = 5.000000e-02 : f64, max_output = 100 : i64} : (tensor<?x4xf32>, tensor<?xf32>) -> tensor<?xi64>
// CHECK-NEXT: %[[R:[A-Za-z0-9_$.-]+]] = graph.roi_align %[[FEAT]], %[[BOXES]], %[[IDX]] {output_height = 7 : i64, output_width = 7 : i64, spatial_scale = 6.250000e-02 : f64, sampling_ratio = 2 : i64} : (tensor<1x16x?x?xf32>, tensor<?x4xf32>, tensor<?xi64>) -> tensor<?x16x7x7xf32>
// CHECK-NEXT: func.return %[[KEEP]], %[[R]] : tensor<?xi64>, tensor<?x16x7x7xf32>
// CHECK-NEXT: }
func.func @vision(%boxes: tensor<?x4xf32>, %scores: tensor<?xf32>, %feat: tensor<1x16x?x?xf32>, %idx: tensor<?xi64>) -> (tensor<?xi64>, tensor<?x16x7x7xf32>) {
  %keep = graph.nms %boxes, %scores {iou_threshold = 5.0e-01 : f64, score_threshold = 5.0e-02 : f64, max_output = 100 : i64} : (tensor<?x4xf32>, tensor<?xf32>) -> tensor<?xi64>
  %r = graph.roi_align %feat, %boxes, %idx {output_height = 7 : i64, output_width = 7 : i64, spatial_scale = 6.250000e-02 : f64, sampling_ratio = 2 : i64} : (tensor<1x16x?x?xf32>, tensor<?x4xf32>, tensor<?xi64>) -> tensor<?x16x7x7xf32>
  func.return %keep, %r : tensor<?xi64>, tensor<?x16x7x7xf32>
}

// -----

// CHECK-LABEL: func.func @if_else
// CHECK-SAME: (%[[C:[A-Za-z0-9_$.-]+]]: tensor<i1>, %[[A:[A-Za-z0-9_$.-]+]]: tensor<?xf32>, %[[B:[A-Za-z0-9_$.-]+]]: tensor<?xf32>) -> tensor<?xf32> {
// CHECK-NEXT: %[[R:[A-Za-z0-9_$.-]+]] = graph.if %[[C]] : tensor<i1> -> (tensor<?xf32>) {
// CHECK-NEXT: graph.yield %[[A]] : tensor<?xf32>
// CHECK-NEXT: } else {
// CHECK-NEXT: %[[N:[A-Za-z0-9_$.-]+]] = graph.neg %[[B]] : tensor<?xf32> -> tensor<?xf32>
// CHECK-NEXT: graph.yield %[[N]] : tensor<?xf32>
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[R]] : tensor<?xf32>
// CHECK-NEXT: }
func.func @if_else(%c: tensor<i1>, %a: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<?xf32> {
  %r = graph.if %c : tensor<i1> -> (tensor<?xf32>) {
    graph.yield %a : tensor<?xf32>
  } else {
    %n = graph.neg %b : tensor<?xf32> -> tensor<?xf32>
    graph.yield %n : tensor<?xf32>
  }
  func.return %r : tensor<?xf32>
}

// -----

// CHECK-LABEL: func.func @while_loop
// CHECK-SAME: (%[[N:[A-Za-z0-9_$.-]+]]: tensor<i64>, %[[H:[A-Za-z0-9_$.-]+]]: tensor<1x4xf32>) -> tensor<1x?xf32> {
// CHECK-NEXT: %[[ZERO:[A-Za-z0-9_$.-]+]] = graph.constant dense<0> : tensor<i64>
// CHECK-NEXT: %[[ONE:[A-Za-z0-9_$.-]+]] = graph.constant dense<1> : tensor<i64>
// CHECK-NEXT: %[[I:[A-Za-z0-9_$.-]+]], %[[R:[A-Za-z0-9_$.-]+]] = graph.while (%[[I0:[A-Za-z0-9_$.-]+]] = %[[ZERO]], %[[H0:[A-Za-z0-9_$.-]+]] = %[[H]]) : (tensor<i64>, tensor<1x4xf32>) -> (tensor<i64>, tensor<1x?xf32>) {
// CHECK-NEXT: %[[C:[A-Za-z0-9_$.-]+]] = graph.less %[[I0]], %[[N]] : (tensor<i64>, tensor<i64>) -> tensor<i1>
// CHECK-NEXT: graph.condition %[[C]] : tensor<i1>
// CHECK-NEXT: } do {
// CHECK-NEXT: ^bb0(%[[I1:[A-Za-z0-9_$.-]+]]: tensor<i64>, %[[H1:[A-Za-z0-9_$.-]+]]: tensor<1x?xf32>):
// CHECK-NEXT: %[[I2:[A-Za-z0-9_$.-]+]] = graph.add %[[I1]], %[[ONE]] : (tensor<i64>, tensor<i64>) -> tensor<i64>
// CHECK-NEXT: %[[H2:[A-Za-z0-9_$.-]+]] = graph.concat %[[H1]], %[[H1]] {axis = 1 : i64} : (tensor<1x?xf32>, tensor<1x?xf32>) -> tensor<1x?xf32>
// CHECK-NEXT: graph.yield %[[I2]], %[[H2]] : tensor<i64>, tensor<1x?xf32>
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[R]] : tensor<1x?xf32>
// CHECK-NEXT: }
func.func @while_loop(%n: tensor<i64>, %h: tensor<1x4xf32>) -> tensor<1x?xf32> {
  %zero = graph.constant dense<0> : tensor<i64>
  %one = graph.constant dense<1> : tensor<i64>
  %i, %r = graph.while (%i0 = %zero, %h0 = %h) : (tensor<i64>, tensor<1x4xf32>) -> (tensor<i64>, tensor<1x?xf32>) {
    %c = graph.less %i0, %n : (tensor<i64>, tensor<i64>) -> tensor<i1>
    graph.condition %c : tensor<i1>
  } do {
  ^bb0(%i1: tensor<i64>, %h1: tensor<1x?xf32>):
    %i2 = graph.add %i1, %one : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %h2 = graph.concat %h1, %h1 {axis = 1 : i64} : (tensor<1x?xf32>, tensor<1x?xf32>) -> tensor<1x?xf32>
    graph.yield %i2, %h2 : tensor<i64>, tensor<1x?xf32>
  }
  func.return %r : tensor<1x?xf32>
}

// -----

// CHECK-LABEL: func.func @tuples
// CHECK-SAME: (%[[A:[A-Za-z0-9_$.-]+]]: tensor<?xf32>, %[[B:[A-Za-z0-9_$.-]+]]: tensor<2xi64>) -> tensor<2xi64> {
// CHECK-NEXT: %[[T:[A-Za-z0-9_$.-]+]] = graph.make_tuple %[[A]], %[[B]] : (tensor<?xf32>, tensor<2xi64>) -> tuple<tensor<?xf32>, tensor<2xi64>>
// CHECK-NEXT: %[[X:[A-Za-z0-9_$.-]+]] = graph.get_item %[[T]], 1 : tuple<tensor<?xf32>, tensor<2xi64>> -> tensor<2xi64>
// CHECK-NEXT: func.return %[[X]] : tensor<2xi64>
// CHECK-NEXT: }
func.func @tuples(%a: tensor<?xf32>, %b: tensor<2xi64>) -> tensor<2xi64> {
  %t = graph.make_tuple %a, %b : (tensor<?xf32>, tensor<2xi64>) -> tuple<tensor<?xf32>, tensor<2xi64>>
  %x = graph.get_item %t, 1 : tuple<tensor<?xf32>, tensor<2xi64>> -> tensor<2xi64>
  func.return %x : tensor<2xi64>
}

// -----

// CHECK: graph.adt @Tree {
// CHECK-NEXT: graph.constructor @Leaf(tensor<1x4xf32>)
// CHECK-NEXT: graph.constructor @Node(!graph.adt<@Tree>, !graph.adt<@Tree>)
// CHECK-NEXT: }
// CHECK-LABEL: func.func @adt
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<1x4xf32>) -> tensor<1x4xf32> {
// CHECK-NEXT: %[[L:[A-Za-z0-9_$.-]+]] = graph.construct @Leaf(%[[X]]) : (tensor<1x4xf32>) -> !graph.adt<@Tree>
// CHECK-NEXT: %[[T:[A-Za-z0-9_$.-]+]] = graph.construct @Node(%[[L]], %[[L]]) : (!graph.adt<@Tree>, !graph.adt<@Tree>) -> !graph.adt<@Tree>
// CHECK-NEXT: %[[R:[A-Za-z0-9_$.-]+]] = func.call @sum(%[[T]]) : (!graph.adt<@Tree>) -> tensor<1x4xf32>
// CHECK-NEXT: func.return %[[R]] : tensor<1x4xf32>
// CHECK-NEXT: }
// CHECK-LABEL: func.func @sum
// CHECK-SAME: (%[[T:[A-Za-z0-9_$.-]+]]: !graph.adt<@Tree>) -> tensor<1x4xf32> {
// CHECK-NEXT: %[[R:[A-Za-z0-9_$.-]+]] = graph.match %[[T]] : !graph.adt<@Tree> -> (tensor<1x4xf32>)
// CHECK-NEXT: case @Leaf(%[[V:[A-Za-z0-9_$.-]+]]: tensor<1x4xf32>) {
// CHECK-NEXT: graph.yield %[[V]] : tensor<1x4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: case @Node(%[[A:[A-Za-z0-9_$.-]+]]: !graph.adt<@Tree>, %[[B:[A-Za-z0-9_$.-]+]]: !graph.adt<@Tree>) {
// CHECK-NEXT: %[[X:[A-Za-z0-9_$.-]+]] = func.call @sum(%[[A]]) : (!graph.adt<@Tree>) -> tensor<1x4xf32>
// CHECK-NEXT: %[[Y:[A-Za-z0-9_$.-]+]] = func.call @sum(%[[B]]) : (!graph.adt<@Tree>) -> tensor<1x4xf32>
// CHECK-NEXT: %[[S:[A-Za-z0-9_$.-]+]] = graph.add %[[X]], %[[Y]] : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
// CHECK-NEXT: graph.yield %[[S]] : tensor<1x4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[R]] : tensor<1x4xf32>
// CHECK-NEXT: }
graph.adt @Tree {
  graph.constructor @Leaf(tensor<1x4xf32>)
  graph.constructor @Node(!graph.adt<@Tree>, !graph.adt<@Tree>)
}
func.func @adt(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %l = graph.construct @Leaf(%x) : (tensor<1x4xf32>) -> !graph.adt<@Tree>
  %t = graph.construct @Node(%l, %l) : (!graph.adt<@Tree>, !graph.adt<@Tree>) -> !graph.adt<@Tree>
  %r = func.call @sum(%t) : (!graph.adt<@Tree>) -> tensor<1x4xf32>
  func.return %r : tensor<1x4xf32>
}
func.func @sum(%t: !graph.adt<@Tree>) -> tensor<1x4xf32> {
  %r = graph.match %t : !graph.adt<@Tree> -> (tensor<1x4xf32>)
    case @Leaf(%v: tensor<1x4xf32>) {
      graph.yield %v : tensor<1x4xf32>
    }
    case @Node(%a: !graph.adt<@Tree>, %b: !graph.adt<@Tree>) {
      %x = func.call @sum(%a) : (!graph.adt<@Tree>) -> tensor<1x4xf32>
      %y = func.call @sum(%b) : (!graph.adt<@Tree>) -> tensor<1x4xf32>
      %s = graph.add %x, %y : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
      graph.yield %s : tensor<1x4xf32>
    }
  func.return %r : tensor<1x4xf32>
}

// -----

// CHECK-LABEL: func.func @fused
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?x8xf32>, %[[W:[A-Za-z0-9_$.-]+]]: tensor<4x8xf32>) -> tensor<?x4xf32> {
// CHECK-NEXT: %[[Y:[A-Za-z0-9_$.-]+]] = graph.fused (%[[A:[A-Za-z0-9_$.-]+]] = %[[X]], %[[B:[A-Za-z0-9_$.-]+]] = %[[W]]) : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<?x4xf32> {
// CHECK-NEXT: %[[D:[A-Za-z0-9_$.-]+]] = graph.dense %[[A]], %[[B]] : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<?x4xf32>
// CHECK-NEXT: %[[R:[A-Za-z0-9_$.-]+]] = graph.relu %[[D]] : tensor<?x4xf32> -> tensor<?x4xf32>
// CHECK-NEXT: graph.yield %[[R]] : tensor<?x4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[Y]] : tensor<?x4xf32>
// CHECK-NEXT: }
func.func @fused(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>) -> tensor<?x4xf32> {
  %y = graph.fused (%a = %x, %b = %w) : (tensor<?x8xf32>, tensor<4x8xf32>) -> (tensor<?x4xf32>) {
    %d = graph.dense %a, %b : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<?x4xf32>
    %r = graph.relu %d : tensor<?x4xf32> -> tensor<?x4xf32>
    graph.yield %r : tensor<?x4xf32>
  }
  func.return %y : tensor<?x4xf32>
}

// -----

// CHECK-LABEL: func.func @running_sums
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<3x?xf32>, %[[I:[A-Za-z0-9_$.-]+]]: tensor<?x2xi64>) -> (tensor<3x?xf32>, tensor<3x?xf32>, tensor<?x2xi64>) {
// CHECK-NEXT: %[[A:[A-Za-z0-9_$.-]+]] = graph.cumsum %[[X]] {axis = 1 : i64} : tensor<3x?xf32> -> tensor<3x?xf32>
// CHECK-NEXT: %[[B:[A-Za-z0-9_$.-]+]] = graph.cumsum %[[X]] {axis = -1 : i64, exclusive = true, reverse = true} : tensor<3x?xf32> -> tensor<3x?xf32>
// CHECK-NEXT: %[[C:[A-Za-z0-9_$.-]+]] = graph.cumsum %[[I]] : tensor<?x2xi64> -> tensor<?x2xi64>
// CHECK-NEXT: func.return %[[A]], %[[B]], %[[C]] : tensor<3x?xf32>, tensor<3x?xf32>, tensor<?x2xi64>
// CHECK-NEXT: }
func.func @running_sums(%x: tensor<3x?xf32>, %i: tensor<?x2xi64>) -> (tensor<3x?xf32>, tensor<3x?xf32>, tensor<?x2xi64>) {
  %a = graph.cumsum %x {axis = 1 : i64} : tensor<3x?xf32> -> tensor<3x?xf32>
  %b = graph.cumsum %x {axis = -1 : i64, exclusive = true, reverse = true} : tensor<3x?xf32> -> tensor<3x?xf32>
  %c = graph.cumsum %i : tensor<?x2xi64> -> tensor<?x2xi64>
  func.return %a, %b, %c : tensor<3x?xf32>, tensor<3x?xf32>, tensor<?x2xi64>
}

// -----

// CHECK-LABEL: func.func @running_products
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?xf32>) -> tensor<?xf32> {
// CHECK-NEXT: %[[P:[A-Za-z0-9_$.-]+]] = graph.cumprod %[[X]] {exclusive = true} : tensor<?xf32> -> tensor<?xf32>
// CHECK-NEXT: func.return %[[P]] : tensor<?xf32>
// CHECK-NEXT: }
func.func @running_products(%x: tensor<?xf32>) -> tensor<?xf32> {
  %p = graph.cumprod %x {exclusive = true} : tensor<?xf32> -> tensor<?xf32>
  func.return %p : tensor<?xf32>
}

// -----

// CHECK-LABEL: func.func @float_classes
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?x4xf32>) -> (tensor<?x4xi1>, tensor<?x4xi1>, tensor<?x4xi1>) {
// CHECK-NEXT: %[[N:[A-Za-z0-9_$.-]+]] = graph.is_nan %[[X]] : tensor<?x4xf32> -> tensor<?x4xi1>
// CHECK-NEXT: %[[I:[A-Za-z0-9_$.-]+]] = graph.is_inf %[[X]] : tensor<?x4xf32> -> tensor<?x4xi1>
// CHECK-NEXT: %[[P:[A-Za-z0-9_$.-]+]] = graph.is_inf %[[X]] {detect_negative = false} : tensor<?x4xf32> -> tensor<?x4xi1>
// CHECK-NEXT: func.return %[[N]], %[[I]], %[[P]] : tensor<?x4xi1>, tensor<?x4xi1>, tensor<?x4xi1>
// CHECK-NEXT: }
func.func @float_classes(%x: tensor<?x4xf32>) -> (tensor<?x4xi1>, tensor<?x4xi1>, tensor<?x4xi1>) {
  %n = graph.is_nan %x : tensor<?x4xf32> -> tensor<?x4xi1>
  %i = graph.is_inf %x : tensor<?x4xf32> -> tensor<?x4xi1>
  %p = graph.is_inf %x {detect_negative = false} : tensor<?x4xf32> -> tensor<?x4xi1>
  func.return %n, %i, %p : tensor<?x4xi1>, tensor<?x4xi1>, tensor<?x4xi1>
}

// -----

// CHECK-LABEL: func.func @dims_as_data
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?x?xf32>) -> tensor<2xi64> {
// CHECK-NEXT: %[[N:[A-Za-z0-9_$.-]+]] = dynshape.dim %[[X]], 0 : tensor<?x?xf32>
// CHECK-NEXT: %[[M:[A-Za-z0-9_$.-]+]] = dynshape.dim %[[X]], 1 : tensor<?x?xf32>
// CHECK-NEXT: %[[T:[A-Za-z0-9_$.-]+]] = graph.from_elements %[[N]], %[[M]] : tensor<2xi64>
// CHECK-NEXT: func.return %[[T]] : tensor<2xi64>
// CHECK-NEXT: }
func.func @dims_as_data(%x: tensor<?x?xf32>) -> tensor<2xi64> {
  %n = dynshape.dim %x, 0 : tensor<?x?xf32>
  %m = dynshape.dim %x, 1 : tensor<?x?xf32>
  %t = graph.from_elements %n, %m : tensor<2xi64>
  func.return %t : tensor<2xi64>
}

// -----

// CHECK-LABEL: func.func @trigonometric
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?x4xf32>) -> tensor<?x4xf32> {
// CHECK-NEXT: %[[V0:[A-Za-z0-9_$.-]+]] = graph.tan %[[X]] : tensor<?x4xf32> -> tensor<?x4xf32>
// CHECK-NEXT: %[[V1:[A-Za-z0-9_$.-]+]] = graph.asin %[[V0]] : tensor<?x4xf32> -> tensor<?x4xf32>
// CHECK-NEXT: %[[V2:[A-Za-z0-9_$.-]+]] = graph.acos %[[V1]] : tensor<?x4xf32> -> tensor<?x4xf32>
// CHECK-NEXT: %[[V3:[A-Za-z0-9_$.-]+]] = graph.atan %[[V2]] : tensor<?x4xf32> -> tensor<?x4xf32>
// CHECK-NEXT: %[[V4:[A-Za-z0-9_$.-]+]] = graph.sinh %[[V3]] : tensor<?x4xf32> -> tensor<?x4xf32>
// CHECK-NEXT: %[[V5:[A-Za-z0-9_$.-]+]] = graph.cosh %[[V4]] : tensor<?x4xf32> -> tensor<?x4xf32>
// CHECK-NEXT: %[[V6:[A-Za-z0-9_$.-]+]] = graph.asinh %[[V5]] : tensor<?x4xf32> -> tensor<?x4xf32>
// CHECK-NEXT: %[[V7:[A-Za-z0-9_$.-]+]] = graph.acosh %[[V6]] : tensor<?x4xf32> -> tensor<?x4xf32>
// CHECK-NEXT: %[[V8:[A-Za-z0-9_$.-]+]] = graph.atanh %[[V7]] : tensor<?x4xf32> -> tensor<?x4xf32>
// CHECK-NEXT: func.return %[[V8]] : tensor<?x4xf32>
func.func @trigonometric(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = graph.tan %x : tensor<?x4xf32> -> tensor<?x4xf32>
  %1 = graph.asin %0 : tensor<?x4xf32> -> tensor<?x4xf32>
  %2 = graph.acos %1 : tensor<?x4xf32> -> tensor<?x4xf32>
  %3 = graph.atan %2 : tensor<?x4xf32> -> tensor<?x4xf32>
  %4 = graph.sinh %3 : tensor<?x4xf32> -> tensor<?x4xf32>
  %5 = graph.cosh %4 : tensor<?x4xf32> -> tensor<?x4xf32>
  %6 = graph.asinh %5 : tensor<?x4xf32> -> tensor<?x4xf32>
  %7 = graph.acosh %6 : tensor<?x4xf32> -> tensor<?x4xf32>
  %8 = graph.atanh %7 : tensor<?x4xf32> -> tensor<?x4xf32>
  func.return %8 : tensor<?x4xf32>
}

// -----

// Scatters: along an axis, and by index rows (the default reduction is not printed);
// gather_nd (batch_dims 0, the default, not printed either); one_hot.
// CHECK-LABEL: func.func @scatters
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?x5xf32>, %[[I:[A-Za-z0-9_$.-]+]]: tensor<?x2xi64>, %[[U:[A-Za-z0-9_$.-]+]]: tensor<?x2xf32>, %[[R:[A-Za-z0-9_$.-]+]]: tensor<?x1xi64>, %[[V:[A-Za-z0-9_$.-]+]]: tensor<?x5xf32>, %[[W:[A-Za-z0-9_$.-]+]]: tensor<2xf32>) -> (tensor<?x5xf32>, tensor<?x5xf32>, tensor<4x?x1xf32>) {
// CHECK-NEXT: %[[A:[A-Za-z0-9_$.-]+]] = graph.scatter_elements %[[X]], %[[I]], %[[U]] {axis = 1 : i64, reduction = "add"} : (tensor<?x5xf32>, tensor<?x2xi64>, tensor<?x2xf32>) -> tensor<?x5xf32>
// CHECK-NEXT: %[[B:[A-Za-z0-9_$.-]+]] = graph.scatter_nd %[[A]], %[[R]], %[[V]] : (tensor<?x5xf32>, tensor<?x1xi64>, tensor<?x5xf32>) -> tensor<?x5xf32>
// CHECK-NEXT: %[[G:[A-Za-z0-9_$.-]+]] = graph.gather_nd %[[B]], %[[R]] : (tensor<?x5xf32>, tensor<?x1xi64>) -> tensor<?x5xf32>
// CHECK-NEXT: %[[H:[A-Za-z0-9_$.-]+]] = graph.one_hot %[[R]], %[[W]] {depth = 4 : i64, axis = 0 : i64} : (tensor<?x1xi64>, tensor<2xf32>) -> tensor<4x?x1xf32>
// CHECK-NEXT: func.return %[[A]], %[[G]], %[[H]] : tensor<?x5xf32>, tensor<?x5xf32>, tensor<4x?x1xf32>
// CHECK-NEXT: }
func.func @scatters(%x: tensor<?x5xf32>, %i: tensor<?x2xi64>, %u: tensor<?x2xf32>, %r: tensor<?x1xi64>, %v: tensor<?x5xf32>, %w: tensor<2xf32>) -> (tensor<?x5xf32>, tensor<?x5xf32>, tensor<4x?x1xf32>) {
  %a = graph.scatter_elements %x, %i, %u {axis = 1 : i64, reduction = "add"} : (tensor<?x5xf32>, tensor<?x2xi64>, tensor<?x2xf32>) -> tensor<?x5xf32>
  %b = graph.scatter_nd %a, %r, %v {reduction = "none"} : (tensor<?x5xf32>, tensor<?x1xi64>, tensor<?x5xf32>) -> tensor<?x5xf32>
  %g = graph.gather_nd %b, %r {batch_dims = 0 : i64} : (tensor<?x5xf32>, tensor<?x1xi64>) -> tensor<?x5xf32>
  %h = graph.one_hot %r, %w {depth = 4 : i64, axis = 0 : i64} : (tensor<?x1xi64>, tensor<2xf32>) -> tensor<4x?x1xf32>
  func.return %a, %g, %h : tensor<?x5xf32>, tensor<?x5xf32>, tensor<4x?x1xf32>
}
