// RUN: nimble-opt %s -p 'spatial-dse{sizes="steps=8","xs=8x1x2","h0=1x4" machine="pcus=8,pmus=16"}' -t spatial | filecheck %s

// The readable listing of a searched program: the search's report, then one Accel block
// with its memories (element type, shape, bytes, memory units) and its controllers
// (trip counts, par factors, the model's cycles), straight-line code summarised.

// CHECK-LABEL: // @rnn
// CHECK-NEXT: // machine: 8 PCUs (16 lanes x 6 stages), 16 PMUs (256 KiB, 16 banks), 1 GHz, DRAM 49 GB/s
// CHECK-NEXT: // sizes: steps=8, xs=8x1x2, h0=1x4, h_out=1x4
// CHECK-NEXT: // searched 24 designs, 2 on the Pareto front
// CHECK-NEXT: // chosen: foreach(1) par 1, foreach(4) par 4, reduce(6) par 2, w_sram in SRAM
// CHECK-NEXT: // estimate: 1120 cycles per run (1.12 us at 1 GHz), 510 cycles to load on chip; 2 PCUs, 5 PMUs, SRAM 168 B, DRAM traffic 336 B per run and load; fits
// CHECK-NEXT: // Pareto front (run cycles vs units):
// CHECK-NEXT: //           1920 cycles     6 units (2 PCUs, 4 PMUs)  foreach(1) par 1, foreach(4) par 4, reduce(6) par 2, w_sram in DRAM
// CHECK-NEXT: //           1120 cycles     7 units (2 PCUs, 5 PMUs)  foreach(1) par 1, foreach(4) par 4, reduce(6) par 2, w_sram in SRAM
// CHECK-NEXT: Accel @rnn(xs: DRAM[f32], w: DRAM[f32], b: DRAM[f32], steps: Int, h0: DRAM[f32], h_out: DRAM[f32]) {
// CHECK-NEXT: val w_sram = SRAM[f32](4, 6)                               // 96 B, 1 PMU
// CHECK-NEXT: Foreach(4) { v7 =>                                         // 408 cycles
// CHECK-NEXT: Pipe.Foreach(6 par 6) { v8 =>                            // 102 cycles, II 1
// CHECK-NEXT: read w; write w_sram
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: val b_sram = SRAM[f32](4)                                  // 16 B, 1 PMU
// CHECK-NEXT: Pipe.Foreach(4 par 4) { v10 =>                             // 102 cycles, II 1
// CHECK-NEXT: read b; write b_sram
// CHECK-NEXT: }
// CHECK-NEXT: val h0_state = SRAM[f32](1, 4)                             // 16 B, 1 PMU
// CHECK-NEXT: val h0_next = SRAM[f32](1, 4)                              // 16 B, 1 PMU
// CHECK-NEXT: Foreach(1) { v13 =>                                        // 102 cycles
// CHECK-NEXT: Pipe.Foreach(4 par 4) { v14 =>                           // 102 cycles, II 1
// CHECK-NEXT: read h0; write h0_state
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: Sequential.Foreach(8 by 1) { t =>                          // 1016 cycles (8 x 127)
// CHECK-NEXT: val xs_stage = SRAM[f32](1, 6)                           // 24 B, 1 PMU
// CHECK-NEXT: Foreach(1) { v17 =>                                      // 102 cycles
// CHECK-NEXT: Pipe.Foreach(6 par 6) { v18 =>                         // 102 cycles, II 1
// CHECK-NEXT: read xs; write xs_stage
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: Pipe.Foreach(1 par 1) { v19 =>                           // 16 cycles, II 3
// CHECK-NEXT: Pipe.Foreach(4 par 4) { v20 =>                         // 16 cycles, II 3
// CHECK-NEXT: val v22 = Pipe.Reduce(6 par 2)(add) { v21 =>         // 7 cycles, II 1
// CHECK-NEXT: read h0_state, w_sram, xs_stage; 2 ops
// CHECK-NEXT: }
// CHECK-NEXT: read b_sram; 2 ops; write h0_next
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: Foreach(1) { v23 =>                                      // 2 cycles
// CHECK-NEXT: Pipe.Foreach(4 par 4) { v24 =>                         // 2 cycles, II 1
// CHECK-NEXT: read h0_next; write h0_state
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: Foreach(1) { v25 =>                                        // 2 cycles
// CHECK-NEXT: Pipe.Foreach(4 par 4) { v26 =>                           // 2 cycles, II 1
// CHECK-NEXT: read h0_state; write h_out
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: }

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
