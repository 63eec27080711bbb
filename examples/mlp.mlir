// A two-layer perceptron over a batch of any size, with a softmax head.
// Run: nimble-interpret examples/mlp.mlir --dynamic-size 5
//      nimble-opt examples/mlp.mlir -p canonicalize,cse
func.func @main(%x: tensor<?x64xf32>, %w1: tensor<128x64xf32>, %b1: tensor<128xf32>,
                %w2: tensor<10x128xf32>, %b2: tensor<10xf32>) -> (tensor<?x10xf32>, tensor<?xi64>) {
  %h = graph.dense %x, %w1, %b1 : (tensor<?x64xf32>, tensor<128x64xf32>, tensor<128xf32>) -> tensor<?x128xf32>
  %one = graph.constant dense<1.0> : tensor<f32>
  %scaled = graph.mul %h, %one : (tensor<?x128xf32>, tensor<f32>) -> tensor<?x128xf32>
  %a = graph.gelu %scaled : tensor<?x128xf32> -> tensor<?x128xf32>
  %t = graph.transpose %a [1, 0] : tensor<?x128xf32> -> tensor<128x?xf32>
  %tt = graph.transpose %t [1, 0] : tensor<128x?xf32> -> tensor<?x128xf32>
  %logits = graph.dense %tt, %w2, %b2 : (tensor<?x128xf32>, tensor<10x128xf32>, tensor<10xf32>) -> tensor<?x10xf32>
  %p = graph.softmax %logits {axis = -1 : i64} : tensor<?x10xf32> -> tensor<?x10xf32>
  %cls = graph.argmax %p {axis = 1 : i64} : tensor<?x10xf32> -> tensor<?xi64>
  func.return %p, %cls : tensor<?x10xf32>, tensor<?xi64>
}
