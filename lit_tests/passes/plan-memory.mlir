// RUN: nimble-opt %s --split-input-file -p plan-memory | filecheck %s

// CHECK-LABEL: func.func @static_arena
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<4x8xf32>) -> tensor<4x8xf32> attributes {device.memory_plan = {static_naive = 640 : i64, static_planned = 512 : i64, dynamic_naive = 0 : i64, dynamic_planned = 0 : i64, killed = 1 : i64}} {
// CHECK-NEXT: %[[C0:[A-Za-z0-9_$.-]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[C128:[A-Za-z0-9_$.-]+]] = arith.constant 128 : index
// CHECK-NEXT: %[[C256:[A-Za-z0-9_$.-]+]] = arith.constant 256 : index
// CHECK-NEXT: %[[V0:[A-Za-z0-9_$.-]+]] = arith.constant 384 : index
// CHECK-NEXT: %[[V1:[A-Za-z0-9_$.-]+]] = device.alloc_storage %[[V0]] align 64 on "cpu"
// CHECK-NEXT: %[[V2:[A-Za-z0-9_$.-]+]] = arith.constant 256 : index
// CHECK-NEXT: %[[T1:[A-Za-z0-9_$.-]+]] = device.alloc_tensor %[[V1]][%[[V2]]] () : tensor<4x8xf32>
// CHECK-NEXT: device.launch @k(%[[X]]) outs(%[[T1]]) on "cpu" : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %[[V3:[A-Za-z0-9_$.-]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[T2:[A-Za-z0-9_$.-]+]] = device.alloc_tensor %[[V1]][%[[V3]]] () : tensor<8x8xf32>
// CHECK-NEXT: device.launch @k(%[[T1]]) outs(%[[T2]]) on "cpu" : (tensor<4x8xf32>) -> tensor<8x8xf32>
// CHECK-NEXT: %[[V4:[A-Za-z0-9_$.-]+]] = arith.constant 256 : index
// CHECK-NEXT: %[[T3:[A-Za-z0-9_$.-]+]] = device.alloc_tensor %[[V1]][%[[V4]]] () : tensor<4x8xf32>
// CHECK-NEXT: device.launch @k(%[[T2]]) outs(%[[T3]]) on "cpu" : (tensor<8x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %[[S4:[A-Za-z0-9_$.-]+]] = device.alloc_storage %[[C128]] align 64 on "cpu"
// CHECK-NEXT: %[[T4:[A-Za-z0-9_$.-]+]] = device.alloc_tensor %[[S4]][%[[C0]]] () : tensor<4x8xf32>
// CHECK-NEXT: device.launch @k(%[[T3]]) outs(%[[T4]]) on "cpu" : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: device.kill %[[V1]] : !device.storage
// CHECK-NEXT: func.return %[[T4]] : tensor<4x8xf32>
// CHECK-NEXT: }

func.func @static_arena(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %c0 = arith.constant 0 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  %s1 = device.alloc_storage %c128 align 64 on "cpu"
  %t1 = device.alloc_tensor %s1[%c0] () : tensor<4x8xf32>
  device.launch @k(%x) outs(%t1) on "cpu" : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %s2 = device.alloc_storage %c256 align 64 on "cpu"
  %t2 = device.alloc_tensor %s2[%c0] () : tensor<8x8xf32>
  device.launch @k(%t1) outs(%t2) on "cpu" : (tensor<4x8xf32>) -> tensor<8x8xf32>
  %s3 = device.alloc_storage %c128 align 64 on "cpu"
  %t3 = device.alloc_tensor %s3[%c0] () : tensor<4x8xf32>
  device.launch @k(%t2) outs(%t3) on "cpu" : (tensor<8x8xf32>) -> tensor<4x8xf32>
  %s4 = device.alloc_storage %c128 align 64 on "cpu"
  %t4 = device.alloc_tensor %s4[%c0] () : tensor<4x8xf32>
  device.launch @k(%t3) outs(%t4) on "cpu" : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %t4 : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @dynamic_sharing
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?x8xf32>, %[[N:[A-Za-z0-9_$.-]+]]: index) -> tensor<?x8xf32> attributes {device.memory_plan = {static_naive = 0 : i64, static_planned = 0 : i64, dynamic_naive = 4 : i64, dynamic_planned = 3 : i64, killed = 2 : i64}} {
// CHECK-NEXT: %[[C0:[A-Za-z0-9_$.-]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[C32:[A-Za-z0-9_$.-]+]] = arith.constant 32 : index
// CHECK-NEXT: %[[BYTES:[A-Za-z0-9_$.-]+]] = arith.muli %[[N]], %[[C32]] : index
// CHECK-NEXT: %[[S1:[A-Za-z0-9_$.-]+]] = device.alloc_storage %[[BYTES]] align 64 on "cpu"
// CHECK-NEXT: %[[T1:[A-Za-z0-9_$.-]+]] = device.alloc_tensor %[[S1]][%[[C0]]] (%[[N]]) : tensor<?x8xf32>
// CHECK-NEXT: device.launch @k(%[[X]]) outs(%[[T1]]) on "cpu" : (tensor<?x8xf32>) -> tensor<?x8xf32>
// CHECK-NEXT: %[[S2:[A-Za-z0-9_$.-]+]] = device.alloc_storage %[[BYTES]] align 64 on "cpu"
// CHECK-NEXT: %[[T2:[A-Za-z0-9_$.-]+]] = device.alloc_tensor %[[S2]][%[[C0]]] (%[[N]]) : tensor<?x8xf32>
// CHECK-NEXT: device.launch @k(%[[T1]]) outs(%[[T2]]) on "cpu" : (tensor<?x8xf32>) -> tensor<?x8xf32>
// CHECK-NEXT: %[[T3:[A-Za-z0-9_$.-]+]] = device.alloc_tensor %[[S1]][%[[C0]]] (%[[N]]) : tensor<?x8xf32>
// CHECK-NEXT: device.launch @k(%[[T2]]) outs(%[[T3]]) on "cpu" : (tensor<?x8xf32>) -> tensor<?x8xf32>
// CHECK-NEXT: device.kill %[[S2]] : !device.storage
// CHECK-NEXT: %[[S4:[A-Za-z0-9_$.-]+]] = device.alloc_storage %[[BYTES]] align 64 on "cpu"
// CHECK-NEXT: %[[T4:[A-Za-z0-9_$.-]+]] = device.alloc_tensor %[[S4]][%[[C0]]] (%[[N]]) : tensor<?x8xf32>
// CHECK-NEXT: device.launch @k(%[[T3]]) outs(%[[T4]]) on "cpu" : (tensor<?x8xf32>) -> tensor<?x8xf32>
// CHECK-NEXT: device.kill %[[S1]] : !device.storage
// CHECK-NEXT: func.return %[[T4]] : tensor<?x8xf32>
// CHECK-NEXT: }
func.func @dynamic_sharing(%x: tensor<?x8xf32>, %n: index) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %bytes = arith.muli %n, %c32 : index
  %s1 = device.alloc_storage %bytes align 64 on "cpu"
  %t1 = device.alloc_tensor %s1[%c0] (%n) : tensor<?x8xf32>
  device.launch @k(%x) outs(%t1) on "cpu" : (tensor<?x8xf32>) -> tensor<?x8xf32>
  %s2 = device.alloc_storage %bytes align 64 on "cpu"
  %t2 = device.alloc_tensor %s2[%c0] (%n) : tensor<?x8xf32>
  device.launch @k(%t1) outs(%t2) on "cpu" : (tensor<?x8xf32>) -> tensor<?x8xf32>
  %s3 = device.alloc_storage %bytes align 64 on "cpu"
  %t3 = device.alloc_tensor %s3[%c0] (%n) : tensor<?x8xf32>
  device.launch @k(%t2) outs(%t3) on "cpu" : (tensor<?x8xf32>) -> tensor<?x8xf32>
  %s4 = device.alloc_storage %bytes align 64 on "cpu"
  %t4 = device.alloc_tensor %s4[%c0] (%n) : tensor<?x8xf32>
  device.launch @k(%t3) outs(%t4) on "cpu" : (tensor<?x8xf32>) -> tensor<?x8xf32>
  func.return %t4 : tensor<?x8xf32>
}

// -----

// CHECK-LABEL: func.func @live_through_a_loop
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<4xf32>, %[[N:[A-Za-z0-9_$.-]+]]: index) -> tensor<4xf32> attributes {device.memory_plan = {static_naive = 48 : i64, static_planned = 48 : i64, dynamic_naive = 0 : i64, dynamic_planned = 0 : i64, killed = 1 : i64}} {
// CHECK-NEXT: %[[C0:[A-Za-z0-9_$.-]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[C1:[A-Za-z0-9_$.-]+]] = arith.constant 1 : index
// CHECK-NEXT: %[[C16:[A-Za-z0-9_$.-]+]] = arith.constant 16 : index
// CHECK-NEXT: %[[S1:[A-Za-z0-9_$.-]+]] = device.alloc_storage %[[C16]] align 64 on "cpu"
// CHECK-NEXT: %[[T1:[A-Za-z0-9_$.-]+]] = device.alloc_tensor %[[S1]][%[[C0]]] () : tensor<4xf32>
// CHECK-NEXT: device.launch @k(%[[X]]) outs(%[[T1]]) on "cpu" : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %[[I:[A-Za-z0-9_$.-]+]], %[[Y:[A-Za-z0-9_$.-]+]] = graph.while (%[[I0:[A-Za-z0-9_$.-]+]] = %[[C0]], %[[Y0:[A-Za-z0-9_$.-]+]] = %[[X]]) : (index, tensor<4xf32>) -> (index, tensor<4xf32>) {
// CHECK-NEXT: %[[MORE:[A-Za-z0-9_$.-]+]] = arith.cmpi slt, %[[I0]], %[[N]] : index
// CHECK-NEXT: graph.condition %[[MORE]] : i1
// CHECK-NEXT: } do {
// CHECK-NEXT: ^bb0(%[[I1:[A-Za-z0-9_$.-]+]]: index, %[[Y1:[A-Za-z0-9_$.-]+]]: tensor<4xf32>):
// CHECK-NEXT: %[[S2:[A-Za-z0-9_$.-]+]] = device.alloc_storage %[[C16]] align 64 on "cpu"
// CHECK-NEXT: %[[T2:[A-Za-z0-9_$.-]+]] = device.alloc_tensor %[[S2]][%[[C0]]] () : tensor<4xf32>
// CHECK-NEXT: device.launch @k(%[[Y1]], %[[T1]]) outs(%[[T2]]) on "cpu" : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %[[NEXT:[A-Za-z0-9_$.-]+]] = arith.addi %[[I1]], %[[C1]] : index
// CHECK-NEXT: graph.yield %[[NEXT]], %[[T2]] : index, tensor<4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: device.kill %[[S1]] : !device.storage
// CHECK-NEXT: %[[S3:[A-Za-z0-9_$.-]+]] = device.alloc_storage %[[C16]] align 64 on "cpu"
// CHECK-NEXT: %[[T3:[A-Za-z0-9_$.-]+]] = device.alloc_tensor %[[S3]][%[[C0]]] () : tensor<4xf32>
// CHECK-NEXT: device.launch @k(%[[Y]]) outs(%[[T3]]) on "cpu" : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: func.return %[[T3]] : tensor<4xf32>
// CHECK-NEXT: }
func.func @live_through_a_loop(%x: tensor<4xf32>, %n: index) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %s1 = device.alloc_storage %c16 align 64 on "cpu"
  %t1 = device.alloc_tensor %s1[%c0] () : tensor<4xf32>
  device.launch @k(%x) outs(%t1) on "cpu" : (tensor<4xf32>) -> tensor<4xf32>
  %i, %y = graph.while (%i0 = %c0, %y0 = %x) : (index, tensor<4xf32>) -> (index, tensor<4xf32>) {
    %more = arith.cmpi slt, %i0, %n : index
    graph.condition %more : i1
  } do {
  ^bb0(%i1: index, %y1: tensor<4xf32>):
    %s2 = device.alloc_storage %c16 align 64 on "cpu"
    %t2 = device.alloc_tensor %s2[%c0] () : tensor<4xf32>
    device.launch @k(%y1, %t1) outs(%t2) on "cpu" : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %next = arith.addi %i1, %c1 : index
    graph.yield %next, %t2 : index, tensor<4xf32>
  }
  %s3 = device.alloc_storage %c16 align 64 on "cpu"
  %t3 = device.alloc_tensor %s3[%c0] () : tensor<4xf32>
  device.launch @k(%y) outs(%t3) on "cpu" : (tensor<4xf32>) -> tensor<4xf32>
  func.return %t3 : tensor<4xf32>
}
