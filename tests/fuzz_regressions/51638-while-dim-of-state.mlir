// nimble-fuzz-differential --replay 51638-while-dim-of-state.mlir (a recurrence whose step reads a dim of its state: the dim of the state buffer in the kernel; canonicalize read named dims of a memref)
// compile error: IndexError: tuple index out of range
builtin.module {
  func.func @main(%0: tensor<?xf32, #nimble.dims<[n]>>) -> tensor<f32> {
    %1 = arith.constant 0 : index
    %2 = arith.constant 0 : index
    %3, %4 = graph.while (%5 = %2, %6 = %0) : (index, tensor<?xf32, #nimble.dims<[n]>>) -> (index, tensor<?xf32, #nimble.dims<[n]>>) {
      %7 = arith.cmpi slt, %5, %1 : index
      graph.condition %7 : i1
    } do {
    ^bb0(%8: index, %9: tensor<?xf32, #nimble.dims<[n]>>):
      %10 = arith.constant 1 : index
      %11 = arith.addi %8, %10 : index
      %12 = dynshape.dim %9, 0 : tensor<?xf32, #nimble.dims<[n]>>
      %13 = arith.constant 0 : index
      %14 = arith.constant 1 : index
      %15 = graph.arange %13, %12, %14 : tensor<?xf32, #nimble.dims<[n]>>
      graph.yield %11, %15 : index, tensor<?xf32, #nimble.dims<[n]>>
    }
    %16 = graph.reduce_mean %4 {axes = array<i64: 0>} : tensor<?xf32, #nimble.dims<[n]>> -> tensor<f32>
    func.return %16 : tensor<f32>
  }
}
