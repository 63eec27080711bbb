// RUN: nimble-opt %s --split-input-file -p tile-vectorize,canonicalize,cse | filecheck %s

// CHECK-LABEL: loop.kernel @lanes_and_remainder
// CHECK-SAME: (%[[A:[A-Za-z0-9_$.-]+]]: memref<?x?xf32>, %[[OUT:[A-Za-z0-9_$.-]+]]: memref<?x?xf32>) {
// CHECK-NEXT: %[[C0:[A-Za-z0-9_$.-]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[C1:[A-Za-z0-9_$.-]+]] = arith.constant 1 : index
// CHECK-NEXT: %[[M:[A-Za-z0-9_$.-]+]] = memref.dim %[[A]], %[[C0]] : memref<?x?xf32>
// CHECK-NEXT: %[[N:[A-Za-z0-9_$.-]+]] = memref.dim %[[A]], %[[C1]] : memref<?x?xf32>
// CHECK-NEXT: %[[TWO:[A-Za-z0-9_$.-]+]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT: loop.foreach %[[V0:[A-Za-z0-9_$.-]+]] = %[[C0]] to %[[M]] step %[[C1]] {
// CHECK-NEXT: %[[V1:[A-Za-z0-9_$.-]+]] = arith.constant 16 : index
// CHECK-NEXT: %[[V2:[A-Za-z0-9_$.-]+]] = arith.remsi %[[N]], %[[V1]] : index
// CHECK-NEXT: %[[V3:[A-Za-z0-9_$.-]+]] = arith.subi %[[N]], %[[V2]] : index
// CHECK-NEXT: loop.foreach %[[V4:[A-Za-z0-9_$.-]+]] = %[[C0]] to %[[V3]] step %[[V1]] {
// CHECK-NEXT: %[[V5:[A-Za-z0-9_$.-]+]] = vector.load %[[A]][%[[V0]], %[[V4]]] : memref<?x?xf32>, vector<16xf32>
// CHECK-NEXT: %[[V6:[A-Za-z0-9_$.-]+]] = vector.broadcast %[[TWO]] : f32 to vector<16xf32>
// CHECK-NEXT: %[[V7:[A-Za-z0-9_$.-]+]] = arith.mulf %[[V5]], %[[V6]] : vector<16xf32>
// CHECK-NEXT: vector.store %[[V7]], %[[OUT]][%[[V0]], %[[V4]]] : memref<?x?xf32>, vector<16xf32>
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.foreach %[[V8:[A-Za-z0-9_$.-]+]] = %[[V3]] to %[[N]] step %[[C1]] {
// CHECK-NEXT: %[[X:[A-Za-z0-9_$.-]+]] = memref.load %[[A]][%[[V0]], %[[V8]]] : memref<?x?xf32>
// CHECK-NEXT: %[[Y:[A-Za-z0-9_$.-]+]] = arith.mulf %[[X]], %[[TWO]] : f32
// CHECK-NEXT: memref.store %[[Y]], %[[OUT]][%[[V0]], %[[V8]]] : memref<?x?xf32>
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.return
// CHECK-NEXT: }

loop.kernel @lanes_and_remainder(%a: memref<?x?xf32>, %out: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = memref.dim %a, %c0 : memref<?x?xf32>
  %n = memref.dim %a, %c1 : memref<?x?xf32>
  %two = arith.constant 2.0 : f32
  loop.foreach %i = %c0 to %m step %c1 {
    loop.foreach %j = %c0 to %n step %c1 schedule #loop.schedule<vector = 16> {
      %x = memref.load %a[%i, %j] : memref<?x?xf32>
      %y = arith.mulf %x, %two : f32
      memref.store %y, %out[%i, %j] : memref<?x?xf32>
      loop.yield
    }
    loop.yield
  }
  loop.return
}

// -----

