// nimble-fuzz-differential --replay 1001-opencl.mlir --config opencl --sizes {}
// compile error: BytecodeError: device kernels: NoDeviceLowering: a value used before it is defined in @main_reduce_max_0
builtin.module {
  graph.adt @Adt0 {
    graph.constructor @Adt0_some(tensor<16x16xf32>)
    graph.constructor @Adt0_none()
  }
  func.func @main(%0: tensor<?x4x9x5xf32, #nimble.dims<[m, 4, 9, 5]>>, %1: tensor<1xf32>, %2: tensor<?x8x5x9xf32, #nimble.dims<[n, 8, 5, 9]>>) -> tensor<7xf32> {
    %3 = graph.reduce_max %1 {axes = array<i64: 0>, keepdims = true} : tensor<1xf32> -> tensor<1xf32>
    %4 = graph.constant dense<[[0.328176707, -0.52551806, -0.147578493]]> : tensor<1x3xf32>
    %5 = graph.matmul %1, %4 : (tensor<1xf32>, tensor<1x3xf32>) -> tensor<3xf32>
    %6 = graph.concat %5, %5, %3 {axis = -1 : i64} : (tensor<3xf32>, tensor<3xf32>, tensor<1xf32>) -> tensor<7xf32>
    func.return %6 : tensor<7xf32>
  }
}
