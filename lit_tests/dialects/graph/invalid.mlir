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

func.func @reduce_prod_result(%x: tensor<?x4xi64>) {
  // expected-error @+1 {{'graph.reduce_prod' op result #0 has type tensor<5xi64>, incompatible with the inferred type tensor<4xi64>}}
  %c = graph.reduce_prod %x {axes = array<i64: 0>} : tensor<?x4xi64> -> tensor<5xi64>
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

func.func @broadcast_to_rank(%x: tensor<2x8xf32>, %s: !dynshape.shape<1>) {
  // expected-error @+1 {{'graph.broadcast_to' op cannot broadcast rank 2 to rank 1}}
  %a = graph.broadcast_to %x, %s : (tensor<2x8xf32>, !dynshape.shape<1>) -> tensor<?xf32>
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

// -----

func.func @where_branch_types(%c: tensor<4xi1>, %a: tensor<4xf32>, %b: tensor<4xi32>) {
  // expected-error @+1 {{'graph.where' op the two branches have different element types}}
  %r = graph.where %c, %a, %b : (tensor<4xi1>, tensor<4xf32>, tensor<4xi32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @matmul_scalar(%a: tensor<f32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'graph.matmul' op operands must have rank >= 1}}
  %c = graph.matmul %a, %b : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @dense_bias_rank(%x: tensor<?x3xf32>, %w: tensor<4x3xf32>, %b: tensor<1x4xf32>) {
  // expected-error @+1 {{'graph.dense' op bias must have rank 1, not 2}}
  %c = graph.dense %x, %w, %b : (tensor<?x3xf32>, tensor<4x3xf32>, tensor<1x4xf32>) -> tensor<?x4xf32>
  func.return
}

// -----

func.func @conv_rank(%x: tensor<3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'graph.conv2d' op input and weight must have rank 4 (NCHW, OIHW)}}
  %c = graph.conv2d %x, %w : (tensor<3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<4x6x6xf32>
  func.return
}

// -----

func.func @conv_groups(%x: tensor<1x4x8x8xf32>, %w: tensor<3x2x3x3xf32>) {
  // expected-error @+1 {{'graph.conv2d' op output channels 3 are not divisible by groups 2}}
  %c = graph.conv2d %x, %w {groups = 2 : i64} : (tensor<1x4x8x8xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x6x6xf32>
  func.return
}

// -----

func.func @conv_zero_groups(%x: tensor<1x4x8x8xf32>, %w: tensor<3x2x3x3xf32>) {
  // expected-error @+1 {{'graph.conv2d' op groups must be >= 1}}
  %c = graph.conv2d %x, %w {groups = 0 : i64} : (tensor<1x4x8x8xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x6x6xf32>
  func.return
}

// -----

func.func @conv_integer(%x: tensor<1x3x8x8xi32>, %w: tensor<4x3x3x3xi32>) {
  // expected-error @+1 {{'graph.conv2d' op operands must be float tensors, not i32}}
  %c = graph.conv2d %x, %w : (tensor<1x3x8x8xi32>, tensor<4x3x3x3xi32>) -> tensor<1x4x6x6xi32>
  func.return
}

// -----

func.func @conv_strides(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'graph.conv2d' op strides must be >= 1, got [0, 1]}}
  %c = graph.conv2d %x, %w {strides = array<i64: 0, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return
}

// -----

func.func @pool_rank(%x: tensor<3x8x8xf32>) {
  // expected-error @+1 {{'graph.avg_pool2d' op input must have rank 4 (NCHW)}}
  %c = graph.avg_pool2d %x {kernel = array<i64: 2, 2>} : tensor<3x8x8xf32> -> tensor<3x7x7xf32>
  func.return
}

// -----

func.func @global_pool_rank(%x: tensor<3x8x8xf32>) {
  // expected-error @+1 {{'graph.global_avg_pool2d' op input must have rank 4 (NCHW)}}
  %c = graph.global_avg_pool2d %x : tensor<3x8x8xf32> -> tensor<3x1x1xf32>
  func.return
}

// -----

func.func @batch_norm_rank(%x: tensor<8xf32>, %s: tensor<8xf32>) {
  // expected-error @+1 {{'graph.batch_norm' op input must have rank >= 2}}
  %c = graph.batch_norm %x, %s, %s, %s, %s : (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  func.return
}

// -----

func.func @batch_norm_param_rank(%x: tensor<2x8xf32>, %s: tensor<8xf32>, %m: tensor<1x8xf32>) {
  // expected-error @+1 {{'graph.batch_norm' op mean must have rank 1}}
  %c = graph.batch_norm %x, %s, %s, %m, %s : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<1x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  func.return
}

// -----

func.func @layer_norm_scale_rank(%x: tensor<?x4x8xf32>, %g: tensor<8xf32>) {
  // expected-error @+1 {{'graph.layer_norm' op scale must have rank 2}}
  %c = graph.layer_norm %x, %g {axis = 1 : i64} : (tensor<?x4x8xf32>, tensor<8xf32>) -> tensor<?x4x8xf32>
  func.return
}

// -----

func.func @layer_norm_scale_shape(%x: tensor<?x8xf32>, %g: tensor<7xf32>) {
  // expected-error @+1 {{'graph.layer_norm' op scale shape differs from the normalised dims (7 vs 8)}}
  %c = graph.layer_norm %x, %g : (tensor<?x8xf32>, tensor<7xf32>) -> tensor<?x8xf32>
  func.return
}

// -----

func.func @argmax_scalar(%x: tensor<f32>) {
  // expected-error @+1 {{'graph.argmax' op input must have rank >= 1}}
  %c = graph.argmax %x : tensor<f32> -> tensor<i64>
  func.return
}

// -----

func.func @reshape_negative(%x: tensor<2x6xf32>) {
  // expected-error @+1 {{'graph.reshape' op negative target dim in [-2, 6]}}
  %c = graph.reshape %x [-2, 6] : tensor<2x6xf32> -> tensor<2x6xf32>
  func.return
}

// -----

func.func @reshape_hole_next_to_zero(%x: tensor<0x6xf32>) {
  // expected-error @+1 {{'graph.reshape' op cannot infer the -1 dim next to a zero dim}}
  %c = graph.reshape %x [0, -1] : tensor<0x6xf32> -> tensor<0x?xf32>
  func.return
}

// -----

func.func @dynamic_reshape_count(%x: tensor<2x6xf32>, %n: index) {
  %c5 = arith.constant 5 : index
  %s = dynshape.from_dims %c5, %c5 : !dynshape.shape<2>
  // expected-error @+1 {{'graph.dynamic_reshape' op reshape changes the number of elements (25 vs 12)}}
  %c = graph.dynamic_reshape %x, %s : (tensor<2x6xf32>, !dynshape.shape<2>) -> tensor<5x5xf32>
  func.return
}

// -----

func.func @concat_rank(%a: tensor<?x4xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'graph.concat' op inputs must have the same rank}}
  %c = graph.concat %a, %b : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  func.return
}

// -----

func.func @concat_element_types(%a: tensor<?x4xf32>, %b: tensor<?x4xi32>) {
  // expected-error @+1 {{'graph.concat' op inputs must have the same element type}}
  %c = graph.concat %a, %b : (tensor<?x4xf32>, tensor<?x4xi32>) -> tensor<?x4xf32>
  func.return
}

// -----

func.func @split_negative_size(%x: tensor<?x8xf32>) {
  // expected-error @+1 {{'graph.split' op sizes must be >= 0, got [10, -2]}}
  %a, %b = graph.split %x {axis = 1 : i64, sizes = array<i64: 10, -2>} : tensor<?x8xf32> -> (tensor<?x10xf32>, tensor<?x0xf32>)
  func.return
}

// -----

func.func @split_num(%x: tensor<?x8xf32>) {
  // expected-error @+1 {{'graph.split' op num must be >= 1}}
  %a = graph.split %x {axis = 1 : i64, num = 0 : i64} : tensor<?x8xf32> -> (tensor<?x8xf32>)
  func.return
}

// -----

func.func @split_result_count(%x: tensor<?x8xf32>) {
  // expected-error @+1 {{'graph.split' op expected 2 results, got 3}}
  %a, %b, %c = graph.split %x {axis = 1 : i64, num = 2 : i64} : tensor<?x8xf32> -> (tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>)
  func.return
}

// -----

func.func @slice_dynamic_count(%x: tensor<?x8xf32>, %n: index) {
  // expected-error @+1 {{'graph.slice' op expected 0 dynamic bounds, got 1}}
  %a = "graph.slice"(%x, %n) <{static_starts = array<i64: 0, 0>, static_ends = array<i64: 1, 8>, steps = array<i64: 1, 1>}> : (tensor<?x8xf32>, index) -> tensor<1x8xf32>
  func.return
}

// -----

func.func @gather_axis(%x: tensor<4x8xf32>, %i: tensor<2xi64>) {
  // expected-error @+1 {{'graph.gather' op axis 2 is out of range for rank 2}}
  %a = graph.gather %x, %i {axis = 2 : i64} : (tensor<4x8xf32>, tensor<2xi64>) -> tensor<2x8xf32>
  func.return
}

// -----

func.func @zeros_rank(%s: !dynshape.shape<2>) {
  // expected-error @+1 {{'graph.zeros' op result rank differs from the shape's rank}}
  %z = graph.zeros %s : !dynshape.shape<2> -> tensor<?xf32>
  func.return
}

// -----

func.func @arange_rank(%a: index) {
  // expected-error @+1 {{'graph.arange' op result must have rank 1}}
  %z = graph.arange %a, %a, %a : tensor<?x?xi64>
  func.return
}

// -----

func.func @arange_zero_step(%a: index) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'graph.arange' op step must not be 0}}
  %z = graph.arange %a, %a, %c0 : tensor<?xi64>
  func.return
}

