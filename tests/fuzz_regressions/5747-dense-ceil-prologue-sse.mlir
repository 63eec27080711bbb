// nimble-fuzz-differential --replay 5747-dense-ceil-prologue-sse.mlir --config llvm-sse4.2 (a failed attempt left its memo scope behind: a later tile reused a constant of the dropped block)
// compile error: RuntimeError: kernel 'main_dense_0' failed to compile: KeyError: <OpResult[index] name_hint: None, index: 0, operation: arith.constant, uses: 6>
builtin.module {
  func.func @main(%0: tensor<?x?x?xf32, #nimble.dims<[n, m, n]>>, %1: tensor<8x1x2xf32>, %2: tensor<1x7x8xf32>) -> tensor<1x7x2xf32> {
    %3 = graph.ceil %2 : tensor<1x7x8xf32> -> tensor<1x7x8xf32>
    %4 = graph.constant dense<[[0.979304254, -0.254564553], [0.372273058, 0.334905356], [-0.156284839, -0.505103648], [0.532245457, 0.547143817], [-0.0963347629, 0.877199709], [-0.553432822, 0.383193254], [0.0742395744, -0.218523473], [0.725480378, 0.214777038]]> : tensor<8x2xf32>
    %5 = graph.matmul %3, %4 : (tensor<1x7x8xf32>, tensor<8x2xf32>) -> tensor<1x7x2xf32>
    func.return %5 : tensor<1x7x2xf32>
  }
}
