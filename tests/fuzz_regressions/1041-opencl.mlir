// nimble-fuzz-differential --replay 1041-opencl.mlir --config opencl --sizes {}
// compile error: BytecodeError: device kernels: NoDeviceLowering: @main_reduce_max_0 has top-level statements between its loop nests
builtin.module {
  func.func @main(%0: tensor<4x4x2xf32>, %1: tensor<7x3x4xf32>, %2: tensor<5xf32>) -> tensor<1xf32> {
    %3 = graph.reduce_max %2 {axes = array<i64: 0>, keepdims = true} : tensor<5xf32> -> tensor<1xf32>
    func.return %3 : tensor<1xf32>
  }
}