// -----

func.func @nms_ranks(%b: tensor<?x4xf32>, %s: tensor<?x1xf32>) {
  // expected-error @+1 {{'graph.nms' op boxes must be [N, 4] and scores [N]}}
  %k = graph.nms %b, %s {iou_threshold = 5.0e-01 : f64} : (tensor<?x4xf32>, tensor<?x1xf32>) -> tensor<?xi64>
  func.return
}

// -----

func.func @nms_max_output(%b: tensor<?x4xf32>, %s: tensor<?xf32>) {
  // expected-error @+1 {{'graph.nms' op max_output must be >= 0}}
  %k = graph.nms %b, %s {iou_threshold = 5.0e-01 : f64, max_output = -1 : i64} : (tensor<?x4xf32>, tensor<?xf32>) -> tensor<?xi64>
  func.return
}

// -----

func.func @nms_integer_boxes(%b: tensor<?x4xi32>, %s: tensor<?xf32>) {
  // expected-error @+1 {{'graph.nms' op boxes and scores must be float tensors}}
  %k = graph.nms %b, %s {iou_threshold = 5.0e-01 : f64} : (tensor<?x4xi32>, tensor<?xf32>) -> tensor<?xi64>
  func.return
}

// -----

func.func @roi_align_ranks(%f: tensor<4x8x8xf32>, %r: tensor<3x4xf32>, %i: tensor<3xi64>) {
  // expected-error @+1 {{'graph.roi_align' op expects input [N, C, H, W], rois [K, 4], batch_indices [K]}}
  %k = graph.roi_align %f, %r, %i {output_height = 2 : i64, output_width = 2 : i64} : (tensor<4x8x8xf32>, tensor<3x4xf32>, tensor<3xi64>) -> tensor<3x4x2x2xf32>
  func.return
}

