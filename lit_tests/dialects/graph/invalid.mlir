// RUN: nimble-opt %s --split-input-file --verify-diagnostics

func.func @broadcast_mismatch(%a: tensor<3x4xf32>, %b: tensor<5xf32>) {
  // expected-error @+1 {{'graph.add' op dim 1 cannot be broadcast (4 vs 5)}}
  %c = graph.add %a, %b : (tensor<3x4xf32>, tensor<5xf32>) -> tensor<3x4xf32>
  func.return
}

// -----

func.func @element_types_differ(%a: tensor<4xf32>, %b: tensor<4xi32>) {
  // expected-error @+1 {{'graph.mul' op operand element types differ}}
  %c = graph.mul %a, %b : (tensor<4xf32>, tensor<4xi32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @wrong_result_type(%a: tensor<3x4xf32>) {
  // expected-error @+1 {{'graph.exp' op result #0 has type tensor<3x5xf32>, incompatible with the inferred type tensor<3x4xf32>}}
  %c = graph.exp %a : tensor<3x4xf32> -> tensor<3x5xf32>
  func.return
}

// -----

func.func @float_only(%a: tensor<4xi32>) {
  // expected-error @+1 {{'graph.tanh' op operand must be a float tensor}}
  %c = graph.tanh %a : tensor<4xi32> -> tensor<4xi32>
  func.return
}

// -----

func.func @logic_needs_i1(%a: tensor<4xf32>) {
  // expected-error @+1 {{'graph.and' op operands must be i1 tensors}}
  %c = graph.and %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @where_condition(%c: tensor<4xf32>, %a: tensor<4xf32>) {
  // expected-error @+1 {{'graph.where' op condition must be an i1 tensor}}
  %r = graph.where %c, %a, %a : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @clip_bounds(%a: tensor<4xf32>) {
  // expected-error @+1 {{'graph.clip' op min must not exceed max}}
  %r = graph.clip %a {min = 2.0 : f64, max = 1.0 : f64} : tensor<4xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @matmul_contracting(%a: tensor<?x3xf32>, %b: tensor<4x5xf32>) {
  // expected-error @+1 {{'graph.matmul' op contracting dims differ (3 vs 4)}}
  %c = graph.matmul %a, %b : (tensor<?x3xf32>, tensor<4x5xf32>) -> tensor<?x5xf32>
  func.return
}

// -----

func.func @dense_weight_rank(%x: tensor<?x3xf32>, %w: tensor<3xf32>) {
  // expected-error @+1 {{'graph.dense' op weight must have rank 2, not 1}}
  %c = graph.dense %x, %w : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  func.return
}

// -----

func.func @dense_bias(%x: tensor<?x3xf32>, %w: tensor<4x3xf32>, %b: tensor<5xf32>) {
  // expected-error @+1 {{'graph.dense' op bias size and weight dim 0 differ (5 vs 4)}}
  %c = graph.dense %x, %w, %b : (tensor<?x3xf32>, tensor<4x3xf32>, tensor<5xf32>) -> tensor<?x4xf32>
  func.return
}

// -----

func.func @conv_channels(%x: tensor<1x3x8x8xf32>, %w: tensor<4x2x3x3xf32>) {
  // expected-error @+1 {{'graph.conv2d' op input channels differ from weight dim 1 * groups (3 vs 2)}}
  %c = graph.conv2d %x, %w : (tensor<1x3x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return
}

// -----

func.func @conv_window_too_big(%x: tensor<1x3x2x2xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'graph.conv2d' op the window does not fit in the padded input}}
  %c = graph.conv2d %x, %w : (tensor<1x3x2x2xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x1x1xf32>
  func.return
}

// -----

func.func @pool_kernel(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{'graph.max_pool2d' op kernel must have 2 values, not 3}}
  %c = graph.max_pool2d %x {kernel = array<i64: 2, 2, 2>} : tensor<1x3x8x8xf32> -> tensor<1x3x7x7xf32>
  func.return
}

// -----

func.func @batch_norm_channels(%x: tensor<1x3x8x8xf32>, %s: tensor<4xf32>) {
  // expected-error @+1 {{'graph.batch_norm' op scale size differs from the channel dim (4 vs 3)}}
  %c = graph.batch_norm %x, %s, %s, %s, %s : (tensor<1x3x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x3x8x8xf32>
  func.return
}

// -----

func.func @softmax_axis(%x: tensor<?x4xf32>) {
  // expected-error @+1 {{'graph.softmax' op axis 2 is out of range for rank 2}}
  %c = graph.softmax %x {axis = 2 : i64} : tensor<?x4xf32> -> tensor<?x4xf32>
  func.return
}

// -----

func.func @reduce_repeated_axes(%x: tensor<?x4xf32>) {
  // expected-error @+1 {{'graph.reduce_sum' op axes [1, -1] repeat an axis}}
  %c = graph.reduce_sum %x {axes = array<i64: 1, -1>} : tensor<?x4xf32> -> tensor<?xf32>
  func.return
}

// -----

func.func @reshape_count(%x: tensor<2x6xf32>) {
  // expected-error @+1 {{'graph.reshape' op reshape changes the number of elements (10 vs 12)}}
  %c = graph.reshape %x [5, 2] : tensor<2x6xf32> -> tensor<5x2xf32>
  func.return
}

// -----

func.func @reshape_two_holes(%x: tensor<?x6xf32>) {
  // expected-error @+1 {{'graph.reshape' op at most one target dim may be -1}}
  %c = graph.reshape %x [-1, -1] : tensor<?x6xf32> -> tensor<?x?xf32>
  func.return
}

// -----

func.func @transpose_perm(%x: tensor<?x6xf32>) {
  // expected-error @+1 {{'graph.transpose' op perm [0, 0] is not a permutation of the 2 dims}}
  %c = graph.transpose %x [0, 0] : tensor<?x6xf32> -> tensor<?x?xf32>
  func.return
}

// -----

func.func @concat_dims(%a: tensor<?x4xf32>, %b: tensor<?x5xf32>) {
  // expected-error @+1 {{'graph.concat' op inputs differ in dim 1 (4 vs 5)}}
  %c = graph.concat %a, %b {axis = 0 : i64} : (tensor<?x4xf32>, tensor<?x5xf32>) -> tensor<?x4xf32>
  func.return
}

// -----

func.func @split_sizes_and_num(%x: tensor<?x8xf32>) {
  // expected-error @+1 {{'graph.split' op exactly one of 'sizes' and 'num' must be given}}
  %a, %b = graph.split %x {axis = 1 : i64} : tensor<?x8xf32> -> (tensor<?x4xf32>, tensor<?x4xf32>)
  func.return
}

// -----

func.func @split_not_divisible(%x: tensor<?x9xf32>) {
  // expected-error @+1 {{'graph.split' op split dim is not divisible by 2}}
  %a, %b = graph.split %x {axis = 1 : i64, num = 2 : i64} : tensor<?x9xf32> -> (tensor<?x4xf32>, tensor<?x4xf32>)
  func.return
}

// -----

func.func @slice_step(%x: tensor<?x8xf32>) {
  // expected-error @+1 {{'graph.slice' op steps must be >= 1, got [1, 0]}}
  %a = graph.slice %x[:, ::0] : tensor<?x8xf32> -> tensor<?x8xf32>
  func.return
}

// -----

func.func @slice_rank(%x: tensor<?x8xf32>) {
  // expected-error @+1 {{'graph.slice' op needs one start:end:step entry per dim (2)}}
  %a = graph.slice %x[1:2] : tensor<?x8xf32> -> tensor<1x8xf32>
  func.return
}

// -----

func.func @gather_float_indices(%x: tensor<4x8xf32>, %i: tensor<2xf32>) {
  // expected-error @+1 {{'graph.gather' op indices must be integers}}
  %a = graph.gather %x, %i : (tensor<4x8xf32>, tensor<2xf32>) -> tensor<2x8xf32>
  func.return
}

// -----

func.func @squeeze_non_one(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{'graph.squeeze' op squeezed dim 0 must be 1 (2 vs 1)}}
  %a = graph.squeeze %x [0] : tensor<2x8xf32> -> tensor<8xf32>
  func.return
}

// -----

func.func @broadcast_to_rank(%x: tensor<2x8xf32>, %s: !shape.shape<1>) {
  // expected-error @+1 {{'graph.broadcast_to' op cannot broadcast rank 2 to rank 1}}
  %a = graph.broadcast_to %x, %s : (tensor<2x8xf32>, !shape.shape<1>) -> tensor<?xf32>
  func.return
}

// -----

func.func @constant_type() {
  // expected-error @+1 {{'graph.constant' op result type tensor<3xf32> differs from the value's type tensor<2xf32>}}
  %c = "graph.constant"() <{value = dense<[1.0, 2.0]> : tensor<2xf32>}> : () -> tensor<3xf32>
  func.return
}

// -----

func.func @external_dynamic() {
  // expected-error @+1 {{'graph.external_constant' op an external constant must have a static shape}}
  %c = graph.external_constant "w" from "w.npz" : tensor<?x4xf32>
  func.return
}

// -----

func.func @nms_boxes(%b: tensor<?x5xf32>, %s: tensor<?xf32>) {
  // expected-error @+1 {{'graph.nms' op boxes must have 4 coordinates (5 vs 4)}}
  %k = graph.nms %b, %s {iou_threshold = 5.0e-01 : f64} : (tensor<?x5xf32>, tensor<?xf32>) -> tensor<?xi64>
  func.return
}

// -----

func.func @roi_align_count(%f: tensor<1x4x8x8xf32>, %r: tensor<3x4xf32>, %i: tensor<2xi64>) {
  // expected-error @+1 {{'graph.roi_align' op rois and batch_indices differ in count (3 vs 2)}}
  %k = graph.roi_align %f, %r, %i {output_height = 2 : i64, output_width = 2 : i64} : (tensor<1x4x8x8xf32>, tensor<3x4xf32>, tensor<2xi64>) -> tensor<3x4x2x2xf32>
  func.return
}

// -----

func.func @if_condition(%c: tensor<2xi1>, %a: tensor<4xf32>) {
  // expected-error @+1 {{'graph.if' op condition must be i1 or tensor<i1>}}
  %r = graph.if %c : tensor<2xi1> -> (tensor<4xf32>) {
    graph.yield %a : tensor<4xf32>
  } else {
    graph.yield %a : tensor<4xf32>
  }
  func.return
}

// -----

func.func @if_yield_count(%c: i1, %a: tensor<4xf32>) {
  // expected-error @+1 {{'graph.if' op else region yields 0 values, expected 1}}
  %r = graph.if %c : i1 -> (tensor<4xf32>) {
    graph.yield %a : tensor<4xf32>
  } else {
    graph.yield
  }
  func.return
}

// -----

func.func @while_body_type(%a: tensor<4xf32>, %c: i1) {
  // expected-error @+1 {{'graph.while' op body region yields tensor<5xf32> as value #0, incompatible with tensor<4xf32>}}
  %r = graph.while (%x = %a) : (tensor<4xf32>) -> (tensor<4xf32>) {
    graph.condition %c : i1
  } do {
  ^bb0(%y: tensor<4xf32>):
    %z = graph.concat %y, %y {axis = 0 : i64} : (tensor<4xf32>, tensor<4xf32>) -> tensor<8xf32>
    %w = graph.slice %z[0:5] : tensor<8xf32> -> tensor<5xf32>
    graph.yield %w : tensor<5xf32>
  }
  func.return
}

// -----

func.func @tuple_index(%a: tensor<4xf32>) {
  %t = graph.make_tuple %a : (tensor<4xf32>) -> tuple<tensor<4xf32>>
  // expected-error @+1 {{'graph.get_item' op index 1 out of range for a tuple of 1}}
  %x = "graph.get_item"(%t) <{index = 1 : i64}> : (tuple<tensor<4xf32>>) -> tensor<4xf32>
  func.return
}

// -----

graph.adt @List {
  graph.constructor @Nil()
  graph.constructor @Cons(tensor<4xf32>, !graph.adt<@List>)
}
func.func @construct_fields(%a: tensor<4xf32>) {
  // expected-error @+1 {{'graph.construct' op @Cons: yields 1 values, expected 2}}
  %l = graph.construct @Cons(%a) : (tensor<4xf32>) -> !graph.adt<@List>
  func.return
}

// -----

graph.adt @List {
  graph.constructor @Nil()
  graph.constructor @Cons(tensor<4xf32>, !graph.adt<@List>)
}
func.func @match_not_exhaustive(%l: !graph.adt<@List>, %a: tensor<4xf32>) {
  // expected-error @+1 {{'graph.match' op does not cover constructor @Cons}}
  %r = graph.match %l : !graph.adt<@List> -> (tensor<4xf32>)
    case @Nil() {
      graph.yield %a : tensor<4xf32>
    }
  func.return
}

// -----

func.func @unknown_constructor(%a: tensor<4xf32>) {
  // expected-error @+1 {{'graph.construct' op unknown constructor @Leaf}}
  %l = graph.construct @Leaf(%a) : (tensor<4xf32>) -> !graph.adt<@Tree>
  func.return
}
