// nimble-fuzz-differential --replay 1020-llvm.mlir --config llvm --sizes {"n":1,"m":1}
// compiled ran: the reference refused: <string>:8:5: 'graph.slice' op result: expected tensor<f32>, got float32 np.float32(-0.37601987)
builtin.module {
  func.func @main(%0: tensor<?x?xf32, #nimble.dims<[m, m]>>, %1: tensor<4x8xf32>, %2: tensor<8x1xf32>) -> tensor<f32> {
    %3 = graph.constant dense<-0.376019865> : tensor<f32>
    %4 = graph.slice %3[] : tensor<f32> -> tensor<f32>
    func.return %4 : tensor<f32>
  }
}