// -----

func.func @roi_align_sizes(%f: tensor<1x4x8x8xf32>, %r: tensor<3x4xf32>, %i: tensor<3xi64>) {
  // expected-error @+1 {{'graph.roi_align' op output sizes must be >= 1 and sampling_ratio >= 0}}
  %k = graph.roi_align %f, %r, %i {output_height = 0 : i64, output_width = 2 : i64} : (tensor<1x4x8x8xf32>, tensor<3x4xf32>, tensor<3xi64>) -> tensor<3x4x0x2xf32>
  func.return
}

// -----

func.func @roi_align_float_indices(%f: tensor<1x4x8x8xf32>, %r: tensor<3x4xf32>, %i: tensor<3xf32>) {
  // expected-error @+1 {{'graph.roi_align' op batch_indices must be integers}}
  %k = graph.roi_align %f, %r, %i {output_height = 2 : i64, output_width = 2 : i64} : (tensor<1x4x8x8xf32>, tensor<3x4xf32>, tensor<3xf32>) -> tensor<3x4x2x2xf32>
  func.return
}

// -----

func.func @condition_type(%a: tensor<4xf32>, %c: tensor<4xf32>) {
  %r = graph.while (%x = %a) : (tensor<4xf32>) -> (tensor<4xf32>) {
    // expected-error @+1 {{'graph.condition' op condition must be i1 or tensor<i1>, not tensor<4xf32>}}
    graph.condition %c : tensor<4xf32>
  } do {
  ^bb0(%y: tensor<4xf32>):
    graph.yield %y : tensor<4xf32>
  }
  func.return
}