// CHECK-LABEL: loop.kernel @register_tile
// CHECK-SAME: (%[[A:[A-Za-z0-9_$.-]+]]: memref<?x8xf32>, %[[B:[A-Za-z0-9_$.-]+]]: memref<8x?xf32>, %[[OUT:[A-Za-z0-9_$.-]+]]: memref<?x?xf32>) {
// CHECK-NEXT: %[[C0:[A-Za-z0-9_$.-]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[C1:[A-Za-z0-9_$.-]+]] = arith.constant 1 : index
// CHECK-NEXT: %[[C8:[A-Za-z0-9_$.-]+]] = arith.constant 8 : index
// CHECK-NEXT: %[[M:[A-Za-z0-9_$.-]+]] = memref.dim %[[A]], %[[C0]] : memref<?x8xf32>
// CHECK-NEXT: %[[N:[A-Za-z0-9_$.-]+]] = memref.dim %[[B]], %[[C1]] : memref<8x?xf32>
// CHECK-NEXT: %[[ZERO:[A-Za-z0-9_$.-]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V0:[A-Za-z0-9_$.-]+]] = arith.constant 2 : index
// CHECK-NEXT: %[[V1:[A-Za-z0-9_$.-]+]] = arith.remsi %[[M]], %[[V0]] : index
// CHECK-NEXT: %[[V2:[A-Za-z0-9_$.-]+]] = arith.subi %[[M]], %[[V1]] : index
// CHECK-NEXT: loop.foreach %[[V3:[A-Za-z0-9_$.-]+]] = %[[C0]] to %[[V2]] step %[[V0]] {
// CHECK-NEXT: %[[V4:[A-Za-z0-9_$.-]+]] = arith.addi %[[V3]], %[[C1]] : index
// CHECK-NEXT: %[[V5:[A-Za-z0-9_$.-]+]] = arith.constant 16 : index
// CHECK-NEXT: %[[V6:[A-Za-z0-9_$.-]+]] = arith.remsi %[[N]], %[[V5]] : index
// CHECK-NEXT: %[[V7:[A-Za-z0-9_$.-]+]] = arith.subi %[[N]], %[[V6]] : index
// CHECK-NEXT: loop.foreach %[[V8:[A-Za-z0-9_$.-]+]] = %[[C0]] to %[[V7]] step %[[V5]] {
// CHECK-NEXT: %[[V9:[A-Za-z0-9_$.-]+]] = vector.broadcast %[[ZERO]] : f32 to vector<16xf32>
// CHECK-NEXT: %[[V10:[A-Za-z0-9_$.-]+]], %[[V11:[A-Za-z0-9_$.-]+]] = loop.reduce %[[V12:[A-Za-z0-9_$.-]+]] = %[[C0]] to %[[C8]] step %[[C1]] combine(add, add) init(%[[V9]], %[[V9]]) : vector<16xf32>, vector<16xf32> {
// CHECK-NEXT: %[[X:[A-Za-z0-9_$.-]+]] = memref.load %[[A]][%[[V3]], %[[V12]]] : memref<?x8xf32>
// CHECK-NEXT: %[[V13:[A-Za-z0-9_$.-]+]] = vector.load %[[B]][%[[V12]], %[[V8]]] : memref<8x?xf32>, vector<16xf32>
// CHECK-NEXT: %[[V14:[A-Za-z0-9_$.-]+]] = vector.broadcast %[[X]] : f32 to vector<16xf32>
// CHECK-NEXT: %[[V15:[A-Za-z0-9_$.-]+]] = arith.mulf %[[V14]], %[[V13]] : vector<16xf32>
// CHECK-NEXT: %[[X_1:[A-Za-z0-9_$.-]+]] = memref.load %[[A]][%[[V4]], %[[V12]]] : memref<?x8xf32>
// CHECK-NEXT: %[[V16:[A-Za-z0-9_$.-]+]] = vector.broadcast %[[X_1]] : f32 to vector<16xf32>
// CHECK-NEXT: %[[V17:[A-Za-z0-9_$.-]+]] = arith.mulf %[[V16]], %[[V13]] : vector<16xf32>
// CHECK-NEXT: loop.yield %[[V15]], %[[V17]] : vector<16xf32>, vector<16xf32>
// CHECK-NEXT: }
// CHECK-NEXT: vector.store %[[V10]], %[[OUT]][%[[V3]], %[[V8]]] : memref<?x?xf32>, vector<16xf32>
// CHECK-NEXT: vector.store %[[V11]], %[[OUT]][%[[V4]], %[[V8]]] : memref<?x?xf32>, vector<16xf32>
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.foreach %[[V18:[A-Za-z0-9_$.-]+]] = %[[V7]] to %[[N]] step %[[C1]] {
// CHECK-NEXT: %[[V19:[A-Za-z0-9_$.-]+]], %[[V20:[A-Za-z0-9_$.-]+]] = loop.reduce %[[V21:[A-Za-z0-9_$.-]+]] = %[[C0]] to %[[C8]] step %[[C1]] combine(add, add) init(%[[ZERO]], %[[ZERO]]) : f32, f32 {
// CHECK-NEXT: %[[X_2:[A-Za-z0-9_$.-]+]] = memref.load %[[A]][%[[V3]], %[[V21]]] : memref<?x8xf32>
// CHECK-NEXT: %[[Y:[A-Za-z0-9_$.-]+]] = memref.load %[[B]][%[[V21]], %[[V18]]] : memref<8x?xf32>
// CHECK-NEXT: %[[P:[A-Za-z0-9_$.-]+]] = arith.mulf %[[X_2]], %[[Y]] : f32
// CHECK-NEXT: %[[X_3:[A-Za-z0-9_$.-]+]] = memref.load %[[A]][%[[V4]], %[[V21]]] : memref<?x8xf32>
// CHECK-NEXT: %[[P_1:[A-Za-z0-9_$.-]+]] = arith.mulf %[[X_3]], %[[Y]] : f32
// CHECK-NEXT: loop.yield %[[P]], %[[P_1]] : f32, f32
// CHECK-NEXT: }
// CHECK-NEXT: memref.store %[[V19]], %[[OUT]][%[[V3]], %[[V18]]] : memref<?x?xf32>
// CHECK-NEXT: memref.store %[[V20]], %[[OUT]][%[[V4]], %[[V18]]] : memref<?x?xf32>
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.foreach %[[V22:[A-Za-z0-9_$.-]+]] = %[[V2]] to %[[M]] step %[[C1]] {
// CHECK-NEXT: %[[V23:[A-Za-z0-9_$.-]+]] = arith.constant 16 : index
// CHECK-NEXT: %[[V24:[A-Za-z0-9_$.-]+]] = arith.remsi %[[N]], %[[V23]] : index
// CHECK-NEXT: %[[V25:[A-Za-z0-9_$.-]+]] = arith.subi %[[N]], %[[V24]] : index
// CHECK-NEXT: loop.foreach %[[V26:[A-Za-z0-9_$.-]+]] = %[[C0]] to %[[V25]] step %[[V23]] {
// CHECK-NEXT: %[[V27:[A-Za-z0-9_$.-]+]] = vector.broadcast %[[ZERO]] : f32 to vector<16xf32>
// CHECK-NEXT: %[[V28:[A-Za-z0-9_$.-]+]] = loop.reduce %[[V29:[A-Za-z0-9_$.-]+]] = %[[C0]] to %[[C8]] step %[[C1]] combine(add) init(%[[V27]]) : vector<16xf32> {
// CHECK-NEXT: %[[X_4:[A-Za-z0-9_$.-]+]] = memref.load %[[A]][%[[V22]], %[[V29]]] : memref<?x8xf32>
// CHECK-NEXT: %[[V30:[A-Za-z0-9_$.-]+]] = vector.load %[[B]][%[[V29]], %[[V26]]] : memref<8x?xf32>, vector<16xf32>
// CHECK-NEXT: %[[V31:[A-Za-z0-9_$.-]+]] = vector.broadcast %[[X_4]] : f32 to vector<16xf32>
// CHECK-NEXT: %[[V32:[A-Za-z0-9_$.-]+]] = arith.mulf %[[V31]], %[[V30]] : vector<16xf32>
// CHECK-NEXT: loop.yield %[[V32]] : vector<16xf32>
// CHECK-NEXT: }
// CHECK-NEXT: vector.store %[[V28]], %[[OUT]][%[[V22]], %[[V26]]] : memref<?x?xf32>, vector<16xf32>
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.foreach %[[V33:[A-Za-z0-9_$.-]+]] = %[[V25]] to %[[N]] step %[[C1]] {
// CHECK-NEXT: %[[V34:[A-Za-z0-9_$.-]+]] = loop.reduce %[[V35:[A-Za-z0-9_$.-]+]] = %[[C0]] to %[[C8]] step %[[C1]] combine(add) init(%[[ZERO]]) : f32 {
// CHECK-NEXT: %[[X_5:[A-Za-z0-9_$.-]+]] = memref.load %[[A]][%[[V22]], %[[V35]]] : memref<?x8xf32>
// CHECK-NEXT: %[[Y_1:[A-Za-z0-9_$.-]+]] = memref.load %[[B]][%[[V35]], %[[V33]]] : memref<8x?xf32>
// CHECK-NEXT: %[[P_2:[A-Za-z0-9_$.-]+]] = arith.mulf %[[X_5]], %[[Y_1]] : f32
// CHECK-NEXT: loop.yield %[[P_2]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: memref.store %[[V34]], %[[OUT]][%[[V22]], %[[V33]]] : memref<?x?xf32>
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.return
// CHECK-NEXT: }

loop.kernel @register_tile(%a: memref<?x8xf32>, %b: memref<8x?xf32>, %out: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %m = memref.dim %a, %c0 : memref<?x8xf32>
  %n = memref.dim %b, %c1 : memref<8x?xf32>
  %zero = arith.constant 0.0 : f32
  loop.foreach %i = %c0 to %m step %c1 schedule #loop.schedule<unroll = 2> {
    loop.foreach %j = %c0 to %n step %c1 schedule #loop.schedule<vector = 16> {
      %s = loop.reduce %k = %c0 to %c8 step %c1 combine(add) init(%zero) : f32 {
        %x = memref.load %a[%i, %k] : memref<?x8xf32>
        %y = memref.load %b[%k, %j] : memref<8x?xf32>
        %p = arith.mulf %x, %y : f32
        loop.yield %p : f32
      }
      memref.store %s, %out[%i, %j] : memref<?x?xf32>
      loop.yield
    }
    loop.yield
  }
  loop.return
}

// -----

// CHECK-LABEL: loop.kernel @dot_products
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: memref<?x70xf32>, %[[W:[A-Za-z0-9_$.-]+]]: memref<?x70xf32>, %[[OUT:[A-Za-z0-9_$.-]+]]: memref<?xf32>) {
// CHECK-NEXT: %[[C0:[A-Za-z0-9_$.-]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[C70:[A-Za-z0-9_$.-]+]] = arith.constant 70 : index
// CHECK-NEXT: %[[N:[A-Za-z0-9_$.-]+]] = memref.dim %[[W]], %[[C0]] : memref<?x70xf32>
// CHECK-NEXT: %[[ZERO:[A-Za-z0-9_$.-]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V0:[A-Za-z0-9_$.-]+]] = arith.constant 2 : index
// CHECK-NEXT: %[[V1:[A-Za-z0-9_$.-]+]] = arith.remsi %[[N]], %[[V0]] : index
// CHECK-NEXT: %[[V2:[A-Za-z0-9_$.-]+]] = arith.subi %[[N]], %[[V1]] : index
// CHECK-NEXT: loop.foreach %[[V3:[A-Za-z0-9_$.-]+]] = %[[C0]] to %[[V2]] step %[[V0]] {
// CHECK-NEXT: %[[V4:[A-Za-z0-9_$.-]+]] = arith.constant 1 : index
// CHECK-NEXT: %[[V5:[A-Za-z0-9_$.-]+]] = arith.addi %[[V3]], %[[V4]] : index
// CHECK-NEXT: %[[V6:[A-Za-z0-9_$.-]+]] = arith.constant 64 : index
// CHECK-NEXT: %[[V7:[A-Za-z0-9_$.-]+]] = arith.constant 16 : index
// CHECK-NEXT: %[[V8:[A-Za-z0-9_$.-]+]] = arith.constant dense<0.000000e+00> : vector<16xf32>
// CHECK-NEXT: %[[V9:[A-Za-z0-9_$.-]+]], %[[V10:[A-Za-z0-9_$.-]+]] = loop.reduce %[[V11:[A-Za-z0-9_$.-]+]] = %[[C0]] to %[[V6]] step %[[V7]] combine(add, add) init(%[[V8]], %[[V8]]) : vector<16xf32>, vector<16xf32> {
// CHECK-NEXT: %[[V12:[A-Za-z0-9_$.-]+]] = vector.load %[[X]][%[[C0]], %[[V11]]] : memref<?x70xf32>, vector<16xf32>
// CHECK-NEXT: %[[V13:[A-Za-z0-9_$.-]+]] = vector.load %[[W]][%[[V3]], %[[V11]]] : memref<?x70xf32>, vector<16xf32>
// CHECK-NEXT: %[[V14:[A-Za-z0-9_$.-]+]] = arith.mulf %[[V12]], %[[V13]] : vector<16xf32>
// CHECK-NEXT: %[[V15:[A-Za-z0-9_$.-]+]] = vector.load %[[W]][%[[V5]], %[[V11]]] : memref<?x70xf32>, vector<16xf32>
// CHECK-NEXT: %[[V16:[A-Za-z0-9_$.-]+]] = arith.mulf %[[V12]], %[[V15]] : vector<16xf32>
// CHECK-NEXT: loop.yield %[[V14]], %[[V16]] : vector<16xf32>, vector<16xf32>
// CHECK-NEXT: }
// CHECK-NEXT: %[[V17:[A-Za-z0-9_$.-]+]] = vector.reduction <add>, %[[V9]], %[[ZERO]] : vector<16xf32> into f32
// CHECK-NEXT: %[[V18:[A-Za-z0-9_$.-]+]] = vector.reduction <add>, %[[V10]], %[[ZERO]] : vector<16xf32> into f32
// CHECK-NEXT: %[[V19:[A-Za-z0-9_$.-]+]], %[[V20:[A-Za-z0-9_$.-]+]] = loop.reduce %[[V21:[A-Za-z0-9_$.-]+]] = %[[V6]] to %[[C70]] step %[[V4]] combine(add, add) init(%[[V17]], %[[V18]]) : f32, f32 {
// CHECK-NEXT: %[[A:[A-Za-z0-9_$.-]+]] = memref.load %[[X]][%[[C0]], %[[V21]]] : memref<?x70xf32>
// CHECK-NEXT: %[[B:[A-Za-z0-9_$.-]+]] = memref.load %[[W]][%[[V3]], %[[V21]]] : memref<?x70xf32>
// CHECK-NEXT: %[[P:[A-Za-z0-9_$.-]+]] = arith.mulf %[[A]], %[[B]] : f32
// CHECK-NEXT: %[[B_1:[A-Za-z0-9_$.-]+]] = memref.load %[[W]][%[[V5]], %[[V21]]] : memref<?x70xf32>
// CHECK-NEXT: %[[P_1:[A-Za-z0-9_$.-]+]] = arith.mulf %[[A]], %[[B_1]] : f32
// CHECK-NEXT: loop.yield %[[P]], %[[P_1]] : f32, f32
// CHECK-NEXT: }
// CHECK-NEXT: memref.store %[[V19]], %[[OUT]][%[[V3]]] : memref<?xf32>
// CHECK-NEXT: memref.store %[[V20]], %[[OUT]][%[[V5]]] : memref<?xf32>
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[V22:[A-Za-z0-9_$.-]+]] = arith.constant 1 : index
// CHECK-NEXT: loop.foreach %[[V23:[A-Za-z0-9_$.-]+]] = %[[V2]] to %[[N]] step %[[V22]] {
// CHECK-NEXT: %[[V24:[A-Za-z0-9_$.-]+]] = arith.constant 64 : index
// CHECK-NEXT: %[[V25:[A-Za-z0-9_$.-]+]] = arith.constant 16 : index
// CHECK-NEXT: %[[V26:[A-Za-z0-9_$.-]+]] = arith.constant dense<0.000000e+00> : vector<16xf32>
// CHECK-NEXT: %[[V27:[A-Za-z0-9_$.-]+]] = loop.reduce %[[V28:[A-Za-z0-9_$.-]+]] = %[[C0]] to %[[V24]] step %[[V25]] combine(add) init(%[[V26]]) : vector<16xf32> {
// CHECK-NEXT: %[[V29:[A-Za-z0-9_$.-]+]] = vector.load %[[X]][%[[C0]], %[[V28]]] : memref<?x70xf32>, vector<16xf32>
// CHECK-NEXT: %[[V30:[A-Za-z0-9_$.-]+]] = vector.load %[[W]][%[[V23]], %[[V28]]] : memref<?x70xf32>, vector<16xf32>
// CHECK-NEXT: %[[V31:[A-Za-z0-9_$.-]+]] = arith.mulf %[[V29]], %[[V30]] : vector<16xf32>
// CHECK-NEXT: loop.yield %[[V31]] : vector<16xf32>
// CHECK-NEXT: }
// CHECK-NEXT: %[[V32:[A-Za-z0-9_$.-]+]] = vector.reduction <add>, %[[V27]], %[[ZERO]] : vector<16xf32> into f32
// CHECK-NEXT: %[[V33:[A-Za-z0-9_$.-]+]] = loop.reduce %[[V34:[A-Za-z0-9_$.-]+]] = %[[V24]] to %[[C70]] step %[[V22]] combine(add) init(%[[V32]]) : f32 {
// CHECK-NEXT: %[[A_1:[A-Za-z0-9_$.-]+]] = memref.load %[[X]][%[[C0]], %[[V34]]] : memref<?x70xf32>
// CHECK-NEXT: %[[B_2:[A-Za-z0-9_$.-]+]] = memref.load %[[W]][%[[V23]], %[[V34]]] : memref<?x70xf32>
// CHECK-NEXT: %[[P_2:[A-Za-z0-9_$.-]+]] = arith.mulf %[[A_1]], %[[B_2]] : f32
// CHECK-NEXT: loop.yield %[[P_2]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: memref.store %[[V33]], %[[OUT]][%[[V23]]] : memref<?xf32>
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.return
// CHECK-NEXT: }

