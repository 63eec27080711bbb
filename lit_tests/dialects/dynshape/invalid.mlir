// RUN: nimble-opt %s --split-input-file --verify-diagnostics

func.func @dim_index(%x: tensor<?x4xf32>) {
  // expected-error @+1 {{'dynshape.dim' op index 2 out of range for rank 2}}
  %d = dynshape.dim %x, 2 : tensor<?x4xf32>
  func.return
}

// -----

func.func @of_rank(%x: tensor<?x4xf32>) {
  // expected-error @+1 {{'dynshape.of' op result rank 3 != source rank 2}}
  %s = dynshape.of %x : tensor<?x4xf32> -> !dynshape.shape<3>
  func.return
}

// -----

func.func @from_dims_rank(%n: index) {
  // expected-error @+1 {{'dynshape.from_dims' op 1 dims do not make a !dynshape.shape<2>}}
  %s = dynshape.from_dims %n : !dynshape.shape<2>
  func.return
}

// -----

func.func @get_index(%s: !dynshape.shape<2>) {
  // expected-error @+1 {{'dynshape.get' op index -1 out of range for rank 2}}
  %d = dynshape.get %s, -1 : !dynshape.shape<2>
  func.return
}

// -----

func.func @broadcast_rank(%a: !dynshape.shape<2>, %b: !dynshape.shape<1>) {
  // expected-error @+1 {{'dynshape.broadcast' op result rank must be 2, the larger operand rank}}
  %s = dynshape.broadcast %a, %b : !dynshape.shape<2>, !dynshape.shape<1> -> !dynshape.shape<1>
  func.return
}

// -----

func.func @assert_message(%c: i1) {
  // expected-error @+1 {{'dynshape.assert' op needs a non-empty message}}
  dynshape.assert %c, ""
  func.return
}

// -----

func.func @bind_rank(%x: tensor<?x4xf32>, %s: !dynshape.shape<1>) {
  // expected-error @+1 {{'dynshape.bind' op binds a !dynshape.shape<1> to a tensor of rank 2}}
  dynshape.bind %x, %s : tensor<?x4xf32>, !dynshape.shape<1>
  func.return
}