// -----

func.func @while_region_args(%a: tensor<4xf32>, %c: i1) {
  // expected-error @+1 {{'graph.while' op body region arguments must have the carried types (1 values)}}
  %r = graph.while (%x = %a) : (tensor<4xf32>) -> (tensor<4xf32>) {
    graph.condition %c : i1
  } do {
  ^bb0(%y: tensor<5xf32>):
    graph.yield %a : tensor<4xf32>
  }
  func.return
}

// -----

func.func @if_region_args(%c: i1, %a: tensor<4xf32>) {
  // expected-error @+1 {{'graph.if' op then region must not take arguments}}
  %r = "graph.if"(%c) ({
  ^bb0(%z: tensor<4xf32>):
    graph.yield %a : tensor<4xf32>
  }, {
    graph.yield %a : tensor<4xf32>
  }) : (i1) -> tensor<4xf32>
  func.return
}

// -----

func.func @make_tuple_type(%a: tensor<4xf32>) {
  // expected-error @+1 {{'graph.make_tuple' op tuple yields tensor<4xf32> as value #0, incompatible with tensor<5xf32>}}
  %t = graph.make_tuple %a : (tensor<4xf32>) -> tuple<tensor<5xf32>>
  func.return
}

// -----

func.func @get_item_type(%a: tensor<4xf32>) {
  %t = graph.make_tuple %a : (tensor<4xf32>) -> tuple<tensor<4xf32>>
  // expected-error @+1 {{'graph.get_item' op result type tensor<5xf32> differs from element type tensor<4xf32>}}
  %x = graph.get_item %t, 0 : tuple<tensor<4xf32>> -> tensor<5xf32>
  func.return
}

// -----

// expected-error @+1 {{'graph.adt' op declares a constructor twice in ['A', 'A']}}
graph.adt @Twice {
  graph.constructor @A()
  graph.constructor @A()
}

// -----

// expected-error @+1 {{'graph.adt' op Region 'body' at position 0 expected a single block, but got 0 blocks}}
graph.adt @Empty {
}

// -----

// expected-error @+1 {{'graph.adt' op constructor @Shared is also declared by @Second}}
graph.adt @First {
  graph.constructor @Shared()
}
// expected-error @+1 {{'graph.adt' op constructor @Shared is also declared by @First}}
graph.adt @Second {
  graph.constructor @Shared()
}

// -----

graph.adt @T {
  graph.constructor @A(tensor<4xf32>)
}
graph.adt @U {
  graph.constructor @B()
}
func.func @construct_wrong_type(%a: tensor<4xf32>) {
  // expected-error @+1 {{'graph.construct' op @A builds !graph.adt<@T>, not !graph.adt<@U>}}
  %l = graph.construct @A(%a) : (tensor<4xf32>) -> !graph.adt<@U>
  func.return
}

