// RUN: nimble-opt %s --split-input-file -t opencl | filecheck %s

// Two loops over `?` dims: the inner two grid loops become a register tile per thread
// (8 rows x 32 lanes: two `float16` vectors along the contiguous axis per row). A tile
// that overhangs the lanes covers what is inside with all 8 rows over one vector at a
// time, then 8, 4 and single lanes; one that overhangs the rows goes row by row, one
// vector at a time, then single lanes.
// CHECK-LABEL: __kernel void scale_p0(__global float * restrict a0, long a0_off, long a0_d0, long a0_d1, __global float * restrict a1, long a1_off, long a1_d0, long a1_d1) {
// CHECK: long [[N:v[0-9]+]] = a0_d0;
// CHECK: long [[M:v[0-9]+]] = a0_d1;
// CHECK: long [[I:i[0-9]+]] = {{v[0-9]+}} + (long)get_global_id(1) * 8;
// CHECK-NEXT: long [[J:j[0-9]+]] = {{v[0-9]+}} + (long)get_global_id(0) * 32;
// CHECK-NEXT: if ([[I]] + 8 <= [[N]] && [[J]] + 32 <= [[M]]) {
// CHECK-NEXT: long [[I1:v[0-9]+]] = [[I]] + 1L;
// CHECK: long [[I7:v[0-9]+]] = [[I]] + 7L;
// CHECK-NEXT: long [[J16:v[0-9]+]] = [[J]] + 16L;
// CHECK-NEXT: float16 [[X0:v[0-9]+]] = vload16(0, (a0 + a0_off) + ([[I]]) * a0_d1 + [[J]]);
// CHECK-NEXT: float16 [[X1:v[0-9]+]] = vload16(0, (a0 + a0_off) + ([[I]]) * a0_d1 + [[J16]]);
// CHECK: float16 {{v[0-9]+}} = vload16(0, (a0 + a0_off) + ([[I7]]) * a0_d1 + [[J16]]);
// CHECK-NEXT: float16 [[TWO:v[0-9]+]] = (float16)({{v[0-9]+}});
// CHECK-NEXT: float16 [[Y0:v[0-9]+]] = [[X0]] * [[TWO]];
// CHECK-NEXT: float16 [[Y1:v[0-9]+]] = [[X1]] * [[TWO]];
// CHECK: vstore16([[Y0]], 0, (a1 + a1_off) + ([[I]]) * a1_d1 + [[J]]);
// CHECK-NEXT: vstore16([[Y1]], 0, (a1 + a1_off) + ([[I]]) * a1_d1 + [[J16]]);
// CHECK: } else {
// CHECK-NEXT: long [[END:j[0-9]+]] = max(min([[J]] + 32, [[M]]), [[J]]);
// CHECK-NEXT: if ([[I]] + 8 <= [[N]]) {
// CHECK-NEXT: long [[JV:j[0-9]+]] = [[J]];
// CHECK-NEXT: for (; [[JV]] + 16 <= [[END]]; [[JV]] += 16) {
// CHECK: long [[I7V:v[0-9]+]] = [[I]] + 7L;
// CHECK-NEXT: float16 {{v[0-9]+}} = vload16(0, (a0 + a0_off) + ([[I]]) * a0_d1 + [[JV]]);
// CHECK: vstore16({{v[0-9]+}}, 0, (a1 + a1_off) + ([[I7V]]) * a1_d1 + [[JV]]);
// CHECK-NEXT: }
// CHECK-NEXT: if ([[JV]] + 8 <= [[END]]) {
// CHECK: float8 {{v[0-9]+}} = vload8(0, (a0 + a0_off) + ([[I]]) * a0_d1 + [[JV]]);
// CHECK: [[JV]] += 8;
// CHECK-NEXT: }
// CHECK-NEXT: if ([[JV]] + 4 <= [[END]]) {
// CHECK: float4 {{v[0-9]+}} = vload4(0,
// CHECK: [[JV]] += 4;
// CHECK-NEXT: }
// CHECK-NEXT: for (; [[JV]] + 1 <= [[END]]; [[JV]] += 1) {
// CHECK: long [[I7S:v[0-9]+]] = [[I]] + 7L;
// CHECK-NEXT: float {{v[0-9]+}} = (a0 + a0_off)[([[I]]) * a0_d1 + [[JV]]];
// CHECK: (a1 + a1_off)[([[I7S]]) * a1_d1 + [[JV]]] = {{v[0-9]+}};
// CHECK-NEXT: }
// CHECK-NEXT: } else {
// CHECK-NEXT: for (long [[II:i[0-9]+]] = [[I]]; [[II]] < [[N]]; [[II]]++) {
// CHECK-NEXT: long [[JR:j[0-9]+]] = [[J]];
// CHECK-NEXT: for (; [[JR]] + 16 <= [[END]]; [[JR]] += 16) {
// CHECK-NEXT: float16 {{v[0-9]+}} = vload16(0, (a0 + a0_off) + ([[II]]) * a0_d1 + [[JR]]);
// CHECK: for (; [[JR]] + 1 <= [[END]]; [[JR]] += 1) {
// CHECK-NEXT: float {{v[0-9]+}} = (a0 + a0_off)[([[II]]) * a0_d1 + [[JR]]];
loop.kernel @scale(%a: memref<?x?xf32>, %b: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c0 : memref<?x?xf32>
  %m = memref.dim %a, %c1 : memref<?x?xf32>
  %two = arith.constant 2.0 : f32
  loop.foreach %i = %c0 to %n step %c1 {
    loop.foreach %j = %c0 to %m step %c1 {
      %x = memref.load %a[%i, %j] : memref<?x?xf32>
      %y = arith.mulf %x, %two : f32
      memref.store %y, %b[%i, %j] : memref<?x?xf32>
      loop.yield
    }
    loop.yield
  }
  loop.return
}

