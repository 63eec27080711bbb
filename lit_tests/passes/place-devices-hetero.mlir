// RUN: nimble-opt %s --split-input-file -p 'place-devices{default=opencl min_work=100000}' | filecheck %s

// CHECK-LABEL: func.func @small_groups
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?x64xf32>, %[[H:[A-Za-z0-9_$.-]+]]: tensor<?x64xf32>, %[[W:[A-Za-z0-9_$.-]+]]: tensor<256x128xf32>, %[[B:[A-Za-z0-9_$.-]+]]: tensor<256xf32>) -> tensor<?x256xf32> {
// CHECK-NEXT: %[[V0:[A-Za-z0-9_$.-]+]] = device.copy %[[B]] from "cpu" to "opencl" : tensor<256xf32> -> tensor<256xf32>
// CHECK-NEXT: %[[V1:[A-Za-z0-9_$.-]+]] = device.copy %[[W]] from "cpu" to "opencl" : tensor<256x128xf32> -> tensor<256x128xf32>
// CHECK-NEXT: %[[V2:[A-Za-z0-9_$.-]+]] = device.copy %[[H]] from "cpu" to "opencl" : tensor<?x64xf32> -> tensor<?x64xf32>
// CHECK-NEXT: %[[V3:[A-Za-z0-9_$.-]+]] = device.copy %[[X]] from "cpu" to "opencl" : tensor<?x64xf32> -> tensor<?x64xf32>
// CHECK-NEXT: %[[XH:[A-Za-z0-9_$.-]+]] = graph.fused (%[[X_1:[A-Za-z0-9_$.-]+]] = %[[V3]], %[[H_1:[A-Za-z0-9_$.-]+]] = %[[V2]]) : (tensor<?x64xf32>, tensor<?x64xf32>) -> tensor<?x128xf32> {
// CHECK-NEXT: %[[XH_1:[A-Za-z0-9_$.-]+]] = graph.concat %[[X_1]], %[[H_1]] {axis = 1 : i64} : (tensor<?x64xf32>, tensor<?x64xf32>) -> tensor<?x128xf32>
// CHECK-NEXT: graph.yield %[[XH_1]] : tensor<?x128xf32>
// CHECK-NEXT: } attributes {device.placement = "opencl"}
// CHECK-NEXT: %[[G:[A-Za-z0-9_$.-]+]] = graph.fused (%[[XH_1]] = %[[XH]], %[[W_1:[A-Za-z0-9_$.-]+]] = %[[V1]], %[[B_1:[A-Za-z0-9_$.-]+]] = %[[V0]]) : (tensor<?x128xf32>, tensor<256x128xf32>, tensor<256xf32>) -> tensor<?x256xf32> {
// CHECK-NEXT: %[[G_1:[A-Za-z0-9_$.-]+]] = graph.dense %[[XH_1]], %[[W_1]], %[[B_1]] : (tensor<?x128xf32>, tensor<256x128xf32>, tensor<256xf32>) -> tensor<?x256xf32>
// CHECK-NEXT: graph.yield %[[G_1]] : tensor<?x256xf32>
// CHECK-NEXT: } attributes {device.placement = "opencl"}
// CHECK-NEXT: %[[V4:[A-Za-z0-9_$.-]+]] = device.copy %[[G]] from "opencl" to "cpu" : tensor<?x256xf32> -> tensor<?x256xf32>
// CHECK-NEXT: %[[R:[A-Za-z0-9_$.-]+]] = graph.fused (%[[G_1]] = %[[V4]]) : (tensor<?x256xf32>) -> tensor<?x256xf32> {
// CHECK-NEXT: %[[R_1:[A-Za-z0-9_$.-]+]] = graph.relu %[[G_1]] : tensor<?x256xf32> -> tensor<?x256xf32>
// CHECK-NEXT: graph.yield %[[R_1]] : tensor<?x256xf32>
// CHECK-NEXT: } attributes {nimble.fallback = "estimated work 16384 below 100000", device.placement = "cpu"}
// CHECK-NEXT: %[[E:[A-Za-z0-9_$.-]+]] = graph.fused (%[[R_1]] = %[[R]]) : (tensor<?x256xf32>) -> tensor<?x256xf32> {
// CHECK-NEXT: %[[E_1:[A-Za-z0-9_$.-]+]] = graph.exp %[[R_1]] : tensor<?x256xf32> -> tensor<?x256xf32>
// CHECK-NEXT: graph.yield %[[E_1]] : tensor<?x256xf32>
// CHECK-NEXT: } attributes {nimble.fallback = "estimated work 16384 below 100000", device.placement = "cpu"}
// CHECK-NEXT: func.return %[[E]] : tensor<?x256xf32>
// CHECK-NEXT: }

// Under the work threshold a small group stays on the CPU unless every use of its
// result is a kernel on the device: the concat follows the dense onto the device (no
// copy between them); relu and exp (small, their results end on the host) stay, and
// the dense's result is copied to them once.
func.func @small_groups(%x: tensor<?x64xf32>, %h: tensor<?x64xf32>, %w: tensor<256x128xf32>, %b: tensor<256xf32>) -> tensor<?x256xf32> {
  %xh = graph.concat %x, %h {axis = 1 : i64} : (tensor<?x64xf32>, tensor<?x64xf32>) -> tensor<?x128xf32>
  %g = graph.dense %xh, %w, %b : (tensor<?x128xf32>, tensor<256x128xf32>, tensor<256xf32>) -> tensor<?x256xf32>
  %r = graph.relu %g : tensor<?x256xf32> -> tensor<?x256xf32>
  %e = graph.exp %r : tensor<?x256xf32> -> tensor<?x256xf32>
  func.return %e : tensor<?x256xf32>
}
