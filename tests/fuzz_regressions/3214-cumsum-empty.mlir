// An exclusive cumsum along an empty axis: the reference padded the (empty) shifted sums to one element.
builtin.module {
  func.func @main(%0: tensor<?x0xf32, #nimble.dims<[n, 0]>>) -> (tensor<?x0xf32, #nimble.dims<[n, 0]>>, tensor<?x0xf32, #nimble.dims<[n, 0]>>) {
    %1 = graph.cumsum %0 {axis = 1 : i64, exclusive = true} : tensor<?x0xf32, #nimble.dims<[n, 0]>> -> tensor<?x0xf32, #nimble.dims<[n, 0]>>
    %2 = graph.cumsum %0 {axis = 1 : i64, exclusive = true, reverse = true} : tensor<?x0xf32, #nimble.dims<[n, 0]>> -> tensor<?x0xf32, #nimble.dims<[n, 0]>>
    func.return %1, %2 : tensor<?x0xf32, #nimble.dims<[n, 0]>>, tensor<?x0xf32, #nimble.dims<[n, 0]>>
  }
}