// -----

// A matrix product: the reduction runs once per tile (unrolled and jammed), one
// vector accumulator per row and vector, the row operand a scalar loaded once for both
// vectors of its row, each lane operand a vector loaded once for all rows.
// CHECK-LABEL: __kernel void matmul_p0(
// CHECK: if ({{.*}}) {
// CHECK: long [[J16:v[0-9]+]] = [[J:j[0-9]+]] + 16L;
// CHECK-NEXT: float16 [[ZERO:v[0-9]+]] = (float16)({{v[0-9]+}});
// CHECK-NEXT: float16 [[ACC0:acc[0-9]+]] = [[ZERO]];
// CHECK-NEXT: float16 [[ACC1:acc[0-9]+]] = [[ZERO]];
// CHECK-COUNT-14: float16 {{acc[0-9]+}} = [[ZERO]];
// CHECK-NEXT: for (long [[K:i[0-9]+]] = {{v[0-9]+}}; [[K]] < {{v[0-9]+}}; [[K]] += {{v[0-9]+}}) {
// CHECK-NEXT: float [[A0:v[0-9]+]] = (a0 + a0_off)[([[I:i[0-9]+]]) * 32 + [[K]]];
// CHECK-NEXT: float16 [[B0:v[0-9]+]] = vload16(0, (a1 + a1_off) + ([[K]]) * a1_d1 + [[J]]);
// CHECK-NEXT: float16 [[A0V:v[0-9]+]] = (float16)([[A0]]);
// CHECK-NEXT: float16 [[P0:v[0-9]+]] = [[A0V]] * [[B0]];
// CHECK-NEXT: float16 [[B1:v[0-9]+]] = vload16(0, (a1 + a1_off) + ([[K]]) * a1_d1 + [[J16]]);
// CHECK-NEXT: float16 [[P1:v[0-9]+]] = [[A0V]] * [[B1]];
// CHECK-NEXT: float [[A1:v[0-9]+]] = (a0 + a0_off)[({{v[0-9]+}}) * 32 + [[K]]];
// CHECK-NEXT: float16 [[A1V:v[0-9]+]] = (float16)([[A1]]);
// CHECK-NEXT: float16 {{v[0-9]+}} = [[A1V]] * [[B0]];
// CHECK-NEXT: float16 {{v[0-9]+}} = [[A1V]] * [[B1]];
// CHECK: [[ACC0]] = [[ACC0]] + [[P0]];
// CHECK-NEXT: [[ACC1]] = [[ACC1]] + [[P1]];
// CHECK: vstore16([[ACC0]], 0, (a2 + a2_off) + ([[I]]) * a2_d1 + [[J]]);
// CHECK-NEXT: vstore16([[ACC1]], 0, (a2 + a2_off) + ([[I]]) * a2_d1 + [[J16]]);
loop.kernel @matmul(%a: memref<?x32xf32>, %b: memref<32x?xf32>, %c: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %n = memref.dim %a, %c0 : memref<?x32xf32>
  %m = memref.dim %b, %c1 : memref<32x?xf32>
  %zero = arith.constant 0.0 : f32
  loop.foreach %i = %c0 to %n step %c1 {
    loop.foreach %j = %c0 to %m step %c1 {
      %s = loop.reduce %k = %c0 to %c32 step %c1 combine(add) init(%zero) : f32 {
        %x = memref.load %a[%i, %k] : memref<?x32xf32>
        %y = memref.load %b[%k, %j] : memref<32x?xf32>
        %p = arith.mulf %x, %y : f32
        loop.yield %p : f32
      }
      memref.store %s, %c[%i, %j] : memref<?x?xf32>
      loop.yield
    }
    loop.yield
  }
  loop.return
}

