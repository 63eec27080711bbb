// RUN: not nimble-opt %s --split-input-file -p verify-memory-plan 2>&1 | filecheck %s

// Tensors in storages of their own check; tensors sharing bytes while both are live, or
// used after their storage's kill, do not. (What plan-memory makes of every example and
// fuzzed program checks too: tests/test_verify_memory_plan.py.) The errors come first
// (stderr), then the checked chunk's IR.

// CHECK-LABEL: error: 'device.alloc_tensor' op memory plan: the tensor<4x8xf32> tensor %a allocated at 4 (bytes 0-128, live 4-the block's end) and the tensor<4x8xf32> tensor %b allocated at 6 (bytes 64-192, live 6-the block's end) share memory while both are live

func.func @overlapping(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c256 = arith.constant 256 : index
  %s = device.alloc_storage %c256 align 64 on "cpu"
  %a = device.alloc_tensor %s[%c0] () : tensor<4x8xf32>
  device.launch @k(%x) outs(%a) on "cpu" : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %b = device.alloc_tensor %s[%c64] () : tensor<4x8xf32>
  device.launch @k(%a) outs(%b) on "cpu" : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = graph.add %a, %b : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: error: 'device.alloc_tensor' op memory plan: the tensor<4x8xf32> tensor %c allocated at 2 is used after its storage is killed

func.func @killed(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %c0 = arith.constant 0 : index
  %s = device.alloc_storage %c0 align 64 on "cpu"
  %c = device.alloc_tensor %s[%c0] () : tensor<4x8xf32>
  device.launch @k(%x) outs(%c) on "cpu" : (tensor<4x8xf32>) -> tensor<4x8xf32>
  device.kill %s : !device.storage
  %y = graph.relu %c : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @chain
// CHECK: func.return

func.func @chain(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %c0 = arith.constant 0 : index
  %c128 = arith.constant 128 : index
  %s1 = device.alloc_storage %c128 align 64 on "cpu"
  %t1 = device.alloc_tensor %s1[%c0] () : tensor<4x8xf32>
  device.launch @k(%x) outs(%t1) on "cpu" : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %s2 = device.alloc_storage %c128 align 64 on "cpu"
  %t2 = device.alloc_tensor %s2[%c0] () : tensor<4x8xf32>
  device.launch @k(%t1) outs(%t2) on "cpu" : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %t2 : tensor<4x8xf32>
}