loop.kernel @dot_products(%x: memref<?x70xf32>, %w: memref<?x70xf32>, %out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c70 = arith.constant 70 : index
  %n = memref.dim %w, %c0 : memref<?x70xf32>
  %zero = arith.constant 0.0 : f32
  loop.foreach %j = %c0 to %n step %c1 schedule #loop.schedule<unroll = 2> {
    %s = loop.reduce %k = %c0 to %c70 step %c1 combine(add) init(%zero) : f32 schedule #loop.schedule<vector = 16> {
      %a = memref.load %x[%c0, %k] : memref<?x70xf32>
      %b = memref.load %w[%j, %k] : memref<?x70xf32>
      %p = arith.mulf %a, %b : f32
      loop.yield %p : f32
    }
    memref.store %s, %out[%j] : memref<?xf32>
    loop.yield
  }
  loop.return
}

// -----

// CHECK-LABEL: loop.kernel @strided_stays_scalar
// CHECK-SAME: (%[[A:[A-Za-z0-9_$.-]+]]: memref<?x?xf32>, %[[OUT:[A-Za-z0-9_$.-]+]]: memref<?x?xf32>) {
// CHECK-NEXT: %[[C0:[A-Za-z0-9_$.-]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[C1:[A-Za-z0-9_$.-]+]] = arith.constant 1 : index
// CHECK-NEXT: %[[M:[A-Za-z0-9_$.-]+]] = memref.dim %[[A]], %[[C0]] : memref<?x?xf32>
// CHECK-NEXT: %[[N:[A-Za-z0-9_$.-]+]] = memref.dim %[[A]], %[[C1]] : memref<?x?xf32>
// CHECK-NEXT: loop.foreach %[[I:[A-Za-z0-9_$.-]+]] = %[[C0]] to %[[M]] step %[[C1]] {
// CHECK-NEXT: loop.foreach %[[J:[A-Za-z0-9_$.-]+]] = %[[C0]] to %[[N]] step %[[C1]] schedule #loop.schedule<vector = 16> {
// CHECK-NEXT: %[[X:[A-Za-z0-9_$.-]+]] = memref.load %[[A]][%[[J]], %[[I]]] : memref<?x?xf32>
// CHECK-NEXT: memref.store %[[X]], %[[OUT]][%[[I]], %[[J]]] : memref<?x?xf32>
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.return
// CHECK-NEXT: }