// -----

// A body that does not vectorise (the lanes would run along a strided axis): both
// loops go on the NDRange as grid-stride loops (innermost = axis 0), so any grid size
// computes the same result.
// CHECK-LABEL: __kernel void transpose_p0(
// CHECK: long [[N:v[0-9]+]] = a0_d0;
// CHECK: long [[M:v[0-9]+]] = a0_d1;
// CHECK-NOT: vload
// CHECK: for (long [[I:i[0-9]+]] = {{v[0-9]+}} + (long)get_global_id(1) * [[S:v[0-9]+]]; [[I]] < [[N]]; [[I]] += (long)get_global_size(1) * [[S]]) {
// CHECK-NEXT: for (long [[J:i[0-9]+]] = {{v[0-9]+}} + (long)get_global_id(0) * [[S]]; [[J]] < [[M]]; [[J]] += (long)get_global_size(0) * [[S]]) {
// CHECK-NEXT: float [[X:v[0-9]+]] = (a0 + a0_off)[([[I]]) * a0_d1 + [[J]]];
// CHECK-NEXT: (a1 + a1_off)[([[J]]) * a1_d1 + [[I]]] = [[X]];
loop.kernel @transpose(%a: memref<?x?xf32>, %b: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c0 : memref<?x?xf32>
  %m = memref.dim %a, %c1 : memref<?x?xf32>
  loop.foreach %i = %c0 to %n step %c1 {
    loop.foreach %j = %c0 to %m step %c1 {
      %x = memref.load %a[%i, %j] : memref<?x?xf32>
      memref.store %x, %b[%j, %i] : memref<?x?xf32>
      loop.yield
    }
    loop.yield
  }
  loop.return
}

// -----
// A reduction inside a work item: an accumulator and a sequential loop.
// CHECK-LABEL: __kernel void rowsum_p0(
// CHECK: for (long [[I:i[0-9]+]] = {{.*}}get_global_id(0){{.*}}) {
// CHECK-NEXT: float [[ACC:acc[0-9]+]] = [[ZERO:v[0-9]+]];
// CHECK-NEXT: for (long [[K:i[0-9]+]] = {{v[0-9]+}}; [[K]] < {{v[0-9]+}}; [[K]] += {{v[0-9]+}}) {
// CHECK-NEXT: float [[X:v[0-9]+]] = (a0 + a0_off)[([[I]]) * 64 + [[K]]];
// CHECK-NEXT: [[ACC]] = (isnan([[X]]) || [[X]] > [[ACC]]) ? [[X]] : [[ACC]];
// CHECK-NEXT: }
// CHECK-NEXT: (a1 + a1_off)[[[I]]] = [[ACC]];
loop.kernel @rowsum(%a: memref<?x64xf32>, %out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %n = memref.dim %a, %c0 : memref<?x64xf32>
  %zero = arith.constant 0.0 : f32
  loop.foreach %i = %c0 to %n step %c1 {
    %s = loop.reduce %k = %c0 to %c64 step %c1 combine(max) init(%zero) : f32 {
      %x = memref.load %a[%i, %k] : memref<?x64xf32>
      loop.yield %x : f32
    }
    memref.store %s, %out[%i] : memref<?xf32>
    loop.yield
  }
  loop.return
}

// -----
// Two loop nests: two phases, launched in order (a launch is the only grid-wide barrier).
// CHECK-LABEL: __kernel void two_nests_p0(
// CHECK: get_global_id(0)
// CHECK: (a1 + a1_off)[{{i[0-9]+}}] = {{v[0-9]+}};
// CHECK-LABEL: __kernel void two_nests_p1(
// CHECK: get_global_id(0)
// CHECK: float [[Y:v[0-9]+]] = (isnan([[X:v[0-9]+]]) || [[X]] > [[X]]) ? [[X]] : [[X]];
// CHECK-NEXT: (a2 + a2_off)[{{i[0-9]+}}] = [[Y]];
loop.kernel @two_nests(%a: memref<?xf32>, %b: memref<?xf32>, %c: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c0 : memref<?xf32>
  loop.foreach %i = %c0 to %n step %c1 {
    %x = memref.load %a[%i] : memref<?xf32>
    memref.store %x, %b[%i] : memref<?xf32>
    loop.yield
  }
  loop.foreach %i = %c0 to %n step %c1 {
    %x = memref.load %a[%i] : memref<?xf32>
    %y = arith.maximumf %x, %x : f32
    memref.store %y, %c[%i] : memref<?xf32>
    loop.yield
  }
  loop.return
}

