// RUN: nimble-opt %s --split-input-file --verify-diagnostics

func.func @dim_index(%x: tensor<?x4xf32>) {
  // expected-error @+1 {{'shape.dim' op index 2 out of range for rank 2}}
  %d = shape.dim %x, 2 : tensor<?x4xf32>
  func.return
}

// -----

func.func @of_rank(%x: tensor<?x4xf32>) {
  // expected-error @+1 {{'shape.of' op result rank 3 != source rank 2}}
  %s = shape.of %x : tensor<?x4xf32> -> !shape.shape<3>
  func.return
}

// -----

func.func @from_dims_rank(%n: index) {
  // expected-error @+1 {{'shape.from_dims' op 1 dims do not make a !shape.shape<2>}}
  %s = shape.from_dims %n : !shape.shape<2>
  func.return
}

// -----

func.func @get_index(%s: !shape.shape<2>) {
  // expected-error @+1 {{'shape.get' op index -1 out of range for rank 2}}
  %d = shape.get %s, -1 : !shape.shape<2>
  func.return
}

// -----

func.func @broadcast_rank(%a: !shape.shape<2>, %b: !shape.shape<1>) {
  // expected-error @+1 {{'shape.broadcast' op result rank must be 2, the larger operand rank}}
  %s = shape.broadcast %a, %b : !shape.shape<2>, !shape.shape<1> -> !shape.shape<1>
  func.return
}

// -----

func.func @assert_message(%c: i1) {
  // expected-error @+1 {{'shape.assert' op needs a non-empty message}}
  shape.assert %c, ""
  func.return
}

// -----

func.func @bind_rank(%x: tensor<?x4xf32>, %s: !shape.shape<1>) {
  // expected-error @+1 {{'shape.bind' op binds a !shape.shape<1> to a tensor of rank 2}}
  shape.bind %x, %s : tensor<?x4xf32>, !shape.shape<1>
  func.return
}
