// The reference's erf (and so gelu) of a 0-d tensor: frompyfunc returned a Python float.
builtin.module {
  func.func @main(%0: tensor<3x?xf32, #nimble.dims<[3, n]>>) -> (tensor<f32>, tensor<f32>) {
    %1 = graph.reduce_sum %0 {axes = array<i64: 0, 1>} : tensor<3x?xf32, #nimble.dims<[3, n]>> -> tensor<f32>
    %2 = graph.gelu %1 : tensor<f32> -> tensor<f32>
    %3 = graph.erf %1 : tensor<f32> -> tensor<f32>
    func.return %2, %3 : tensor<f32>, tensor<f32>
  }
}
