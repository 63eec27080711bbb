// RUN: nimble-opt %s --split-input-file | filecheck %s
// RUN: nimble-opt %s --split-input-file --print-op-generic | nimble-opt --split-input-file | filecheck %s

// CHECK-LABEL: func.func @named
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?x?x768xf32, #nimble.dims<[batch, seq, 768]>>) -> tensor<?x?x768xf32, #nimble.dims<[batch, seq, 768]>> {
// CHECK-NEXT: func.return %[[X]] : tensor<?x?x768xf32, #nimble.dims<[batch, seq, 768]>>
// CHECK-NEXT: }
// Named dims ride in the tensor type's encoding, one expression per dim.
func.func @named(%x: tensor<?x?x768xf32, #nimble.dims<[batch, seq, 768]>>) -> tensor<?x?x768xf32, #nimble.dims<[batch, seq, 768]>> {
  func.return %x : tensor<?x?x768xf32, #nimble.dims<[batch, seq, 768]>>
}

// -----

// CHECK-LABEL: func.func @canonical
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?x?x?xf32, #nimble.dims<[seq * 12, seq, seq floordiv 6]>>) {
// CHECK-NEXT: func.return
// CHECK-NEXT: }
// Expressions print in canonical form: terms sorted, constants folded, floordivs merged.
func.func @canonical(%x: tensor<?x?x?xf32, #nimble.dims<[12 * seq, (seq * 12 + 6) floordiv 12, seq floordiv 2 floordiv 3]>>) {
  func.return
}

// -----

// CHECK-LABEL: func.func @forms
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?x?x?x?x?xf32, #nimble.dims<[seq floordiv 2 + 1, n mod 4, min(a, b), max(a + 1, b) - 1, batch * seq - seq]>>) {
// CHECK-NEXT: func.return
// CHECK-NEXT: }
// The forms the algebra has: + - * floordiv ceildiv mod min max.
func.func @forms(%x: tensor<?x?x?x?x?xf32, #nimble.dims<[(seq + 1) ceildiv 2, n mod 4, min(a, b), max(b, a + 1) - 1, batch * seq - seq]>>) {
  func.return
}

// -----

// CHECK-LABEL: func.func @anonymous
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?x?xf32, #nimble.dims<[?, seq]>>) {
// CHECK-NEXT: func.return
// CHECK-NEXT: }
// `?` is a dim with no name.
func.func @anonymous(%x: tensor<?x?xf32, #nimble.dims<[?, seq]>>) {
  func.return
}
