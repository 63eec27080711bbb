// nimble-fuzz-differential --replay 5679-conv-dilated-grouped-into-concat.mlir (every configuration: a grouped conv staged while a concat was written into the output, its padded input staged after the loops that read it)
// compile error: RuntimeError: kernel 'main_conv2d_0' failed to compile: KeyError: <OpResult[memref<?x2x7x7xf32>] name_hint: None, index: 0, operation: loop.alloc, uses: 7>
builtin.module {
  func.func @main(%0: tensor<3xf32>, %1: tensor<?x2x6x6xf32, #nimble.dims<[m, 2, 6, 6]>>) -> tensor<?x4x10x5xf32, #nimble.dims<[m, 4, 10, 5]>> {
    %2 = graph.constant dense<[0.51658082, -0.0136310691, 0.555265486, 1.1007452]> : tensor<4xf32>
    %3 = graph.constant dense<[[[[0.51438719, 0.148023531], [-0.578760803, 0.252703607]]], [[[-0.283441901, -0.190736651], [-0.429847211, -0.407536089]]], [[[0.138404906, -0.554252744], [-0.178946599, -0.361048728]]], [[[0.0781023353, -0.338187665], [-0.631498516, 0.342617273]]]]> : tensor<4x1x2x2xf32>
    %4 = graph.conv2d %1, %3, %2 {padding = array<i64: 0, 1, 1, 0>, dilations = array<i64: 2, 2>, groups = 2 : i64} : (tensor<?x2x6x6xf32, #nimble.dims<[m, 2, 6, 6]>>, tensor<4x1x2x2xf32>, tensor<4xf32>) -> tensor<?x4x5x5xf32, #nimble.dims<[m, 4, 5, 5]>>
    %5 = graph.concat %4, %4 {axis = 2 : i64} : (tensor<?x4x5x5xf32, #nimble.dims<[m, 4, 5, 5]>>, tensor<?x4x5x5xf32, #nimble.dims<[m, 4, 5, 5]>>) -> tensor<?x4x10x5xf32, #nimble.dims<[m, 4, 10, 5]>>
    func.return %5 : tensor<?x4x10x5xf32, #nimble.dims<[m, 4, 10, 5]>>
  }
}