loop.kernel @strided_stays_scalar(%a: memref<?x?xf32>, %out: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = memref.dim %a, %c0 : memref<?x?xf32>
  %n = memref.dim %a, %c1 : memref<?x?xf32>
  loop.foreach %i = %c0 to %m step %c1 {
    loop.foreach %j = %c0 to %n step %c1 schedule #loop.schedule<vector = 16> {
      %x = memref.load %a[%j, %i] : memref<?x?xf32>
      memref.store %x, %out[%i, %j] : memref<?x?xf32>
      loop.yield
    }
    loop.yield
  }
  loop.return
}

// -----

// A dense layer's weights W[j, k] packed for 16-lane columns: each panel is a transpose,
// copied in 16 x 16 blocks (16 row loads, 4 rounds of 16 shuffles, 16 stores); the
// row tiles then read it along the lanes. K = 32: whole blocks, no element-wise rest.
// CHECK-LABEL: loop.kernel @transposed_panel
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: memref<?x32xf32>, %[[W:[A-Za-z0-9_$.-]+]]: memref<?x32xf32>,
// CHECK: loop.foreach %[[J0:[A-Za-z0-9_$.-]+]] = %{{.*}} to %{{.*}} step %[[C16:[A-Za-z0-9_$.-]+]] {
// CHECK-NEXT: %[[PANEL:[A-Za-z0-9_$.-]+]] = loop.alloc dram (%{{.*}}) : memref<?x16xf32>
// CHECK: loop.foreach %[[K0:[A-Za-z0-9_$.-]+]] = %{{.*}} step %[[C16]] {
// CHECK: loop.foreach %[[C:[A-Za-z0-9_$.-]+]] = %{{.*}} step %[[C16]] {
// CHECK-NEXT: %[[J:[A-Za-z0-9_$.-]+]] = arith.addi %[[J0]], %[[C]] : index
// CHECK-NEXT: %{{.*}} = vector.load %[[W]][%[[J]], %[[K0]]] : memref<?x32xf32>, vector<16xf32>
// CHECK-COUNT-15: vector.load %[[W]]
// CHECK-COUNT-64: vector.shuffle
// CHECK-NEXT: vector.store %{{.*}}, %[[PANEL]][%[[K0]], %[[C]]] : memref<?x16xf32>, vector<16xf32>
// CHECK-COUNT-15: vector.store %{{.*}}, %[[PANEL]]
// CHECK-NOT: memref.load %[[W]]
// CHECK: loop.reduce
// CHECK: vector.load %[[PANEL]]
// With `dots`, leftover columns (n % 16) are dot products along k after the rows, W
// read in place (4 columns per tile, then one):
// CHECK: %[[C4:[A-Za-z0-9_$.-]+]] = arith.constant 4 : index
// CHECK: loop.foreach %[[J4:[A-Za-z0-9_$.-]+]] = %{{.*}} step %[[C4]] {
// CHECK: loop.reduce %[[K:[A-Za-z0-9_$.-]+]] = %{{.*}} to %{{.*}} step %[[C16]] combine(add, add, add, add, add, add, add, add)
// CHECK-COUNT-4: vector.load %[[W]][%{{.*}}, %[[K]]] : memref<?x32xf32>, vector<16xf32>
// CHECK-NOT: vector.load %[[W]]
// CHECK: loop.yield
// CHECK-COUNT-8: vector.reduction <add>
// CHECK: memref.store %{{.*}}, %{{.*}}[%{{.*}}, %[[J4]]]
// CHECK: loop.foreach %[[J:[A-Za-z0-9_$.-]+]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK: vector.load %[[W]][%[[J]], %{{.*}}] : memref<?x32xf32>, vector<16xf32>
// CHECK-NOT: memref.load %[[W]]
// CHECK: loop.return

