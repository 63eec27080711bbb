// RUN: nimble-opt %s --split-input-file --cpu skylake-avx512 -p lower-graph-to-loops,expand-math,canonicalize,cse,schedule-loops | filecheck %s --check-prefix=AVX512
// RUN: nimble-opt %s --split-input-file --cpu haswell -p lower-graph-to-loops,expand-math,canonicalize,cse,schedule-loops | filecheck %s --check-prefix=AVX2
// RUN: nimble-opt %s --split-input-file --cpu x86-64-v2 -p lower-graph-to-loops,expand-math,canonicalize,cse,schedule-loops | filecheck %s --check-prefix=SSE
// RUN: nimble-opt %s --split-input-file --cpu skylake-avx512 --cpu-features=-avx512f -p lower-graph-to-loops,expand-math,canonicalize,cse,schedule-loops | filecheck %s --check-prefix=NO512

// The same matmul for three CPUs: lanes from the vector width (16, 8, 4 f32), register
// tiles from the vector registers (6 rows x 4 vectors of accumulators with AVX-512's 32,
// 6 x 2 with the 16 of AVX2 and SSE), panels of B packed 64 columns wide (one AVX-512
// tile; four AVX2 tiles, eight SSE ones, run one after the other per row tile).

// AVX512: builtin.module attributes {nimble.target = #nimble.cpu<"skylake-avx512">}
// AVX512-LABEL: loop.kernel @matmul_matmul_0
// AVX512: loop.foreach %[[I:.*]] = {{.*}} schedule #loop.schedule<unroll = 6, parallel>
// AVX512-NEXT: loop.foreach %[[J:.*]] = {{.*}} schedule #loop.schedule<vector = 16, unroll = 4, pack, dots>
// AVX2: builtin.module attributes {nimble.target = #nimble.cpu<"haswell">}
// AVX2-LABEL: loop.kernel @matmul_matmul_0
// AVX2: loop.foreach %[[I:.*]] = {{.*}} schedule #loop.schedule<unroll = 6, parallel>
// AVX2-NEXT: loop.foreach %[[J:.*]] = {{.*}} schedule #loop.schedule<vector = 8, unroll = 2, pack, panel = 64, dots>
// SSE: builtin.module attributes {nimble.target = #nimble.cpu<"x86-64-v2">}
// SSE-LABEL: loop.kernel @matmul_matmul_0
// SSE: loop.foreach %[[I:.*]] = {{.*}} schedule #loop.schedule<unroll = 6, parallel>
// SSE-NEXT: loop.foreach %[[J:.*]] = {{.*}} schedule #loop.schedule<vector = 4, unroll = 2, pack, panel = 64, dots>
// NO512: builtin.module attributes {nimble.target = #nimble.cpu<"skylake-avx512", features = "-avx512f">}
// NO512-LABEL: loop.kernel @matmul_matmul_0
// NO512: loop.foreach %[[J:.*]] = {{.*}} schedule #loop.schedule<vector = 8, unroll = 2, pack, panel = 64, dots>
func.func @matmul(%a: tensor<?x256xf32>, %b: tensor<256x128xf32>) -> tensor<?x128xf32> {
  %c = graph.matmul %a, %b : (tensor<?x256xf32>, tensor<256x128xf32>) -> tensor<?x128xf32>
  func.return %c : tensor<?x128xf32>
}

// -----

// Rows of 100 elements: 6 vectors of 16 and one masked step of 4 where the CPU has mask
// registers (AVX-512); 12 vectors of 8 and a scalar loop of 4 where it has none.

// AVX512-LABEL: loop.kernel @rows_of_100_tanh_0
// AVX512: loop.foreach %[[R:.*]] = {{.*}} schedule #loop.schedule<parallel>
// AVX512-NEXT: loop.foreach %[[C:.*]] = {{.*}} schedule #loop.schedule<vector = 16, mask>
// AVX2-LABEL: loop.kernel @rows_of_100_tanh_0
// AVX2: loop.foreach %[[R:.*]] = {{.*}} schedule #loop.schedule<parallel>
// AVX2-NEXT: loop.foreach %[[C:.*]] = {{.*}} schedule #loop.schedule<vector = 8>
// SSE-LABEL: loop.kernel @rows_of_100_tanh_0
// SSE: loop.foreach %[[C:.*]] = {{.*}} schedule #loop.schedule<vector = 4>
// NO512-LABEL: loop.kernel @rows_of_100_tanh_0
// NO512: loop.foreach %[[C:.*]] = {{.*}} schedule #loop.schedule<vector = 8>
func.func @rows_of_100(%x: tensor<?x100xf32>) -> tensor<?x100xf32> {
  %y = graph.tanh %x : tensor<?x100xf32> -> tensor<?x100xf32>
  func.return %y : tensor<?x100xf32>
}
