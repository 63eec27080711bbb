// RUN: nimble-opt %s -p 'spatial-dse{sizes="steps=8","xs=8x1x2","h0=1x4" machine="pcus=8,pmus=16"}' | filecheck %s

// CHECK-LABEL: loop.kernel @rnn
// CHECK-SAME: (%[[XS:[A-Za-z0-9_$.-]+]]: memref<?x?x2xf32>, %[[W:[A-Za-z0-9_$.-]+]]: memref<4x6xf32>, %[[B:[A-Za-z0-9_$.-]+]]: memref<4xf32>, %[[STEPS:[A-Za-z0-9_$.-]+]]: index, %[[H0:[A-Za-z0-9_$.-]+]]: memref<?x4xf32>, %[[H_OUT:[A-Za-z0-9_$.-]+]]: memref<?x4xf32>) attributes {nimble.device = "spatial", nimble.spatial_report = "machine: 8 PCUs (16 lanes x 6 stages), 16 PMUs (256 KiB, 16 banks), 1 GHz, DRAM 49 GB/s\0Asizes: steps=8, xs=8x1x2, h0=1x4, h_out=1x4\0Asearched 24 designs, 2 on the Pareto front\0Achosen: foreach(1) par 1, foreach(4) par 4, reduce(6) par 2, w_sram in SRAM\0Aestimate: 1120 cycles per run (1.12 us at 1 GHz), 510 cycles to load on chip; 2 PCUs, 5 PMUs, SRAM 168 B, DRAM traffic 336 B per run and load; fits\0APareto front (run cycles vs units):\0A          1920 cycles     6 units (2 PCUs, 4 PMUs)  foreach(1) par 1, foreach(4) par 4, reduce(6) par 2, w_sram in DRAM\0A          1120 cycles     7 units (2 PCUs, 5 PMUs)  foreach(1) par 1, foreach(4) par 4, reduce(6) par 2, w_sram in SRAM", nimble.spatial_sizes = "steps=8 xs=8x1x2 h0=1x4", nimble.spatial_machine = "pcus=8,pmus=16"} {
// CHECK-NEXT: %[[V0:[A-Za-z0-9_$.-]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[V1:[A-Za-z0-9_$.-]+]] = arith.constant 1 : index
// CHECK-NEXT: %[[V2:[A-Za-z0-9_$.-]+]] = arith.constant 4 : index
// CHECK-NEXT: %[[V3:[A-Za-z0-9_$.-]+]] = arith.constant 6 : index
// CHECK-NEXT: %[[W_SRAM:[A-Za-z0-9_$.-]+]] = loop.alloc sram : memref<4x6xf32>
// CHECK-NEXT: loop.foreach %[[V4:[A-Za-z0-9_$.-]+]] = %[[V0]] to %[[V2]] step %[[V1]] {
// CHECK-NEXT: loop.foreach %[[V5:[A-Za-z0-9_$.-]+]] = %[[V0]] to %[[V3]] step %[[V1]] schedule #loop.schedule<par = 6> {
// CHECK-NEXT: %[[V6:[A-Za-z0-9_$.-]+]] = memref.load %[[W]][%[[V4]], %[[V5]]] : memref<4x6xf32>
// CHECK-NEXT: memref.store %[[V6]], %[[W_SRAM]][%[[V4]], %[[V5]]] : memref<4x6xf32>
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[B_SRAM:[A-Za-z0-9_$.-]+]] = loop.alloc sram : memref<4xf32>
// CHECK-NEXT: loop.foreach %[[V7:[A-Za-z0-9_$.-]+]] = %[[V0]] to %[[V2]] step %[[V1]] schedule #loop.schedule<par = 4> {
// CHECK-NEXT: %[[V8:[A-Za-z0-9_$.-]+]] = memref.load %[[B]][%[[V7]]] : memref<4xf32>
// CHECK-NEXT: memref.store %[[V8]], %[[B_SRAM]][%[[V7]]] : memref<4xf32>
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[V9:[A-Za-z0-9_$.-]+]] = memref.dim %[[H0]], %[[V0]] : memref<?x4xf32>
// CHECK-NEXT: %[[H0_STATE:[A-Za-z0-9_$.-]+]] = loop.alloc sram (%[[V9]]) : memref<?x4xf32>
// CHECK-NEXT: %[[H0_NEXT:[A-Za-z0-9_$.-]+]] = loop.alloc sram (%[[V9]]) : memref<?x4xf32>
// CHECK-NEXT: loop.foreach %[[V10:[A-Za-z0-9_$.-]+]] = %[[V0]] to %[[V9]] step %[[V1]] {
// CHECK-NEXT: loop.foreach %[[V11:[A-Za-z0-9_$.-]+]] = %[[V0]] to %[[V2]] step %[[V1]] schedule #loop.schedule<par = 4> {
// CHECK-NEXT: %[[V12:[A-Za-z0-9_$.-]+]] = memref.load %[[H0]][%[[V10]], %[[V11]]] : memref<?x4xf32>
// CHECK-NEXT: memref.store %[[V12]], %[[H0_STATE]][%[[V10]], %[[V11]]] : memref<?x4xf32>
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[V13:[A-Za-z0-9_$.-]+]] = arith.constant 2 : index
// CHECK-NEXT: %[[V14:[A-Za-z0-9_$.-]+]] = arith.constant 3 : index
// CHECK-NEXT: scf.for %[[T:[A-Za-z0-9_$.-]+]] = %[[V0]] to %[[STEPS]] step %[[V1]] {
// CHECK-NEXT: %[[V15:[A-Za-z0-9_$.-]+]] = memref.dim %[[XS]], %[[V0]] : memref<?x?x2xf32>
// CHECK-NEXT: %[[V16:[A-Za-z0-9_$.-]+]] = arith.cmpi slt, %[[T]], %[[V0]] : index
// CHECK-NEXT: %[[V17:[A-Za-z0-9_$.-]+]] = arith.addi %[[T]], %[[V15]] : index
// CHECK-NEXT: %[[V18:[A-Za-z0-9_$.-]+]] = arith.select %[[V16]], %[[V17]], %[[T]] : index
// CHECK-NEXT: %[[V19:[A-Za-z0-9_$.-]+]] = arith.maxsi %[[V18]], %[[V0]] : index
// CHECK-NEXT: %[[V20:[A-Za-z0-9_$.-]+]] = arith.minsi %[[V19]], %[[V15]] : index
// CHECK-NEXT: %[[V21:[A-Za-z0-9_$.-]+]] = memref.dim %[[H0_STATE]], %[[V0]] : memref<?x4xf32>
// CHECK-NEXT: %[[XS_STAGE:[A-Za-z0-9_$.-]+]] = loop.alloc sram (%[[V21]]) : memref<?x6xf32>
// CHECK-NEXT: loop.foreach %[[V22:[A-Za-z0-9_$.-]+]] = %[[V0]] to %[[V21]] step %[[V1]] {
// CHECK-NEXT: loop.foreach %[[V23:[A-Za-z0-9_$.-]+]] = %[[V0]] to %[[V3]] step %[[V1]] schedule #loop.schedule<par = 6> {
// CHECK-NEXT: %[[V24:[A-Za-z0-9_$.-]+]] = arith.maxsi %[[V23]], %[[V0]] : index
// CHECK-NEXT: %[[V25:[A-Za-z0-9_$.-]+]] = arith.minsi %[[V24]], %[[V1]] : index
// CHECK-NEXT: %[[V26:[A-Za-z0-9_$.-]+]] = memref.load %[[XS]][%[[V20]], %[[V22]], %[[V25]]] : memref<?x?x2xf32>
// CHECK-NEXT: memref.store %[[V26]], %[[XS_STAGE]][%[[V22]], %[[V23]]] : memref<?x6xf32>
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.foreach %[[V27:[A-Za-z0-9_$.-]+]] = %[[V0]] to %[[V21]] step %[[V1]] schedule #loop.schedule<par = 1, pipeline> {
// CHECK-NEXT: loop.foreach %[[V28:[A-Za-z0-9_$.-]+]] = %[[V0]] to %[[V2]] step %[[V1]] schedule #loop.schedule<par = 4, pipeline> {
// CHECK-NEXT: %[[V29:[A-Za-z0-9_$.-]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V30:[A-Za-z0-9_$.-]+]] = loop.reduce %[[V31:[A-Za-z0-9_$.-]+]] = %[[V0]] to %[[V3]] step %[[V1]] combine(add) init(%[[V29]]) : f32 schedule #loop.schedule<par = 2> {
// CHECK-NEXT: %[[V32:[A-Za-z0-9_$.-]+]] = memref.load %[[XS_STAGE]][%[[V27]], %[[V31]]] : memref<?x6xf32>
// CHECK-NEXT: %[[V33:[A-Za-z0-9_$.-]+]] = arith.subi %[[V31]], %[[V13]] : index
// CHECK-NEXT: %[[V34:[A-Za-z0-9_$.-]+]] = arith.maxsi %[[V33]], %[[V0]] : index
// CHECK-NEXT: %[[V35:[A-Za-z0-9_$.-]+]] = arith.minsi %[[V34]], %[[V14]] : index
// CHECK-NEXT: %[[V36:[A-Za-z0-9_$.-]+]] = memref.load %[[H0_STATE]][%[[V27]], %[[V35]]] : memref<?x4xf32>
// CHECK-NEXT: %[[V37:[A-Za-z0-9_$.-]+]] = arith.cmpi sge, %[[V31]], %[[V13]] : index
// CHECK-NEXT: %[[V38:[A-Za-z0-9_$.-]+]] = arith.select %[[V37]], %[[V36]], %[[V32]] : f32
// CHECK-NEXT: %[[V39:[A-Za-z0-9_$.-]+]] = memref.load %[[W_SRAM]][%[[V28]], %[[V31]]] : memref<4x6xf32>
// CHECK-NEXT: %[[V40:[A-Za-z0-9_$.-]+]] = arith.mulf %[[V38]], %[[V39]] : f32
// CHECK-NEXT: loop.yield %[[V40]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: %[[V41:[A-Za-z0-9_$.-]+]] = memref.load %[[B_SRAM]][%[[V28]]] : memref<4xf32>
// CHECK-NEXT: %[[V42:[A-Za-z0-9_$.-]+]] = arith.addf %[[V30]], %[[V41]] : f32
// CHECK-NEXT: %[[V43:[A-Za-z0-9_$.-]+]] = math.tanh %[[V42]] : f32
// CHECK-NEXT: memref.store %[[V43]], %[[H0_NEXT]][%[[V27]], %[[V28]]] : memref<?x4xf32>
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.foreach %[[V44:[A-Za-z0-9_$.-]+]] = %[[V0]] to %[[V9]] step %[[V1]] {
// CHECK-NEXT: loop.foreach %[[V45:[A-Za-z0-9_$.-]+]] = %[[V0]] to %[[V2]] step %[[V1]] schedule #loop.schedule<par = 4> {
// CHECK-NEXT: %[[V46:[A-Za-z0-9_$.-]+]] = memref.load %[[H0_NEXT]][%[[V44]], %[[V45]]] : memref<?x4xf32>
// CHECK-NEXT: memref.store %[[V46]], %[[H0_STATE]][%[[V44]], %[[V45]]] : memref<?x4xf32>
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: loop.foreach %[[V47:[A-Za-z0-9_$.-]+]] = %[[V0]] to %[[V9]] step %[[V1]] {
// CHECK-NEXT: loop.foreach %[[V48:[A-Za-z0-9_$.-]+]] = %[[V0]] to %[[V2]] step %[[V1]] schedule #loop.schedule<par = 4> {
// CHECK-NEXT: %[[V49:[A-Za-z0-9_$.-]+]] = memref.load %[[H0_STATE]][%[[V47]], %[[V48]]] : memref<?x4xf32>
// CHECK-NEXT: memref.store %[[V49]], %[[H_OUT]][%[[V47]], %[[V48]]] : memref<?x4xf32>
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.yield
// CHECK-NEXT: }
// CHECK-NEXT: loop.return
// CHECK-NEXT: }

// The search on a small machine (8 PCUs, 16 PMUs) at 8 steps of batch 1: the hidden loop and
// the reduction get the chosen par factors (the hidden loop pipelined), copies get one
// PCU's lanes, and the report lists the design and the Pareto front.
loop.kernel @rnn(%xs: memref<?x?x2xf32>, %w: memref<4x6xf32>, %b: memref<4xf32>, %steps: index, %h0: memref<?x4xf32>, %h_out: memref<?x4xf32>) attributes {nimble.device = "spatial"} {
  %0 = arith.constant 0 : index
  %1 = arith.constant 1 : index
  %2 = arith.constant 4 : index
  %3 = arith.constant 6 : index
  %w_sram = loop.alloc sram : memref<4x6xf32>
  loop.foreach %4 = %0 to %2 step %1 {
    loop.foreach %5 = %0 to %3 step %1 {
      %6 = memref.load %w[%4, %5] : memref<4x6xf32>
      memref.store %6, %w_sram[%4, %5] : memref<4x6xf32>
      loop.yield
    }
    loop.yield
  }
  %b_sram = loop.alloc sram : memref<4xf32>
  loop.foreach %7 = %0 to %2 step %1 {
    %8 = memref.load %b[%7] : memref<4xf32>
    memref.store %8, %b_sram[%7] : memref<4xf32>
    loop.yield
  }
  %9 = memref.dim %h0, %0 : memref<?x4xf32>
  %h0_state = loop.alloc sram (%9) : memref<?x4xf32>
  %h0_next = loop.alloc sram (%9) : memref<?x4xf32>
  loop.foreach %10 = %0 to %9 step %1 {
    loop.foreach %11 = %0 to %2 step %1 {
      %12 = memref.load %h0[%10, %11] : memref<?x4xf32>
      memref.store %12, %h0_state[%10, %11] : memref<?x4xf32>
      loop.yield
    }
    loop.yield
  }
  %13 = arith.constant 2 : index
  %14 = arith.constant 3 : index
  scf.for %t = %0 to %steps step %1 {
    %15 = memref.dim %xs, %0 : memref<?x?x2xf32>
    %16 = arith.cmpi slt, %t, %0 : index
    %17 = arith.addi %t, %15 : index
    %18 = arith.select %16, %17, %t : index
    %19 = arith.maxsi %18, %0 : index
    %20 = arith.minsi %19, %15 : index
    %21 = memref.dim %h0_state, %0 : memref<?x4xf32>
    %xs_stage = loop.alloc sram (%21) : memref<?x6xf32>
    loop.foreach %22 = %0 to %21 step %1 {
      loop.foreach %23 = %0 to %3 step %1 {
        %24 = arith.maxsi %23, %0 : index
        %25 = arith.minsi %24, %1 : index
        %26 = memref.load %xs[%20, %22, %25] : memref<?x?x2xf32>
        memref.store %26, %xs_stage[%22, %23] : memref<?x6xf32>
        loop.yield
      }
      loop.yield
    }
    loop.foreach %27 = %0 to %21 step %1 {
      loop.foreach %28 = %0 to %2 step %1 {
        %29 = arith.constant 0.000000e+00 : f32
        %30 = loop.reduce %31 = %0 to %3 step %1 combine(add) init(%29) : f32 {
          %32 = memref.load %xs_stage[%27, %31] : memref<?x6xf32>
          %33 = arith.subi %31, %13 : index
          %34 = arith.maxsi %33, %0 : index
          %35 = arith.minsi %34, %14 : index
          %36 = memref.load %h0_state[%27, %35] : memref<?x4xf32>
          %37 = arith.cmpi sge, %31, %13 : index
          %38 = arith.select %37, %36, %32 : f32
          %39 = memref.load %w_sram[%28, %31] : memref<4x6xf32>
          %40 = arith.mulf %38, %39 : f32
          loop.yield %40 : f32
        }
        %41 = memref.load %b_sram[%28] : memref<4xf32>
        %42 = arith.addf %30, %41 : f32
        %43 = math.tanh %42 : f32
        memref.store %43, %h0_next[%27, %28] : memref<?x4xf32>
        loop.yield
      }
      loop.yield
    }
    loop.foreach %44 = %0 to %9 step %1 {
      loop.foreach %45 = %0 to %2 step %1 {
        %46 = memref.load %h0_next[%44, %45] : memref<?x4xf32>
        memref.store %46, %h0_state[%44, %45] : memref<?x4xf32>
        loop.yield
      }
      loop.yield
    }
  }
  loop.foreach %47 = %0 to %9 step %1 {
    loop.foreach %48 = %0 to %2 step %1 {
      %49 = memref.load %h0_state[%47, %48] : memref<?x4xf32>
      memref.store %49, %h_out[%47, %48] : memref<?x4xf32>
      loop.yield
    }
    loop.yield
  }
  loop.return
}
