// A hexadecimal element of a dense float literal is the value's bits, as in MLIR (whose
// printer, like xdsl's, writes inf and NaN that way): it prints back as it was written.
// RUN: nimble-opt %s --split-input-file | filecheck %s
// RUN: nimble-opt %s --split-input-file --print-op-generic | nimble-opt --split-input-file | filecheck %s
// RUN: sed -e 's/0x7FC00000, 2.5/0x17FC00000, 2.5/' %s | not nimble-opt --split-input-file 2>&1 | filecheck %s --check-prefix=RANGE

// CHECK-LABEL: func.func @splat_of_minus_infinity
// CHECK-NEXT: %[[M:[A-Za-z0-9_$.-]+]] = arith.constant dense<0xff800000> : vector<16xf32>
// CHECK-NEXT: func.return %[[M]] : vector<16xf32>
func.func @splat_of_minus_infinity() -> vector<16xf32> {
  %m = arith.constant dense<0xFF800000> : vector<16xf32>
  func.return %m : vector<16xf32>
}

// -----

// CHECK-LABEL: func.func @nan_among_decimals
// CHECK-NEXT: %[[V:[A-Za-z0-9_$.-]+]] = arith.constant dense<[0x7fc00000, 2.500000e+00]> : tensor<2xf32>
// CHECK-NEXT: %[[W:[A-Za-z0-9_$.-]+]] = arith.constant dense<0x7ff0000000000000> : tensor<3xf64>
// CHECK-NEXT: %[[I:[A-Za-z0-9_$.-]+]] = arith.constant dense<255> : tensor<2xi32>
func.func @nan_among_decimals() -> (tensor<2xf32>, tensor<3xf64>, tensor<2xi32>) {
  %v = arith.constant dense<[0x7FC00000, 2.5]> : tensor<2xf32>
  %w = arith.constant dense<0x7FF0000000000000> : tensor<3xf64>
  %i = arith.constant dense<0xFF> : tensor<2xi32>
  func.return %v, %w, %i : tensor<2xf32>, tensor<3xf64>, tensor<2xi32>
}

// RANGE: error: hexadecimal float constant out of range for type
// RANGE-NOT: Traceback
