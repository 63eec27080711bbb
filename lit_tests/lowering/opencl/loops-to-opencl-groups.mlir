// RUN: nimble-opt %s --split-input-file -t opencl | filecheck %s

// A loop whose iterations stage buffers (a panel of 64 columns: `dram` rows in a
// scratch slice per work-group, a `sram` row in work-group memory) is a work-group
// phase: the loop runs over groups, each nest of its body is shared out among the
// group's work-items (the fill nests by their outer loop, the output nest by register
// tiles, also split between the groups along grid axis 1), a barrier after each nest.
// CHECK-LABEL: __kernel void panels_p0(
// CHECK-SAME: __global float * restrict [[S:s[0-9]+]]) {
// CHECK: __local float [[L:l[0-9]+]][64];
// CHECK-NEXT: long [[G:g[0-9]+]] = (long)get_group_id(0) + (long)get_num_groups(0) * ((long)get_group_id(1));
// CHECK-NEXT: for (long [[P:i[0-9]+]] = {{v[0-9]+}} + (long)get_group_id(0) * {{v[0-9]+}}; [[P]] < {{v[0-9]+}}; [[P]] += (long)get_num_groups(0) * {{v[0-9]+}}) {
// CHECK: long [[COUNT:v[0-9]+]] = min({{v[0-9]+}}, {{v[0-9]+}});
// CHECK-NEXT: for (long [[K:i[0-9]+]] = {{v[0-9]+}} + (long)get_local_id(0) * {{v[0-9]+}}; [[K]] < {{v[0-9]+}}; [[K]] += (long)get_local_size(0) * {{v[0-9]+}}) {
// CHECK: ([[S]] + [[G]] * (64) * (64))[([[K]]) * 64 + {{i[0-9]+}}] = {{v[0-9]+}};
// CHECK: barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
// CHECK-NEXT: for (long [[C:i[0-9]+]] = {{v[0-9]+}} + (long)get_local_id(0) * {{v[0-9]+}}; [[C]] < [[COUNT]];
// CHECK: [[L]]{{\[}}[[C]]] = {{v[0-9]+}};
// CHECK: barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
// CHECK-NEXT: long [[ROWS:n[0-9]+]] = max({{v[0-9]+}} - {{v[0-9]+}} + 7, 0L) / 8;
// CHECK-NEXT: long [[LANES:n[0-9]+]] = max([[COUNT]] - {{v[0-9]+}} + 31, 0L) / 32;
// CHECK-NEXT: for (long [[T:t[0-9]+]] = (long)get_group_id(1) * get_local_size(0) + get_local_id(0); [[T]] < [[ROWS]] * [[LANES]]; [[T]] += (long)get_num_groups(1) * get_local_size(0)) {
// CHECK-NEXT: long [[I:i[0-9]+]] = {{v[0-9]+}} + [[T]] / [[LANES]] * 8;
// CHECK-NEXT: long [[J:j[0-9]+]] = {{v[0-9]+}} + [[T]] % [[LANES]] * 32;
// CHECK-NEXT: if ([[I]] + 8 <= {{v[0-9]+}} && [[J]] + 32 <= [[COUNT]]) {
// CHECK: float16 {{v[0-9]+}} = vload16(0, ([[S]] + [[G]] * (64) * (64)) + ({{i[0-9]+}}) * 64 + [[J]]);
// CHECK: float16 {{v[0-9]+}} = vload16(0, [[L]] + [[J]]);
// CHECK: barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
// CHECK-NEXT: }
// CHECK-NEXT: }
loop.kernel @panels(%x: memref<?x64xf32>, %w: memref<16x64xf32>, %y: memref<16x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %n = memref.dim %x, %c0 : memref<?x64xf32>
  %panels = arith.ceildivsi %n, %c64 : index
  %zero = arith.constant 0.0 : f32
  loop.foreach %p = %c0 to %panels step %c1 {
    %start = arith.muli %p, %c64 : index
    %left = arith.subi %n, %start : index
    %count = arith.minsi %left, %c64 : index
    %t = loop.alloc dram : memref<64x64xf32>
    %s = loop.alloc sram : memref<64xf32>
    loop.foreach %k = %c0 to %c64 step %c1 {
      loop.foreach %col = %c0 to %count step %c1 {
        %r = arith.addi %start, %col : index
        %v = memref.load %x[%r, %k] : memref<?x64xf32>
        memref.store %v, %t[%k, %col] : memref<64x64xf32>
        loop.yield
      }
      loop.yield
    }
    loop.foreach %col = %c0 to %count step %c1 {
      %r = arith.addi %start, %col : index
      %v = memref.load %x[%r, %c0] : memref<?x64xf32>
      memref.store %v, %s[%col] : memref<64xf32>
      loop.yield
    }
    loop.foreach %o = %c0 to %c16 step %c1 {
      loop.foreach %col = %c0 to %count step %c1 {
        %acc = loop.reduce %k = %c0 to %c64 step %c1 combine(add) init(%zero) : f32 {
          %a = memref.load %w[%o, %k] : memref<16x64xf32>
          %b = memref.load %t[%k, %col] : memref<64x64xf32>
          %m = arith.mulf %a, %b : f32
          loop.yield %m : f32
        }
        %e = memref.load %s[%col] : memref<64xf32>
        %sum = arith.addf %acc, %e : f32
        %r = arith.addi %start, %col : index
        memref.store %sum, %y[%o, %r] : memref<16x?xf32>
        loop.yield
      }
      loop.yield
    }
    loop.yield
  }
  loop.return
}

// -----

// A nest without register tiles that writes an argument: its iterations are shared
// out among one group's work-items, and no other group repeats the panel (no split
// axis: the group id has one axis).
// CHECK-LABEL: __kernel void copy_panels_p0(
// CHECK: long [[G:g[0-9]+]] = (long)get_group_id(0);
// CHECK-NEXT: for (long [[P:i[0-9]+]] = {{v[0-9]+}} + (long)get_group_id(0) * {{v[0-9]+}};
// CHECK: for (long [[C:i[0-9]+]] = {{v[0-9]+}} + (long)get_local_id(0) * {{v[0-9]+}}; [[C]] < {{v[0-9]+}}; [[C]] += (long)get_local_size(0) * {{v[0-9]+}}) {
// CHECK: ({{s[0-9]+}} + [[G]] * (64)){{\[}}[[C]]] = {{v[0-9]+}};
// CHECK: barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
// CHECK-NEXT: for (long [[D:i[0-9]+]] = {{v[0-9]+}} + (long)get_local_id(0) * {{v[0-9]+}}; [[D]] < {{v[0-9]+}};
// CHECK: (a1 + a1_off)[
// CHECK: barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
loop.kernel @copy_panels(%x: memref<?xf32>, %y: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  %panels = arith.ceildivsi %n, %c64 : index
  loop.foreach %p = %c0 to %panels step %c1 {
    %start = arith.muli %p, %c64 : index
    %left = arith.subi %n, %start : index
    %count = arith.minsi %left, %c64 : index
    %t = loop.alloc dram : memref<64xf32>
    loop.foreach %col = %c0 to %count step %c1 {
      %r = arith.addi %start, %col : index
      %v = memref.load %x[%r] : memref<?xf32>
      memref.store %v, %t[%col] : memref<64xf32>
      loop.yield
    }
    loop.foreach %col = %c0 to %count step %c1 {
      %r = arith.addi %start, %col : index
      %v = memref.load %t[%col] : memref<64xf32>
      %d = arith.addf %v, %v : f32
      memref.store %d, %y[%r] : memref<?xf32>
      loop.yield
    }
    loop.yield
  }
  loop.return
}