loop.kernel @transposed_panel(%x: memref<?x32xf32>, %w: memref<?x32xf32>, %out: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %m = memref.dim %x, %c0 : memref<?x32xf32>
  %n = memref.dim %w, %c0 : memref<?x32xf32>
  %zero = arith.constant 0.0 : f32
  loop.foreach %i = %c0 to %m step %c1 schedule #loop.schedule<unroll = 2> {
    loop.foreach %j = %c0 to %n step %c1 schedule #loop.schedule<vector = 16, pack, dots> {
      %s = loop.reduce %k = %c0 to %c32 step %c1 combine(add) init(%zero) : f32 {
        %a = memref.load %x[%i, %k] : memref<?x32xf32>
        %b = memref.load %w[%j, %k] : memref<?x32xf32>
        %p = arith.mulf %a, %b : f32
        loop.yield %p : f32
      }
      memref.store %s, %out[%i, %j] : memref<?x?xf32>
      loop.yield
    }
    loop.yield
  }
  loop.return
}

// -----

// A reduction outside any scheduled nest (a softmax row max hoisted above the loop over
// the row) runs along k in vector accumulators, lanes combined, scalar remainder.
// CHECK-LABEL: loop.kernel @hoisted_reduction
// CHECK-SAME: (%[[A:[A-Za-z0-9_$.-]+]]: memref<?x?xf32>, %[[OUT:[A-Za-z0-9_$.-]+]]: memref<?x?xf32>) {
// CHECK-NEXT: %[[C0:[A-Za-z0-9_$.-]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[C1:[A-Za-z0-9_$.-]+]] = arith.constant 1 : index
// CHECK-NEXT: %[[M:[A-Za-z0-9_$.-]+]] = memref.dim %[[A]], %[[C0]] : memref<?x?xf32>
// CHECK-NEXT: %[[N:[A-Za-z0-9_$.-]+]] = memref.dim %[[A]], %[[C1]] : memref<?x?xf32>
// CHECK-NEXT: %[[LOW:[A-Za-z0-9_$.-]+]] = arith.constant 0xff800000 : f32
// CHECK-NEXT: loop.foreach %[[I:[A-Za-z0-9_$.-]+]] = %[[C0]] to %[[M]] step %[[C1]] {
// CHECK-NEXT: %[[V0:[A-Za-z0-9_$.-]+]] = arith.constant 16 : index
// CHECK-NEXT: %[[V1:[A-Za-z0-9_$.-]+]] = arith.remsi %[[N]], %[[V0]] : index
// CHECK-NEXT: %[[V2:[A-Za-z0-9_$.-]+]] = arith.subi %[[N]], %[[V1]] : index
// CHECK-NEXT: %[[V3:[A-Za-z0-9_$.-]+]] = arith.constant dense<0xff800000> : vector<16xf32>
// CHECK-NEXT: %[[V4:[A-Za-z0-9_$.-]+]] = loop.reduce %[[V5:[A-Za-z0-9_$.-]+]] = %[[C0]] to %[[V2]] step %[[V0]] combine(max) init(%[[V3]]) : vector<16xf32> {
// CHECK-NEXT: %[[V6:[A-Za-z0-9_$.-]+]] = vector.load %[[A]][%[[I]], %[[V5]]] : memref<?x?xf32>, vector<16xf32>
// CHECK-NEXT: loop.yield %[[V6]] : vector<16xf32>
// CHECK-NEXT: }
// CHECK-NEXT: %[[V7:[A-Za-z0-9_$.-]+]] = vector.reduction <maximumf>, %[[V4]], %[[LOW]] : vector<16xf32> into f32
// CHECK-NEXT: %[[TOP:[A-Za-z0-9_$.-]+]] = loop.reduce %[[V8:[A-Za-z0-9_$.-]+]] = %[[V2]] to %[[N]] step %[[C1]] combine(max) init(%[[V7]]) : f32 {
// CHECK-NEXT: %[[X:[A-Za-z0-9_$.-]+]] = memref.load %[[A]][%[[I]], %[[V8]]] : memref<?x?xf32>
// CHECK-NEXT: loop.yield %[[X]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: loop.foreach %[[J:[A-Za-z0-9_$.-]+]] = %[[C0]] to %[[N]] step %[[C1]] {
// CHECK-NEXT: %[[Y:[A-Za-z0-9_$.-]+]] = memref.load %[[A]][%[[I]], %[[J]]] : memref<?x?xf32>
// CHECK-NEXT: %[[D:[A-Za-z0-9_$.-]+]] = arith.subf %[[Y]], %[[TOP]] : f32
// CHECK-NEXT: memref.store %[[D]], %[[OUT]][%[[I]], %[[J]]] : memref<?x?xf32>
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.return
// CHECK-NEXT: }

loop.kernel @hoisted_reduction(%a: memref<?x?xf32>, %out: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = memref.dim %a, %c0 : memref<?x?xf32>
  %n = memref.dim %a, %c1 : memref<?x?xf32>
  %low = arith.constant 0xff800000 : f32
  loop.foreach %i = %c0 to %m step %c1 {
    %top = loop.reduce %k = %c0 to %n step %c1 combine(max) init(%low) : f32 schedule #loop.schedule<vector = 16> {
      %x = memref.load %a[%i, %k] : memref<?x?xf32>
      loop.yield %x : f32
    }
    loop.foreach %j = %c0 to %n step %c1 {
      %y = memref.load %a[%i, %j] : memref<?x?xf32>
      %d = arith.subf %y, %top : f32
      memref.store %d, %out[%i, %j] : memref<?x?xf32>
      loop.yield
    }
    loop.yield
  }
  loop.return
}

// -----