// -----

graph.adt @T {
  graph.constructor @A(tensor<4xf32>)
}
graph.adt @U {
  graph.constructor @B()
}
func.func @match_foreign_case(%t: !graph.adt<@T>, %a: tensor<4xf32>) {
  // expected-error @+1 {{'graph.match' op @B is not a constructor of @T}}
  %r = graph.match %t : !graph.adt<@T> -> (tensor<4xf32>)
    case @B() {
      graph.yield %a : tensor<4xf32>
    }
  func.return
}

// -----

graph.adt @T {
  graph.constructor @A(tensor<4xf32>)
}
func.func @match_twice(%t: !graph.adt<@T>, %a: tensor<4xf32>) {
  // expected-error @+1 {{'graph.match' op matches a constructor twice}}
  %r = graph.match %t : !graph.adt<@T> -> (tensor<4xf32>)
    case @A(%x: tensor<4xf32>) {
      graph.yield %x : tensor<4xf32>
    }
    case @A(%y: tensor<4xf32>) {
      graph.yield %y : tensor<4xf32>
    }
  func.return
}

// -----

graph.adt @T {
  graph.constructor @A(tensor<4xf32>)
}
func.func @match_binding(%t: !graph.adt<@T>, %a: tensor<4xf32>) {
  // expected-error @+1 {{'graph.match' op case @A must bind its 1 fields with their types}}
  %r = graph.match %t : !graph.adt<@T> -> (tensor<4xf32>)
    case @A(%x: tensor<5xf32>) {
      graph.yield %a : tensor<4xf32>
    }
  func.return
}

// -----

func.func @match_unknown_adt(%t: !graph.adt<@Nowhere>, %a: tensor<4xf32>) {
  // expected-error @+1 {{'graph.match' op unknown ADT @Nowhere}}
  %r = graph.match %t : !graph.adt<@Nowhere> -> (tensor<4xf32>)
  func.return
}

// -----

func.func @fused_arg_types(%x: tensor<4xf32>) {
  // expected-error @+1 {{'graph.fused' op region arguments must have the types of the inputs}}
  %y = "graph.fused"(%x) ({
  ^bb0(%a: tensor<5xf32>):
    graph.yield %a : tensor<5xf32>
  }) : (tensor<4xf32>) -> tensor<5xf32>
  func.return
}

// -----

func.func @fused_yield(%x: tensor<4xf32>) {
  // expected-error @+1 {{'graph.fused' op body yields tensor<4xf32> as value #0, incompatible with tensor<5xf32>}}
  %y = graph.fused (%a = %x) : (tensor<4xf32>) -> (tensor<5xf32>) {
    graph.yield %a : tensor<4xf32>
  }
  func.return
}

// -----

func.func @bool_arithmetic(%a: tensor<2xi1>) {
  // expected-error @+1 {{'graph.sub' op arithmetic on i1 is not defined; use and/or/not or cast first}}
  %c = graph.sub %a, %a : (tensor<2xi1>, tensor<2xi1>) -> tensor<2xi1>
  func.return
}

// -----

func.func @bool_negation(%a: tensor<2xi1>) {
  // expected-error @+1 {{'graph.neg' op arithmetic on i1 is not defined; use not, or cast first}}
  %c = graph.neg %a : tensor<2xi1> -> tensor<2xi1>
  func.return
}

// -----

func.func @cumsum_scalar(%x: tensor<f32>) {
  // expected-error @+1 {{'graph.cumsum' op input must have rank >= 1}}
  %c = graph.cumsum %x : tensor<f32> -> tensor<f32>
  func.return
}

// -----

func.func @cumsum_axis(%x: tensor<?x4xf32>) {
  // expected-error @+1 {{'graph.cumsum' op axis 2 is out of range for rank 2}}
  %c = graph.cumsum %x {axis = 2 : i64} : tensor<?x4xf32> -> tensor<?x4xf32>
  func.return
}

