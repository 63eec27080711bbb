// RUN: nimble-opt %s --cpu skylake-avx512 --split-input-file -p fuse-ops,lower-graph-to-loops,canonicalize,cse,schedule-loops | filecheck %s

// CHECK-LABEL: loop.kernel @dense_dense_0
// CHECK: %[[C128:[A-Za-z0-9_$.-]+]] = arith.constant 128 : index
// CHECK: %[[LEAST:[A-Za-z0-9_$.-]+]] = arith.constant 20 : index
// CHECK-NEXT: %[[ENOUGH:[A-Za-z0-9_$.-]+]] = arith.cmpi sge, %{{[A-Za-z0-9_$.-]+}}, %[[LEAST]] : index
// CHECK-NEXT: %[[ZERO:[A-Za-z0-9_$.-]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[CUT:[A-Za-z0-9_$.-]+]] = arith.select %[[ENOUGH]], %[[C128]], %[[ZERO]] : index
// CHECK-NEXT: %[[NONE:[A-Za-z0-9_$.-]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[ONCE:[A-Za-z0-9_$.-]+]] = arith.constant 1 : index
// CHECK-NEXT: %[[TRIPS:[A-Za-z0-9_$.-]+]] = arith.select %[[ENOUGH]], %[[NONE]], %[[ONCE]] : index
// CHECK: loop.foreach %{{[A-Za-z0-9_$.-]+}} = %{{[A-Za-z0-9_$.-]+}} to %[[CUT]] step %{{[A-Za-z0-9_$.-]+}} schedule #loop.schedule<vector = 16, unroll = 4, pack, dots> {
// CHECK: loop.foreach %{{[A-Za-z0-9_$.-]+}} = %{{[A-Za-z0-9_$.-]+}} to %[[TRIPS]] step %{{[A-Za-z0-9_$.-]+}} {
// CHECK-NEXT: loop.foreach %{{[A-Za-z0-9_$.-]+}} = %{{[A-Za-z0-9_$.-]+}} to %{{[A-Za-z0-9_$.-]+}} step %{{[A-Za-z0-9_$.-]+}} schedule #loop.schedule<unroll = 4, parallel> {
// CHECK-NEXT: arith.addi
// CHECK-NEXT: loop.foreach %{{[A-Za-z0-9_$.-]+}} = %{{[A-Za-z0-9_$.-]+}} to %[[C128]] step %{{[A-Za-z0-9_$.-]+}} schedule #loop.schedule<unroll = 4> {
// A dense layer with rows known at run time packs its 128 columns (two whole panels)
// from 20 rows on: all of them or none. The unpacked copy for fewer rows keeps its 128
// columns static, in a loop that runs it once when the packed nest takes none (not
// columns [cut, 128), whose tiles would need run-time remainders).
func.func @dense(%x: tensor<?x64xf32>, %w: tensor<128x64xf32>) -> tensor<?x128xf32> {
  %y = graph.dense %x, %w : (tensor<?x64xf32>, tensor<128x64xf32>) -> tensor<?x128xf32>
  func.return %y : tensor<?x128xf32>
}