// -----
// Statements outside any loop (a whole-tensor reduction): one serial phase.
// CHECK-LABEL: __kernel void total_p0(
// CHECK-NOT: get_global_id
// CHECK: float [[ACC:acc[0-9]+]] = {{v[0-9]+}};
// CHECK-NEXT: for (long [[K:i[0-9]+]] = {{v[0-9]+}}; [[K]] < {{v[0-9]+}}; [[K]] += {{v[0-9]+}}) {
// CHECK-NEXT: float [[X:v[0-9]+]] = (a0 + a0_off)[[[K]]];
// CHECK-NEXT: [[ACC]] = [[ACC]] + [[X]];
// CHECK-NEXT: }
// CHECK-NEXT: (a1 + a1_off)[0] = [[ACC]];
loop.kernel @total(%a: memref<?xf32>, %out: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c0 : memref<?xf32>
  %zero = arith.constant 0.0 : f32
  %s = loop.reduce %k = %c0 to %n step %c1 combine(add) init(%zero) : f32 {
    %x = memref.load %a[%k] : memref<?xf32>
    loop.yield %x : f32
  }
  memref.store %s, %out[] : memref<f32>
  loop.return
}

// -----
// Index arithmetic with numpy's semantics: floor division, unsigned compares; float
// compares ordered or not.
// CHECK-LABEL: __kernel void index_ops_p0(__global long * restrict a0, long a0_off, long a0_d0, __global uchar * restrict a1, long a1_off, long a1_d0) {
// CHECK: long [[N:v[0-9]+]] = a0_d0;
// CHECK: for (long [[I:i[0-9]+]] = {{.*}}) {
// CHECK-NEXT: long [[Q:v[0-9]+]] = nb_floordiv([[I]], {{v[0-9]+}});
// CHECK-NEXT: long [[X:v[0-9]+]] = (a0 + a0_off)[[[Q]]];
// CHECK-NEXT: long [[Y:v[0-9]+]] = (long)[[X]];
// CHECK-NEXT: uchar [[LT:v[0-9]+]] = (ulong)[[Y]] < (ulong)[[N]];
// CHECK-NEXT: (a1 + a1_off)[[[I]]] = [[LT]];
loop.kernel @index_ops(%a: memref<?xi64>, %b: memref<?xi1>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %n = memref.dim %a, %c0 : memref<?xi64>
  loop.foreach %i = %c0 to %n step %c1 {
    %q = arith.floordivsi %i, %c3 : index
    %x = memref.load %a[%q] : memref<?xi64>
    %y = arith.index_cast %x : i64 to index
    %lt = arith.cmpi ult, %y, %n : index
    memref.store %lt, %b[%i] : memref<?xi1>
    loop.yield
  }
  loop.return
}

// -----
// `nimble.exact` float ops (a rounding the reference's comparisons depend on) sit in a
// compound statement that turns contraction into fused multiply-adds off; the others
// are plain. An i1 widened to an integer goes through `uchar`, not `uuchar`.
// CHECK-LABEL: __kernel void exact_ops_p0(
// CHECK: double [[P:v[0-9]+]];
// CHECK-NEXT: {
// CHECK-NEXT: #pragma OPENCL FP_CONTRACT OFF
// CHECK-NEXT: [[P]] = {{v[0-9]+}} * {{v[0-9]+}};
// CHECK-NEXT: }
// CHECK-NEXT: double [[S:v[0-9]+]];
// CHECK-NEXT: {
// CHECK-NEXT: #pragma OPENCL FP_CONTRACT OFF
// CHECK-NEXT: [[S]] = {{v[0-9]+}} + [[P]];
// CHECK-NEXT: }
// CHECK-NEXT: double [[Q:v[0-9]+]] = [[S]] * [[S]];
// CHECK-NEXT: uchar [[B:v[0-9]+]] = ([[Q]] > [[S]]);
// CHECK-NEXT: long [[W:v[0-9]+]] = (long)(uchar)[[B]];
loop.kernel @exact_ops(%a: memref<?xf64>, %out: memref<?xi64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c0 : memref<?xf64>
  loop.foreach %i = %c0 to %n step %c1 {
    %x = memref.load %a[%i] : memref<?xf64>
    %p = arith.mulf %x, %x {nimble.exact} : f64
    %s = arith.addf %x, %p {nimble.exact} : f64
    %q = arith.mulf %s, %s : f64
    %b = arith.cmpf ogt, %q, %s : f64
    %w = arith.extui %b : i1 to i64
    memref.store %w, %out[%i] : memref<?xi64>
    loop.yield
  }
  loop.return
}
