// RUN: nimble-opt %s --split-input-file | filecheck %s
// RUN: nimble-opt %s --split-input-file --print-op-generic | nimble-opt --split-input-file | filecheck %s

// CHECK-LABEL: func.func @alloc_and_launch
// CHECK-SAME: (%[[N:[A-Za-z0-9_$.-]+]]: index, %[[X:[A-Za-z0-9_$.-]+]]: tensor<?x64xf32>, %[[W:[A-Za-z0-9_$.-]+]]: tensor<128x64xf32>, %[[C:[A-Za-z0-9_$.-]+]]: i1) {
// CHECK-NEXT: %[[C0:[A-Za-z0-9_$.-]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[S:[A-Za-z0-9_$.-]+]] = device.alloc_storage %[[N]] align 64 on "cpu"
// CHECK-NEXT: %[[H:[A-Za-z0-9_$.-]+]] = device.alloc_tensor %[[S]][%[[C0]]] (%[[N]]) : tensor<?x128xf32>
// CHECK-NEXT: device.launch @k(%[[X]], %[[W]]) outs(%[[H]]) on "cpu" : (tensor<?x64xf32>, tensor<128x64xf32>) -> tensor<?x128xf32>
// CHECK-NEXT: device.launch @k(%[[X]], %[[W]]) outs(%[[H]]) variants [@k_ns] if %[[C]] on "cpu" : (tensor<?x64xf32>, tensor<128x64xf32>) -> tensor<?x128xf32>
// CHECK-NEXT: device.kill %[[S]] : !device.storage
// CHECK-NEXT: func.return
// CHECK-NEXT: }

func.func @alloc_and_launch(%n: index, %x: tensor<?x64xf32>, %w: tensor<128x64xf32>, %c: i1) {
  %c0 = arith.constant 0 : index
  %s = device.alloc_storage %n align 64 on "cpu"
  %h = device.alloc_tensor %s[%c0] (%n) : tensor<?x128xf32>
  device.launch @k(%x, %w) outs(%h) on "cpu" : (tensor<?x64xf32>, tensor<128x64xf32>) -> tensor<?x128xf32>
  device.launch @k(%x, %w) outs(%h) variants [@k_ns] if %c on "cpu" : (tensor<?x64xf32>, tensor<128x64xf32>) -> tensor<?x128xf32>
  device.kill %s : !device.storage
  func.return
}

// -----

// CHECK-LABEL: func.func @copy_between_devices
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?xf32>) -> tensor<?xf32> {
// CHECK-NEXT: %[[Y:[A-Za-z0-9_$.-]+]] = device.copy %[[X]] from "cpu" to "opencl" : tensor<?xf32> -> tensor<?xf32>
// CHECK-NEXT: func.return %[[Y]] : tensor<?xf32>
// CHECK-NEXT: }
func.func @copy_between_devices(%x: tensor<?xf32>) -> tensor<?xf32> {
  %y = device.copy %x from "cpu" to "opencl" : tensor<?xf32> -> tensor<?xf32>
  func.return %y : tensor<?xf32>
}

// -----

// CHECK-LABEL: func.func @view_rows
// CHECK-SAME: (%[[XS:[A-Za-z0-9_$.-]+]]: tensor<?x?x64xf32>, %[[OFFSET:[A-Za-z0-9_$.-]+]]: index, %[[N:[A-Za-z0-9_$.-]+]]: index) -> tensor<?x64xf32> {
// CHECK-NEXT: %[[ROW:[A-Za-z0-9_$.-]+]] = device.view %[[XS]][%[[OFFSET]]] (%[[N]]) : tensor<?x?x64xf32> -> tensor<?x64xf32>
// CHECK-NEXT: func.return %[[ROW]] : tensor<?x64xf32>
// CHECK-NEXT: }
func.func @view_rows(%xs: tensor<?x?x64xf32>, %offset: index, %n: index) -> tensor<?x64xf32> {
  %row = device.view %xs[%offset] (%n) : tensor<?x?x64xf32> -> tensor<?x64xf32>
  func.return %row : tensor<?x64xf32>
}
