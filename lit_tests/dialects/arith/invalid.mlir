// RUN: nimble-opt %s --split-input-file --verify-diagnostics

func.func @compare_result_shape(%a: vector<16xf32>, %b: vector<16xf32>) {
  // expected-error @+1 {{'arith.cmpf' op result must be i1 of the operands' shape, got vector<8xi1>}}
  %m = "arith.cmpf"(%a, %b) <{predicate = 4 : i64}> : (vector<16xf32>, vector<16xf32>) -> vector<8xi1>
  func.return
}

// -----

func.func @compare_operand_types(%i: vector<4xi64>, %j: vector<4xi32>) {
  // expected-error @+1 {{'arith.cmpi' op operands must have the same type, got vector<4xi64> and vector<4xi32>}}
  %m = "arith.cmpi"(%i, %j) <{predicate = 2 : i64}> : (vector<4xi64>, vector<4xi32>) -> vector<4xi1>
  func.return
}

// -----

func.func @select_lanes_differ(%m: vector<8xi1>, %a: vector<16xf32>, %b: vector<16xf32>) {
  // expected-error @+1 {{'arith.select' op a vector condition and the result must have the same shape, got vector<8xi1> and vector<16xf32>}}
  %s = arith.select %m, %a, %b : vector<8xi1>, vector<16xf32>
  func.return
}

// -----

func.func @select_condition_not_bool(%m: vector<16xi8>, %a: vector<16xf32>, %b: vector<16xf32>) {
  // expected-error @+1 {{operand 'cond' at position 0 does not verify}}
  %s = arith.select %m, %a, %b : vector<16xi8>, vector<16xf32>
  func.return
}

// -----

func.func @cast_shape(%x: vector<16xf32>) {
  // expected-error @+1 {{'arith.fptosi' op operand and result must have the same shape, got vector<16xf32> and vector<8xi32>}}
  %i = arith.fptosi %x : vector<16xf32> to vector<8xi32>
  func.return
}

// -----

func.func @cast_scalar_to_vector(%x: f32) {
  // expected-error @+1 {{'arith.fptosi' op operand and result must have the same shape, got f32 and vector<16xi32>}}
  %i = arith.fptosi %x : f32 to vector<16xi32>
  func.return
}

// -----

func.func @index_cast_needs_index(%i: vector<4xi32>) {
  // expected-error @+1 {{'arith.index_cast' op casts between index and an integer type (exactly one side index), got i32 to i64}}
  %j = arith.index_cast %i : vector<4xi32> to vector<4xi64>
  func.return
}

// -----

func.func @trunc_narrower(%i: vector<4xi32>) {
  // expected-error @+1 {{'arith.trunci' op the result must be narrower than the operand, got i32 to i64}}
  %j = arith.trunci %i : vector<4xi32> to vector<4xi64>
  func.return
}

// -----

func.func @extend_wider(%i: vector<4xi32>) {
  // expected-error @+1 {{'arith.extsi' op the result must be wider than the operand, got i32 to i16}}
  %j = arith.extsi %i : vector<4xi32> to vector<4xi16>
  func.return
}