// -----

func.func @cumsum_bools(%x: tensor<4xi1>) {
  // expected-error @+1 {{'graph.cumsum' op a running sum of i1 is not defined; cast first}}
  %c = graph.cumsum %x : tensor<4xi1> -> tensor<4xi1>
  func.return
}

// -----

func.func @cumprod_bools(%x: tensor<4xi1>) {
  // expected-error @+1 {{'graph.cumprod' op a running product of i1 is not defined; cast first}}
  %c = graph.cumprod %x : tensor<4xi1> -> tensor<4xi1>
  func.return
}

// -----

func.func @is_nan_of_ints(%x: tensor<4xi32>) {
  // expected-error @+1 {{'graph.is_nan' op operand must be a float tensor, not i32}}
  %c = graph.is_nan %x : tensor<4xi32> -> tensor<4xi1>
  func.return
}

// -----

func.func @from_elements_count(%n: index) {
  // expected-error @+1 {{'graph.from_elements' op result #0 has type tensor<2xi64>, incompatible with the inferred type tensor<1xi64>}}
  %t = graph.from_elements %n : tensor<2xi64>
  func.return
}

// -----

func.func @from_elements_bools(%n: index) {
  // expected-error @+1 {{'graph.from_elements' op result elements must be numbers, not i1}}
  %t = graph.from_elements %n : tensor<1xi1>
  func.return
}

// -----

func.func @atanh_of_ints(%x: tensor<4xi32>) {
  // expected-error @+1 {{'graph.atanh' op operand must be a float tensor, not i32}}
  %y = graph.atanh %x : tensor<4xi32> -> tensor<4xi32>
  func.return
}

// -----

func.func @einsum_implicit(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>) {
  // expected-error @+1 {{'graph.einsum' op equation 'ij,jk' must be explicit (`->`) and without '...'}}
  %c = graph.einsum %a, %b {equation = "ij,jk"} : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  func.return
}

// -----

func.func @einsum_dims(%a: tensor<3x4xf32>, %b: tensor<3x5xf32>) {
  // expected-error @+1 {{'graph.einsum' op subscript 'j': dims differ (4 vs 3)}}
  %c = graph.einsum %a, %b {equation = "ij,jk->ik"} : (tensor<3x4xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  func.return
}

// -----

func.func @scatter_reduction(%x: tensor<4xf32>, %i: tensor<2xi64>, %u: tensor<2xf32>) {
  // expected-error @+1 {{'graph.scatter_elements' op reduction must be one of none, add, mul, max, min, not 'sum'}}
  %y = graph.scatter_elements %x, %i, %u {reduction = "sum"} : (tensor<4xf32>, tensor<2xi64>, tensor<2xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @scatter_nd_updates(%x: tensor<4x3xf32>, %i: tensor<2x1xi64>, %u: tensor<2x4xf32>) {
  // expected-error @+1 {{'graph.scatter_nd' op updates dim 1 must equal the data's dim 1}}
  %y = graph.scatter_nd %x, %i, %u : (tensor<4x3xf32>, tensor<2x1xi64>, tensor<2x4xf32>) -> tensor<4x3xf32>
  func.return
}

// -----

func.func @gather_nd_depth(%x: tensor<4x3xf32>, %i: tensor<2x3xi64>) {
  // expected-error @+1 {{'graph.gather_nd' op batch_dims 0 and index length 3 do not fit ranks 2 and 2}}
  %y = graph.gather_nd %x, %i : (tensor<4x3xf32>, tensor<2x3xi64>) -> tensor<2xf32>
  func.return
}

// -----

func.func @one_hot_values(%i: tensor<3xi64>, %v: tensor<3xf32>) {
  // expected-error @+1 {{'graph.one_hot' op values must be [off, on]}}
  %y = graph.one_hot %i, %v {depth = 4 : i64} : (tensor<3xi64>, tensor<3xf32>) -> tensor<3x4xf32>
  func.return
}