// Lanes reading every other element (a stride-2 convolution window): two overlapping
// vector loads (the second from 15 elements on, so nothing past the last lane is read),
// even elements shuffled out.
// CHECK-LABEL: loop.kernel @stride_two_window
// CHECK-SAME: (%[[A:[A-Za-z0-9_$.-]+]]: memref<?x?xf32>, %[[OUT:[A-Za-z0-9_$.-]+]]: memref<?x?xf32>) {
// CHECK-NEXT: %[[C0:[A-Za-z0-9_$.-]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[C1:[A-Za-z0-9_$.-]+]] = arith.constant 1 : index
// CHECK-NEXT: %[[C2:[A-Za-z0-9_$.-]+]] = arith.constant 2 : index
// CHECK-NEXT: %[[M:[A-Za-z0-9_$.-]+]] = memref.dim %[[OUT]], %[[C0]] : memref<?x?xf32>
// CHECK-NEXT: %[[N:[A-Za-z0-9_$.-]+]] = memref.dim %[[OUT]], %[[C1]] : memref<?x?xf32>
// CHECK-NEXT: loop.foreach %[[V0:[A-Za-z0-9_$.-]+]] = %[[C0]] to %[[M]] step %[[C1]] {
// CHECK-NEXT: %[[V1:[A-Za-z0-9_$.-]+]] = arith.constant 16 : index
// CHECK-NEXT: %[[V2:[A-Za-z0-9_$.-]+]] = arith.remsi %[[N]], %[[V1]] : index
// CHECK-NEXT: %[[V3:[A-Za-z0-9_$.-]+]] = arith.subi %[[N]], %[[V2]] : index
// CHECK-NEXT: loop.foreach %[[V4:[A-Za-z0-9_$.-]+]] = %[[C0]] to %[[V3]] step %[[V1]] {
// CHECK-NEXT: %[[V5:[A-Za-z0-9_$.-]+]] = arith.muli %[[V4]], %[[C2]] : index
// CHECK-NEXT: %[[V6:[A-Za-z0-9_$.-]+]] = arith.addi %[[V5]], %[[C1]] : index
// CHECK-NEXT: %[[V7:[A-Za-z0-9_$.-]+]] = vector.load %[[A]][%[[V0]], %[[V6]]] : memref<?x?xf32>, vector<16xf32>
// CHECK-NEXT: %[[V8:[A-Za-z0-9_$.-]+]] = arith.constant 15 : index
// CHECK-NEXT: %[[V9:[A-Za-z0-9_$.-]+]] = arith.addi %[[V6]], %[[V8]] : index
// CHECK-NEXT: %[[V10:[A-Za-z0-9_$.-]+]] = vector.load %[[A]][%[[V0]], %[[V9]]] : memref<?x?xf32>, vector<16xf32>
// CHECK-NEXT: %[[V11:[A-Za-z0-9_$.-]+]] = vector.shuffle %[[V7]], %[[V10]] [0, 2, 4, 6, 8, 10, 12, 14, 17, 19, 21, 23, 25, 27, 29, 31] : vector<16xf32>, vector<16xf32>
// CHECK-NEXT: vector.store %[[V11]], %[[OUT]][%[[V0]], %[[V4]]] : memref<?x?xf32>, vector<16xf32>
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.foreach %[[V12:[A-Za-z0-9_$.-]+]] = %[[V3]] to %[[N]] step %[[C1]] {
// CHECK-NEXT: %[[TWICE:[A-Za-z0-9_$.-]+]] = arith.muli %[[V12]], %[[C2]] : index
// CHECK-NEXT: %[[AT:[A-Za-z0-9_$.-]+]] = arith.addi %[[TWICE]], %[[C1]] : index
// CHECK-NEXT: %[[X:[A-Za-z0-9_$.-]+]] = memref.load %[[A]][%[[V0]], %[[AT]]] : memref<?x?xf32>
// CHECK-NEXT: memref.store %[[X]], %[[OUT]][%[[V0]], %[[V12]]] : memref<?x?xf32>
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.return
// CHECK-NEXT: }

loop.kernel @stride_two_window(%a: memref<?x?xf32>, %out: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %m = memref.dim %out, %c0 : memref<?x?xf32>
  %n = memref.dim %out, %c1 : memref<?x?xf32>
  loop.foreach %i = %c0 to %m step %c1 {
    loop.foreach %j = %c0 to %n step %c1 schedule #loop.schedule<vector = 16> {
      %twice = arith.muli %j, %c2 : index
      %at = arith.addi %twice, %c1 : index
      %x = memref.load %a[%i, %at] : memref<?x?xf32>
      memref.store %x, %out[%i, %j] : memref<?x?xf32>
      loop.yield
    }
    loop.yield
  }
  loop.return
}

// -----

// A vector schedule with `mask`: the leftover columns are one masked vector step, its
// lanes from vector.create_mask over the count left.

// CHECK-LABEL: loop.kernel @masked_remainder
// CHECK-SAME: (%[[A:[A-Za-z0-9_$.-]+]]: memref<?x?xf32>, %[[OUT:[A-Za-z0-9_$.-]+]]: memref<?x?xf32>) {
// CHECK-NEXT: %[[C0:[A-Za-z0-9_$.-]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[C1:[A-Za-z0-9_$.-]+]] = arith.constant 1 : index
// CHECK-NEXT: %[[M:[A-Za-z0-9_$.-]+]] = memref.dim %[[A]], %[[C0]] : memref<?x?xf32>
// CHECK-NEXT: %[[N:[A-Za-z0-9_$.-]+]] = memref.dim %[[A]], %[[C1]] : memref<?x?xf32>
// CHECK-NEXT: %[[TWO:[A-Za-z0-9_$.-]+]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT: loop.foreach %[[V0:[A-Za-z0-9_$.-]+]] = %[[C0]] to %[[M]] step %[[C1]] {
// CHECK-NEXT: %[[V1:[A-Za-z0-9_$.-]+]] = arith.constant 16 : index
// CHECK-NEXT: %[[V2:[A-Za-z0-9_$.-]+]] = arith.remsi %[[N]], %[[V1]] : index
// CHECK-NEXT: %[[V3:[A-Za-z0-9_$.-]+]] = arith.subi %[[N]], %[[V2]] : index
// CHECK-NEXT: loop.foreach %[[V4:[A-Za-z0-9_$.-]+]] = %[[C0]] to %[[V3]] step %[[V1]] {
// CHECK-NEXT: %[[V5:[A-Za-z0-9_$.-]+]] = vector.load %[[A]][%[[V0]], %[[V4]]] : memref<?x?xf32>, vector<16xf32>
// CHECK-NEXT: %[[V6:[A-Za-z0-9_$.-]+]] = vector.broadcast %[[TWO]] : f32 to vector<16xf32>
// CHECK-NEXT: %[[V7:[A-Za-z0-9_$.-]+]] = arith.mulf %[[V5]], %[[V6]] : vector<16xf32>
// CHECK-NEXT: vector.store %[[V7]], %[[OUT]][%[[V0]], %[[V4]]] : memref<?x?xf32>, vector<16xf32>
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[V8:[A-Za-z0-9_$.-]+]] = arith.subi %[[N]], %[[V3]] : index
// CHECK-NEXT: %[[V9:[A-Za-z0-9_$.-]+]] = arith.ceildivsi %[[V8]], %[[V1]] : index
// CHECK-NEXT: loop.foreach %[[V10:[A-Za-z0-9_$.-]+]] = %[[C0]] to %[[V9]] step %[[C1]] {
// CHECK-NEXT: %[[V11:[A-Za-z0-9_$.-]+]] = vector.create_mask %[[V8]] : vector<16xi1>
// CHECK-NEXT: %[[V12:[A-Za-z0-9_$.-]+]] = arith.constant dense<0.000000e+00> : vector<16xf32>
// CHECK-NEXT: %[[V13:[A-Za-z0-9_$.-]+]] = vector.maskedload %[[A]][%[[V0]], %[[V3]]], %[[V11]], %[[V12]] : memref<?x?xf32>, vector<16xi1>, vector<16xf32> into vector<16xf32>
// CHECK-NEXT: %[[V14:[A-Za-z0-9_$.-]+]] = vector.broadcast %[[TWO]] : f32 to vector<16xf32>
// CHECK-NEXT: %[[V15:[A-Za-z0-9_$.-]+]] = arith.mulf %[[V13]], %[[V14]] : vector<16xf32>
// CHECK-NEXT: vector.maskedstore %[[OUT]][%[[V0]], %[[V3]]], %[[V11]], %[[V15]] : memref<?x?xf32>, vector<16xi1>, vector<16xf32>
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.return
// CHECK-NEXT: }
loop.kernel @masked_remainder(%a: memref<?x?xf32>, %out: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = memref.dim %a, %c0 : memref<?x?xf32>
  %n = memref.dim %a, %c1 : memref<?x?xf32>
  %two = arith.constant 2.0 : f32
  loop.foreach %i = %c0 to %m step %c1 {
    loop.foreach %j = %c0 to %n step %c1 schedule #loop.schedule<vector = 16, mask> {
      %x = memref.load %a[%i, %j] : memref<?x?xf32>
      %y = arith.mulf %x, %two : f32
      memref.store %y, %out[%i, %j] : memref<?x?xf32>
      loop.yield
    }
    loop.yield
  }
  loop.return
}

