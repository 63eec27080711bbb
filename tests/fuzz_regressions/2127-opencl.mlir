// nimble-fuzz-differential --replay 2127-opencl.mlir --config opencl --sizes {}
// compile error: BytecodeError: device kernels: NoDeviceLowering: @main_reduce_mean_0 has top-level statements between its loop nests
builtin.module {
  func.func @main(%0: tensor<8x4x?xf32, #nimble.dims<[8, 4, n]>>, %1: tensor<7xf32>) -> (tensor<1x7xf32>, tensor<1xf32>) {
    %2 = graph.maximum %1, %1 : (tensor<7xf32>, tensor<7xf32>) -> tensor<7xf32>
    %3 = graph.reduce_mean %2 {axes = array<i64: 0>, keepdims = true} : tensor<7xf32> -> tensor<1xf32>
    %4 = graph.reshape %2 [-1, 7] : tensor<7xf32> -> tensor<1x7xf32>
    func.return %4, %3 : tensor<1x7xf32>, tensor<1xf32>
  }
}
