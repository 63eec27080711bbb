// A broadcast size-1 dim read in a transposed copy on SSE4.2 (4 lanes): a 4x4 register transpose of scalars (LLVM: shufflevector of f32).
// compile error: RuntimeError: kernel 'main_reshape_0' failed to compile: TypeError: vector1 needs to be of VectorType.
builtin.module {
  func.func @main(%0: tensor<16x2x6x7xf32>, %1: tensor<5x4x1xf32>) -> tensor<5x4x20xf32> {
    %2 = graph.reshape %1 [-1, 20] : tensor<5x4x1xf32> -> tensor<1x20xf32>
    %3 = graph.sub %2, %1 : (tensor<1x20xf32>, tensor<5x4x1xf32>) -> tensor<5x4x20xf32>
    func.return %3 : tensor<5x4x20xf32>
  }
}
