// nimble-fuzz-differential --replay 1017-opencl.mlir --config opencl --sizes {}
// compile error: BytecodeError: device kernels: NoDeviceLowering: a value used before it is defined in @main_softmax_0
builtin.module {
  func.func @main(%0: tensor<1x?x5xf32, #nimble.dims<[1, m, 5]>>, %1: tensor<?x?xf32, #nimble.dims<[m, n]>>, %2: tensor<?xf32, #nimble.dims<[m]>>) -> tensor<?xf32, #nimble.dims<[m]>> {
    %3 = graph.softmax %2 {axis = 0 : i64} : tensor<?xf32, #nimble.dims<[m]>> -> tensor<?xf32, #nimble.dims<[m]>>
    %4 = graph.cos %3 : tensor<?xf32, #nimble.dims<[m]>> -> tensor<?xf32, #nimble.dims<[m]>>
    func.return %4 : tensor<?xf32, #nimble.dims<[m]>>
  }
}