// -----

// With `dots`, columns left by whole vectors of a register tile over `B[k, j]` are dot
// products along k after all the rows: those columns of B copied first, transposed
// (`[j - first, k]`).

// CHECK-LABEL: loop.kernel @leftover_dot_products
// CHECK-SAME: (%[[A:[A-Za-z0-9_$.-]+]]: memref<?x32xf32>, %[[B:[A-Za-z0-9_$.-]+]]: memref<32x?xf32>,
// CHECK: vector.load %[[B]]
// CHECK: %[[T:[A-Za-z0-9_$.-]+]] = loop.alloc dram : memref<16x32xf32>
// CHECK: loop.foreach %[[K:[A-Za-z0-9_$.-]+]] =
// CHECK-NEXT: loop.foreach %[[C:[A-Za-z0-9_$.-]+]] =
// CHECK-NEXT: %[[J:[A-Za-z0-9_$.-]+]] = arith.addi %[[FIRST:[A-Za-z0-9_$.-]+]], %[[C]] : index
// CHECK-NEXT: %[[V:[A-Za-z0-9_$.-]+]] = memref.load %[[B]][%[[K]], %[[J]]] : memref<32x?xf32>
// CHECK-NEXT: memref.store %[[V]], %[[T]][%[[C]], %[[K]]] : memref<16x32xf32>
// CHECK: loop.reduce %[[K2:[A-Za-z0-9_$.-]+]] = %{{.*}} step %[[C16:[A-Za-z0-9_$.-]+]] combine(add, add, add, add, add, add, add, add)
// CHECK-COUNT-4: vector.load %[[T]][%{{.*}}, %[[K2]]] : memref<16x32xf32>, vector<16xf32>
// CHECK-NOT: %[[B]]
// CHECK: vector.reduction <add>
// CHECK: loop.return

loop.kernel @leftover_dot_products(%a: memref<?x32xf32>, %b: memref<32x?xf32>, %out: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %m = memref.dim %a, %c0 : memref<?x32xf32>
  %n = memref.dim %b, %c1 : memref<32x?xf32>
  %zero = arith.constant 0.0 : f32
  loop.foreach %i = %c0 to %m step %c1 schedule #loop.schedule<unroll = 2> {
    loop.foreach %j = %c0 to %n step %c1 schedule #loop.schedule<vector = 16, dots> {
      %s = loop.reduce %k = %c0 to %c32 step %c1 combine(add) init(%zero) : f32 {
        %x = memref.load %a[%i, %k] : memref<?x32xf32>
        %y = memref.load %b[%k, %j] : memref<32x?xf32>
        %p = arith.mulf %x, %y : f32
        loop.yield %p : f32
      }
      memref.store %s, %out[%i, %j] : memref<?x?xf32>
      loop.yield
    }
    loop.yield
  }
  loop.return
}

// -----

// An epilogue of EPILOGUE_LOOP_OPS ops or more after a register tile's reduction runs as
// a loop over the tile's copies: each copy's accumulator and indices stored to a stack
// slot (`loop.alloc reg`, one row per copy), each trip loading one copy's; a shorter
// one keeps a copy per tile element (@leftover_dot_products above).

// CHECK-LABEL: loop.kernel @epilogue_loop
// CHECK-SAME: (%[[A:[A-Za-z0-9_$.-]+]]: memref<?x32xf32>, %[[B:[A-Za-z0-9_$.-]+]]: memref<32x?xf32>, %[[OUT:[A-Za-z0-9_$.-]+]]: memref<?x?xf32>)
// CHECK: %[[S0:[A-Za-z0-9_$.-]+]], %[[S1:[A-Za-z0-9_$.-]+]], %[[S2:[A-Za-z0-9_$.-]+]], %[[S3:[A-Za-z0-9_$.-]+]] = loop.reduce
// CHECK: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[SUMS:[A-Za-z0-9_$.-]+]] = loop.alloc reg : memref<4x16xf32>
// CHECK-NEXT: %[[ROWS:[A-Za-z0-9_$.-]+]] = loop.alloc reg : memref<4xindex>
// CHECK-NEXT: %[[COLS:[A-Za-z0-9_$.-]+]] = loop.alloc reg : memref<4xindex>
// CHECK-NEXT: vector.store %[[S0]], %[[SUMS]][%{{.*}}, %{{.*}}] : memref<4x16xf32>, vector<16xf32>
// CHECK-COUNT-2: memref.store
// CHECK-NEXT: vector.store %[[S1]], %[[SUMS]]
// CHECK-COUNT-2: memref.store
// CHECK-NEXT: vector.store %[[S2]], %[[SUMS]]
// CHECK-COUNT-2: memref.store
// CHECK: vector.store %[[S3]], %[[SUMS]]
// CHECK-COUNT-2: memref.store
// CHECK: %[[FOUR:[A-Za-z0-9_$.-]+]] = arith.constant 4 : index
// CHECK-NEXT: loop.foreach %[[T:[A-Za-z0-9_$.-]+]] = %{{.*}} to %[[FOUR]] step
// CHECK-NEXT: %[[S:[A-Za-z0-9_$.-]+]] = vector.load %[[SUMS]][%[[T]], %{{.*}}] : memref<4x16xf32>, vector<16xf32>
// CHECK-NEXT: %[[I:[A-Za-z0-9_$.-]+]] = memref.load %[[ROWS]][%[[T]]] : memref<4xindex>
// CHECK-NEXT: %[[J:[A-Za-z0-9_$.-]+]] = memref.load %[[COLS]][%[[T]]] : memref<4xindex>
// CHECK-NEXT: arith.mulf %[[S]], %[[S]] : vector<16xf32>
// CHECK-COUNT-15: arith.
// CHECK-NEXT: vector.store %{{.*}}, %[[OUT]][%[[I]], %[[J]]] : memref<?x?xf32>, vector<16xf32>
// CHECK-NEXT: loop.yield
// CHECK-NOT: arith.maximumf
// CHECK: loop.alloc reg : memref<2x16xf32>

