// RUN: nimble-opt %s --split-input-file -p 'place-devices{default=opencl}' | filecheck %s --check-prefix=NOHALF
// RUN: nimble-opt %s --split-input-file -p 'place-devices{default=opencl half=true}' | filecheck %s --check-prefix=HALF

// A group of f16 values stays on the CPU unless the device computes on halves (OpenCL's
// cl_khr_fp16, which nimble.compile asks the device for): its kernel would not build there.

// NOHALF-LABEL: func.func @halves
// NOHALF-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?x8xf16>) -> tensor<?x8xf16> {
// NOHALF-NEXT: %[[T:[A-Za-z0-9_$.-]+]] = graph.fused (%[[X_1:[A-Za-z0-9_$.-]+]] = %[[X]]) : (tensor<?x8xf16>) -> tensor<?x8xf16> {
// NOHALF-NEXT: %[[T_1:[A-Za-z0-9_$.-]+]] = graph.tanh %[[X_1]] : tensor<?x8xf16> -> tensor<?x8xf16>
// NOHALF-NEXT: graph.yield %[[T_1]] : tensor<?x8xf16>
// NOHALF-NEXT: } attributes {nimble.fallback = "f16 or bf16 values: opencl device without half arithmetic", device.placement = "cpu"}
// NOHALF-NEXT: func.return %[[T]] : tensor<?x8xf16>

// HALF-LABEL: func.func @halves
// HALF-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?x8xf16>) -> tensor<?x8xf16> {
// HALF-NEXT: %[[IN:[A-Za-z0-9_$.-]+]] = device.copy %[[X]] from "cpu" to "opencl" : tensor<?x8xf16> -> tensor<?x8xf16>
// HALF-NEXT: %[[T:[A-Za-z0-9_$.-]+]] = graph.fused (%[[X_1:[A-Za-z0-9_$.-]+]] = %[[IN]]) : (tensor<?x8xf16>) -> tensor<?x8xf16> {
// HALF-NEXT: %[[T_1:[A-Za-z0-9_$.-]+]] = graph.tanh %[[X_1]] : tensor<?x8xf16> -> tensor<?x8xf16>
// HALF-NEXT: graph.yield %[[T_1]] : tensor<?x8xf16>
// HALF-NEXT: } attributes {device.placement = "opencl"}
// HALF-NEXT: %[[OUT:[A-Za-z0-9_$.-]+]] = device.copy %[[T]] from "opencl" to "cpu" : tensor<?x8xf16> -> tensor<?x8xf16>
// HALF-NEXT: func.return %[[OUT]] : tensor<?x8xf16>
func.func @halves(%x: tensor<?x8xf16>) -> tensor<?x8xf16> {
  %t = graph.tanh %x : tensor<?x8xf16> -> tensor<?x8xf16>
  func.return %t : tensor<?x8xf16>
}
