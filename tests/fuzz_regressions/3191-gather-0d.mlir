// nimble-fuzz-differential --replay 3191-llvm.mlir --config llvm --sizes {"n":1,"m":1}
// compiled ran: the reference refused: <string>:9:5: 'graph.gather' op result: expected tensor<f32>, got float32 np.float32(0.20422728)
builtin.module {
  func.func @main(%0: tensor<?xf32, #nimble.dims<[m]>>, %1: tensor<?x4x5x7xf32, #nimble.dims<[m, 4, 5, 7]>>, %2: tensor<1xf32>) -> tensor<f32> {
    %3 = graph.constant dense<-1> : tensor<i64>
    %4 = graph.gather %2, %3 : (tensor<1xf32>, tensor<i64>) -> tensor<f32>
    func.return %4 : tensor<f32>
  }
}
