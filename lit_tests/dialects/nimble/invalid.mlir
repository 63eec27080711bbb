// RUN: nimble-opt %s --split-input-file --verify-diagnostics

func.func @rank(%x: tensor<?x4xf32, #nimble.dims<[seq]>>) {
  // expected-error @+1 {{'graph.relu' op operand #0: tensor<?x4xf32, #nimble.dims<[seq]>>: #nimble.dims has 1 dims for a shape of rank 2}}
  %y = graph.relu %x : tensor<?x4xf32, #nimble.dims<[seq]>> -> tensor<?x4xf32>
  func.return
}

// -----

func.func @named_static(%x: tensor<?x4xf32>) {
  // expected-error @+1 {{'graph.relu' op result #0: tensor<?x4xf32, #nimble.dims<[seq, seq]>>: dim 1 is 4 in the shape but 'seq' in #nimble.dims}}
  %y = graph.relu %x : tensor<?x4xf32> -> tensor<?x4xf32, #nimble.dims<[seq, seq]>>
  func.return
}

// -----

func.func @other_number(%x: tensor<?x4xf32>) {
  // expected-error @+1 {{'graph.relu' op result #0: tensor<?x4xf32, #nimble.dims<[seq, 5]>>: dim 1 is 4 in the shape but 5 in #nimble.dims}}
  %y = graph.relu %x : tensor<?x4xf32> -> tensor<?x4xf32, #nimble.dims<[seq, 5]>>
  func.return
}

// -----

func.func @no_name(%x: tensor<?x4xf32, #nimble.dims<[?, 4]>>) {
  // expected-error @+1 {{'graph.relu' op operand #0: tensor<?x4xf32, #nimble.dims<[?, 4]>>: #nimble.dims names no dim (leave it out)}}
  %y = graph.relu %x : tensor<?x4xf32, #nimble.dims<[?, 4]>> -> tensor<?x4xf32>
  func.return
}

// -----

// expected-error @+1 {{'floordiv' needs an operand before it}}
func.func @bad_expression(%x: tensor<?xf32, #nimble.dims<[floordiv 2]>>) {
  func.return
}
