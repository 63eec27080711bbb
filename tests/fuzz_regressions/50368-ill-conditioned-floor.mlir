// nimble-fuzz-differential --replay 50368-ill-conditioned-floor.mlir (not a compiler bug: floor(tanh(y)) flips where tanh is one ulp below 1; excused by differential.unstable)
// mismatch: result #1 differs at (3, 5, 1): np.float32(1.0), the reference has np.float32(0.0) (1 of 200)
builtin.module {
  func.func @main(%0: tensor<?x?x5xf32, #nimble.dims<[n, n, 5]>>, %1: tensor<5x?x5xf32, #nimble.dims<[5, n, 5]>>, %2: tensor<?x4x7x6xf32, #nimble.dims<[n, 4, 7, 6]>>) -> tensor<5x?x5xf32, #nimble.dims<[5, n, 5]>> {
    %3 = graph.pow %1, %1 : (tensor<5x?x5xf32, #nimble.dims<[5, n, 5]>>, tensor<5x?x5xf32, #nimble.dims<[5, n, 5]>>) -> tensor<5x?x5xf32, #nimble.dims<[5, n, 5]>>
    %4 = graph.tanh %3 : tensor<5x?x5xf32, #nimble.dims<[5, n, 5]>> -> tensor<5x?x5xf32, #nimble.dims<[5, n, 5]>>
    %5 = graph.floor %4 : tensor<5x?x5xf32, #nimble.dims<[5, n, 5]>> -> tensor<5x?x5xf32, #nimble.dims<[5, n, 5]>>
    func.return %5 : tensor<5x?x5xf32, #nimble.dims<[5, n, 5]>>
  }
}