loop.kernel @epilogue_loop(%a: memref<?x32xf32>, %b: memref<32x?xf32>, %out: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %m = memref.dim %a, %c0 : memref<?x32xf32>
  %n = memref.dim %b, %c1 : memref<32x?xf32>
  %zero = arith.constant 0.0 : f32
  %h = arith.constant 0.5 : f32
  loop.foreach %i = %c0 to %m step %c1 schedule #loop.schedule<unroll = 2> {
    loop.foreach %j = %c0 to %n step %c1 schedule #loop.schedule<vector = 16, unroll = 2> {
      %s = loop.reduce %k = %c0 to %c32 step %c1 combine(add) init(%zero) : f32 {
        %x = memref.load %a[%i, %k] : memref<?x32xf32>
        %y = memref.load %b[%k, %j] : memref<32x?xf32>
        %p = arith.mulf %x, %y : f32
        loop.yield %p : f32
      }
      %e1 = arith.mulf %s, %s : f32
      %e2 = arith.mulf %e1, %h : f32
      %e3 = arith.addf %e2, %s : f32
      %e4 = arith.mulf %e3, %e3 : f32
      %e5 = arith.mulf %e4, %h : f32
      %e6 = arith.addf %e5, %e3 : f32
      %e7 = arith.mulf %e6, %e6 : f32
      %e8 = arith.mulf %e7, %h : f32
      %e9 = arith.addf %e8, %e6 : f32
      %e10 = arith.mulf %e9, %e9 : f32
      %e11 = arith.mulf %e10, %h : f32
      %e12 = arith.addf %e11, %e9 : f32
      %e13 = arith.mulf %e12, %e12 : f32
      %e14 = arith.mulf %e13, %h : f32
      %e15 = arith.addf %e14, %e12 : f32
      %e16 = arith.maximumf %e15, %zero : f32
      memref.store %e16, %out[%i, %j] : memref<?x?xf32>
      loop.yield
    }
    loop.yield
  }
  loop.return
}

// -----

// CHECK-LABEL: loop.kernel @masked_row_sum
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: memref<?xf32>, %[[E:[A-Za-z0-9_$.-]+]]: memref<?xf32>, %[[OUT:[A-Za-z0-9_$.-]+]]: memref<f32>) {
// CHECK-NEXT: %[[C0:[A-Za-z0-9_$.-]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[N:[A-Za-z0-9_$.-]+]] = memref.dim %[[X]], %[[C0]] : memref<?xf32>
// CHECK-NEXT: %[[ZERO:[A-Za-z0-9_$.-]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V0:[A-Za-z0-9_$.-]+]] = arith.constant 16 : index
// CHECK-NEXT: %[[V1:[A-Za-z0-9_$.-]+]] = arith.remsi %[[N]], %[[V0]] : index
// CHECK-NEXT: %[[V2:[A-Za-z0-9_$.-]+]] = arith.subi %[[N]], %[[V1]] : index
// CHECK-NEXT: %[[V3:[A-Za-z0-9_$.-]+]] = arith.constant dense<0.000000e+00> : vector<16xf32>
// CHECK-NEXT: %[[V4:[A-Za-z0-9_$.-]+]] = loop.reduce %[[V5:[A-Za-z0-9_$.-]+]] = %[[C0]] to %[[V2]] step %[[V0]] combine(add) init(%[[V3]]) : vector<16xf32> {
// CHECK-NEXT: %[[V6:[A-Za-z0-9_$.-]+]] = vector.load %[[X]][%[[V5]]] : memref<?xf32>, vector<16xf32>
// CHECK-NEXT: %[[V7:[A-Za-z0-9_$.-]+]] = math.exp %[[V6]] : vector<16xf32>
// CHECK-NEXT: vector.store %[[V7]], %[[E]][%[[V5]]] : memref<?xf32>, vector<16xf32>
// CHECK-NEXT: loop.yield %[[V7]] : vector<16xf32>
// CHECK-NEXT: }
// CHECK-NEXT: %[[V8:[A-Za-z0-9_$.-]+]] = loop.reduce %[[V9:[A-Za-z0-9_$.-]+]] = %[[V2]] to %[[N]] step %[[V0]] combine(add) init(%[[V4]]) : vector<16xf32> {
// CHECK-NEXT: %[[V10:[A-Za-z0-9_$.-]+]] = arith.subi %[[N]], %[[V9]] : index
// CHECK-NEXT: %[[V11:[A-Za-z0-9_$.-]+]] = vector.create_mask %[[V10]] : vector<16xi1>
// CHECK-NEXT: %[[V12:[A-Za-z0-9_$.-]+]] = vector.maskedload %[[X]][%[[V9]]], %[[V11]], %[[V3]] : memref<?xf32>, vector<16xi1>, vector<16xf32> into vector<16xf32>
// CHECK-NEXT: %[[V13:[A-Za-z0-9_$.-]+]] = math.exp %[[V12]] : vector<16xf32>
// CHECK-NEXT: vector.maskedstore %[[E]][%[[V9]]], %[[V11]], %[[V13]] : memref<?xf32>, vector<16xi1>, vector<16xf32>
// CHECK-NEXT: %[[V14:[A-Za-z0-9_$.-]+]] = arith.select %[[V11]], %[[V13]], %[[V3]] : vector<16xi1>, vector<16xf32>
// CHECK-NEXT: loop.yield %[[V14]] : vector<16xf32>
// CHECK-NEXT: }
// CHECK-NEXT: %[[S:[A-Za-z0-9_$.-]+]] = vector.reduction <add>, %[[V8]], %[[ZERO]] : vector<16xf32> into f32
// CHECK-NEXT: memref.store %[[S]], %[[OUT]][] : memref<f32>
// CHECK-NEXT: loop.return
// CHECK-NEXT: }
// A row's sum of exps along k in 16 lanes, the steps whole vectors leave (`mask`) as
// one masked vector step (a loop.reduce by 16 that runs once, or not at all), its off
// lanes adding 0; the exps it stores are masked stores.
loop.kernel @masked_row_sum(%x: memref<?xf32>, %e: memref<?xf32>, %out: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  %zero = arith.constant 0.0 : f32
  %s = loop.reduce %k = %c0 to %n step %c1 combine(add) init(%zero) : f32 schedule #loop.schedule<vector = 16, mask> {
    %v = memref.load %x[%k] : memref<?xf32>
    %p = math.exp %v : f32
    memref.store %p, %e[%k] : memref<?xf32>
    loop.yield %p : f32
  }
  memref.store %s, %out[] : memref<f32>
  loop.return
}
