// RUN: nimble-opt %s --split-input-file -p expand-math | filecheck %s

// CHECK-LABEL: func.func @tanh_f32
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: f32) -> f32 {
// CHECK-NEXT: %[[V0:[A-Za-z0-9_$.-]+]] = arith.constant -9.000000e+00 : f32
// CHECK-NEXT: %[[V1:[A-Za-z0-9_$.-]+]] = arith.constant 9.000000e+00 : f32
// CHECK-NEXT: %[[V2:[A-Za-z0-9_$.-]+]] = arith.constant -2.76076837e-16 : f32
// CHECK-NEXT: %[[V3:[A-Za-z0-9_$.-]+]] = arith.constant 2.00018794e-13 : f32
// CHECK-NEXT: %[[V4:[A-Za-z0-9_$.-]+]] = arith.constant -8.60467184e-11 : f32
// CHECK-NEXT: %[[V5:[A-Za-z0-9_$.-]+]] = arith.constant 5.12229725e-08 : f32
// CHECK-NEXT: %[[V6:[A-Za-z0-9_$.-]+]] = arith.constant 1.48572235e-05 : f32
// CHECK-NEXT: %[[V7:[A-Za-z0-9_$.-]+]] = arith.constant 0.000637261954 : f32
// CHECK-NEXT: %[[V8:[A-Za-z0-9_$.-]+]] = arith.constant 0.00489352457 : f32
// CHECK-NEXT: %[[V9:[A-Za-z0-9_$.-]+]] = arith.constant 1.19825836e-06 : f32
// CHECK-NEXT: %[[V10:[A-Za-z0-9_$.-]+]] = arith.constant 0.000118534706 : f32
// CHECK-NEXT: %[[V11:[A-Za-z0-9_$.-]+]] = arith.constant 0.00226843474 : f32
// CHECK-NEXT: %[[V12:[A-Za-z0-9_$.-]+]] = arith.constant 0.00489352504 : f32
// CHECK-NEXT: %[[Y:[A-Za-z0-9_$.-]+]] = arith.maximumf %[[X]], %[[V0]] : f32
// CHECK-NEXT: %[[Y_1:[A-Za-z0-9_$.-]+]] = arith.minimumf %[[Y]], %[[V1]] : f32
// CHECK-NEXT: %[[Y_2:[A-Za-z0-9_$.-]+]] = arith.mulf %[[Y_1]], %[[Y_1]] : f32
// CHECK-NEXT: %[[Y_3:[A-Za-z0-9_$.-]+]] = arith.mulf %[[V2]], %[[Y_2]] : f32
// CHECK-NEXT: %[[Y_4:[A-Za-z0-9_$.-]+]] = arith.addf %[[Y_3]], %[[V3]] : f32
// CHECK-NEXT: %[[Y_5:[A-Za-z0-9_$.-]+]] = arith.mulf %[[Y_4]], %[[Y_2]] : f32
// CHECK-NEXT: %[[Y_6:[A-Za-z0-9_$.-]+]] = arith.addf %[[Y_5]], %[[V4]] : f32
// CHECK-NEXT: %[[Y_7:[A-Za-z0-9_$.-]+]] = arith.mulf %[[Y_6]], %[[Y_2]] : f32
// CHECK-NEXT: %[[Y_8:[A-Za-z0-9_$.-]+]] = arith.addf %[[Y_7]], %[[V5]] : f32
// CHECK-NEXT: %[[Y_9:[A-Za-z0-9_$.-]+]] = arith.mulf %[[Y_8]], %[[Y_2]] : f32
// CHECK-NEXT: %[[Y_10:[A-Za-z0-9_$.-]+]] = arith.addf %[[Y_9]], %[[V6]] : f32
// CHECK-NEXT: %[[Y_11:[A-Za-z0-9_$.-]+]] = arith.mulf %[[Y_10]], %[[Y_2]] : f32
// CHECK-NEXT: %[[Y_12:[A-Za-z0-9_$.-]+]] = arith.addf %[[Y_11]], %[[V7]] : f32
// CHECK-NEXT: %[[Y_13:[A-Za-z0-9_$.-]+]] = arith.mulf %[[Y_12]], %[[Y_2]] : f32
// CHECK-NEXT: %[[Y_14:[A-Za-z0-9_$.-]+]] = arith.addf %[[Y_13]], %[[V8]] : f32
// CHECK-NEXT: %[[Y_15:[A-Za-z0-9_$.-]+]] = arith.mulf %[[Y_1]], %[[Y_14]] : f32
// CHECK-NEXT: %[[Y_16:[A-Za-z0-9_$.-]+]] = arith.mulf %[[V9]], %[[Y_2]] : f32
// CHECK-NEXT: %[[Y_17:[A-Za-z0-9_$.-]+]] = arith.addf %[[Y_16]], %[[V10]] : f32
// CHECK-NEXT: %[[Y_18:[A-Za-z0-9_$.-]+]] = arith.mulf %[[Y_17]], %[[Y_2]] : f32
// CHECK-NEXT: %[[Y_19:[A-Za-z0-9_$.-]+]] = arith.addf %[[Y_18]], %[[V11]] : f32
// CHECK-NEXT: %[[Y_20:[A-Za-z0-9_$.-]+]] = arith.mulf %[[Y_19]], %[[Y_2]] : f32
// CHECK-NEXT: %[[Y_21:[A-Za-z0-9_$.-]+]] = arith.addf %[[Y_20]], %[[V12]] : f32
// CHECK-NEXT: %[[Y_22:[A-Za-z0-9_$.-]+]] = arith.divf %[[Y_15]], %[[Y_21]] : f32
// CHECK-NEXT: func.return %[[Y_22]] : f32
// CHECK-NEXT: }



func.func @tanh_f32(%x: f32) -> f32 {
  %y = math.tanh %x : f32
  func.return %y : f32
}

// -----

// CHECK-LABEL: func.func @erf_vector
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: vector<16xf32>) -> vector<16xf32> {
// CHECK-NEXT: %[[V0:[A-Za-z0-9_$.-]+]] = arith.constant dense<-4.000000e+00> : vector<16xf32>
// CHECK-NEXT: %[[V1:[A-Za-z0-9_$.-]+]] = arith.constant dense<4.000000e+00> : vector<16xf32>
// CHECK-NEXT: %[[V2:[A-Za-z0-9_$.-]+]] = arith.constant dense<-2.72614237e-10> : vector<16xf32>
// CHECK-NEXT: %[[V3:[A-Za-z0-9_$.-]+]] = arith.constant dense<2.77068146e-08> : vector<16xf32>
// CHECK-NEXT: %[[V4:[A-Za-z0-9_$.-]+]] = arith.constant dense<-2.10102394e-06> : vector<16xf32>
// CHECK-NEXT: %[[V5:[A-Za-z0-9_$.-]+]] = arith.constant dense<-5.69250624e-05> : vector<16xf32>
// CHECK-NEXT: %[[V6:[A-Za-z0-9_$.-]+]] = arith.constant dense<-0.000734990637> : vector<16xf32>
// CHECK-NEXT: %[[V7:[A-Za-z0-9_$.-]+]] = arith.constant dense<-2.954600e-03> : vector<16xf32>
// CHECK-NEXT: %[[V8:[A-Za-z0-9_$.-]+]] = arith.constant dense<-0.0160960332> : vector<16xf32>
// CHECK-NEXT: %[[V9:[A-Za-z0-9_$.-]+]] = arith.constant dense<-1.45660715e-05> : vector<16xf32>
// CHECK-NEXT: %[[V10:[A-Za-z0-9_$.-]+]] = arith.constant dense<-0.000213374049> : vector<16xf32>
// CHECK-NEXT: %[[V11:[A-Za-z0-9_$.-]+]] = arith.constant dense<-0.00168282702> : vector<16xf32>
// CHECK-NEXT: %[[V12:[A-Za-z0-9_$.-]+]] = arith.constant dense<-0.00737332925> : vector<16xf32>
// CHECK-NEXT: %[[V13:[A-Za-z0-9_$.-]+]] = arith.constant dense<-0.0142647391> : vector<16xf32>
// CHECK-NEXT: %[[Y:[A-Za-z0-9_$.-]+]] = arith.maximumf %[[X]], %[[V0]] : vector<16xf32>
// CHECK-NEXT: %[[Y_1:[A-Za-z0-9_$.-]+]] = arith.minimumf %[[Y]], %[[V1]] : vector<16xf32>
// CHECK-NEXT: %[[Y_2:[A-Za-z0-9_$.-]+]] = arith.mulf %[[Y_1]], %[[Y_1]] : vector<16xf32>
// CHECK-NEXT: %[[Y_3:[A-Za-z0-9_$.-]+]] = arith.mulf %[[V2]], %[[Y_2]] : vector<16xf32>
// CHECK-NEXT: %[[Y_4:[A-Za-z0-9_$.-]+]] = arith.addf %[[Y_3]], %[[V3]] : vector<16xf32>
// CHECK-NEXT: %[[Y_5:[A-Za-z0-9_$.-]+]] = arith.mulf %[[Y_4]], %[[Y_2]] : vector<16xf32>
// CHECK-NEXT: %[[Y_6:[A-Za-z0-9_$.-]+]] = arith.addf %[[Y_5]], %[[V4]] : vector<16xf32>
// CHECK-NEXT: %[[Y_7:[A-Za-z0-9_$.-]+]] = arith.mulf %[[Y_6]], %[[Y_2]] : vector<16xf32>
// CHECK-NEXT: %[[Y_8:[A-Za-z0-9_$.-]+]] = arith.addf %[[Y_7]], %[[V5]] : vector<16xf32>
// CHECK-NEXT: %[[Y_9:[A-Za-z0-9_$.-]+]] = arith.mulf %[[Y_8]], %[[Y_2]] : vector<16xf32>
// CHECK-NEXT: %[[Y_10:[A-Za-z0-9_$.-]+]] = arith.addf %[[Y_9]], %[[V6]] : vector<16xf32>
// CHECK-NEXT: %[[Y_11:[A-Za-z0-9_$.-]+]] = arith.mulf %[[Y_10]], %[[Y_2]] : vector<16xf32>
// CHECK-NEXT: %[[Y_12:[A-Za-z0-9_$.-]+]] = arith.addf %[[Y_11]], %[[V7]] : vector<16xf32>
// CHECK-NEXT: %[[Y_13:[A-Za-z0-9_$.-]+]] = arith.mulf %[[Y_12]], %[[Y_2]] : vector<16xf32>
// CHECK-NEXT: %[[Y_14:[A-Za-z0-9_$.-]+]] = arith.addf %[[Y_13]], %[[V8]] : vector<16xf32>
// CHECK-NEXT: %[[Y_15:[A-Za-z0-9_$.-]+]] = arith.mulf %[[Y_1]], %[[Y_14]] : vector<16xf32>
// CHECK-NEXT: %[[Y_16:[A-Za-z0-9_$.-]+]] = arith.mulf %[[V9]], %[[Y_2]] : vector<16xf32>
// CHECK-NEXT: %[[Y_17:[A-Za-z0-9_$.-]+]] = arith.addf %[[Y_16]], %[[V10]] : vector<16xf32>
// CHECK-NEXT: %[[Y_18:[A-Za-z0-9_$.-]+]] = arith.mulf %[[Y_17]], %[[Y_2]] : vector<16xf32>
// CHECK-NEXT: %[[Y_19:[A-Za-z0-9_$.-]+]] = arith.addf %[[Y_18]], %[[V11]] : vector<16xf32>
// CHECK-NEXT: %[[Y_20:[A-Za-z0-9_$.-]+]] = arith.mulf %[[Y_19]], %[[Y_2]] : vector<16xf32>
// CHECK-NEXT: %[[Y_21:[A-Za-z0-9_$.-]+]] = arith.addf %[[Y_20]], %[[V12]] : vector<16xf32>
// CHECK-NEXT: %[[Y_22:[A-Za-z0-9_$.-]+]] = arith.mulf %[[Y_21]], %[[Y_2]] : vector<16xf32>
// CHECK-NEXT: %[[Y_23:[A-Za-z0-9_$.-]+]] = arith.addf %[[Y_22]], %[[V13]] : vector<16xf32>
// CHECK-NEXT: %[[Y_24:[A-Za-z0-9_$.-]+]] = arith.divf %[[Y_15]], %[[Y_23]] : vector<16xf32>
// CHECK-NEXT: func.return %[[Y_24]] : vector<16xf32>
// CHECK-NEXT: }
func.func @erf_vector(%x: vector<16xf32>) -> vector<16xf32> {
  %y = math.erf %x : vector<16xf32>
  func.return %y : vector<16xf32>
}

// -----

// CHECK-LABEL: func.func @tanh_f64_kept
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: f64) -> f64 {
// CHECK-NEXT: %[[Y:[A-Za-z0-9_$.-]+]] = math.tanh %[[X]] : f64
// CHECK-NEXT: func.return %[[Y]] : f64
// CHECK-NEXT: }
func.func @tanh_f64_kept(%x: f64) -> f64 {
  %y = math.tanh %x : f64
  func.return %y : f64
}

// -----

// CHECK-LABEL: func.func @exp_f32
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: f32) -> f32 {
// CHECK-NEXT: %[[V0:[A-Za-z0-9_$.-]+]] = arith.constant -103.972084 : f32
// CHECK-NEXT: %[[V1:[A-Za-z0-9_$.-]+]] = arith.constant 88.7228394 : f32
// CHECK-NEXT: %[[V2:[A-Za-z0-9_$.-]+]] = arith.constant 1.44269502 : f32
// CHECK-NEXT: %[[V3:[A-Za-z0-9_$.-]+]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT: %[[V4:[A-Za-z0-9_$.-]+]] = arith.constant 0.693359375 : f32
// CHECK-NEXT: %[[V5:[A-Za-z0-9_$.-]+]] = arith.constant -0.000212194442 : f32
// CHECK-NEXT: %[[V6:[A-Za-z0-9_$.-]+]] = arith.constant 0.000198756912 : f32
// CHECK-NEXT: %[[V7:[A-Za-z0-9_$.-]+]] = arith.constant 0.00139819994 : f32
// CHECK-NEXT: %[[V8:[A-Za-z0-9_$.-]+]] = arith.constant 0.00833345205 : f32
// CHECK-NEXT: %[[V9:[A-Za-z0-9_$.-]+]] = arith.constant 0.0416657962 : f32
// CHECK-NEXT: %[[V10:[A-Za-z0-9_$.-]+]] = arith.constant 0.166666657 : f32
// CHECK-NEXT: %[[V11:[A-Za-z0-9_$.-]+]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[V12:[A-Za-z0-9_$.-]+]] = arith.constant 1 : i32
// CHECK-NEXT: %[[V13:[A-Za-z0-9_$.-]+]] = arith.constant 127 : i32
// CHECK-NEXT: %[[V14:[A-Za-z0-9_$.-]+]] = arith.constant 23 : i32
// CHECK-NEXT: %[[V15:[A-Za-z0-9_$.-]+]] = arith.constant 0x7f800000 : f32
// CHECK-NEXT: %[[Y:[A-Za-z0-9_$.-]+]] = arith.maximumf %[[X]], %[[V0]] : f32
// CHECK-NEXT: %[[Y_1:[A-Za-z0-9_$.-]+]] = arith.minimumf %[[Y]], %[[V1]] : f32
// CHECK-NEXT: %[[Y_2:[A-Za-z0-9_$.-]+]] = arith.mulf %[[Y_1]], %[[V2]] : f32
// CHECK-NEXT: %[[Y_3:[A-Za-z0-9_$.-]+]] = arith.addf %[[Y_2]], %[[V3]] : f32
// CHECK-NEXT: %[[Y_4:[A-Za-z0-9_$.-]+]] = math.floor %[[Y_3]] : f32
// CHECK-NEXT: %[[Y_5:[A-Za-z0-9_$.-]+]] = arith.mulf %[[Y_4]], %[[V4]] : f32
// CHECK-NEXT: %[[Y_6:[A-Za-z0-9_$.-]+]] = arith.subf %[[Y_1]], %[[Y_5]] : f32
// CHECK-NEXT: %[[Y_7:[A-Za-z0-9_$.-]+]] = arith.mulf %[[Y_4]], %[[V5]] : f32
// CHECK-NEXT: %[[Y_8:[A-Za-z0-9_$.-]+]] = arith.subf %[[Y_6]], %[[Y_7]] : f32
// CHECK-NEXT: %[[Y_9:[A-Za-z0-9_$.-]+]] = arith.mulf %[[Y_8]], %[[Y_8]] : f32
// CHECK-NEXT: %[[Y_10:[A-Za-z0-9_$.-]+]] = arith.mulf %[[V6]], %[[Y_8]] : f32
// CHECK-NEXT: %[[Y_11:[A-Za-z0-9_$.-]+]] = arith.addf %[[Y_10]], %[[V7]] : f32
// CHECK-NEXT: %[[Y_12:[A-Za-z0-9_$.-]+]] = arith.mulf %[[Y_11]], %[[Y_8]] : f32
// CHECK-NEXT: %[[Y_13:[A-Za-z0-9_$.-]+]] = arith.addf %[[Y_12]], %[[V8]] : f32
// CHECK-NEXT: %[[Y_14:[A-Za-z0-9_$.-]+]] = arith.mulf %[[Y_13]], %[[Y_8]] : f32
// CHECK-NEXT: %[[Y_15:[A-Za-z0-9_$.-]+]] = arith.addf %[[Y_14]], %[[V9]] : f32
// CHECK-NEXT: %[[Y_16:[A-Za-z0-9_$.-]+]] = arith.mulf %[[Y_15]], %[[Y_8]] : f32
// CHECK-NEXT: %[[Y_17:[A-Za-z0-9_$.-]+]] = arith.addf %[[Y_16]], %[[V10]] : f32
// CHECK-NEXT: %[[Y_18:[A-Za-z0-9_$.-]+]] = arith.mulf %[[Y_17]], %[[Y_8]] : f32
// CHECK-NEXT: %[[Y_19:[A-Za-z0-9_$.-]+]] = arith.addf %[[Y_18]], %[[V3]] : f32
// CHECK-NEXT: %[[Y_20:[A-Za-z0-9_$.-]+]] = arith.mulf %[[Y_19]], %[[Y_9]] : f32
// CHECK-NEXT: %[[Y_21:[A-Za-z0-9_$.-]+]] = arith.addf %[[Y_20]], %[[Y_8]] : f32
// CHECK-NEXT: %[[Y_22:[A-Za-z0-9_$.-]+]] = arith.addf %[[Y_21]], %[[V11]] : f32
// CHECK-NEXT: %[[Y_23:[A-Za-z0-9_$.-]+]] = arith.fptosi %[[Y_4]] : f32 to i32
// CHECK-NEXT: %[[Y_24:[A-Za-z0-9_$.-]+]] = arith.shrsi %[[Y_23]], %[[V12]] : i32
// CHECK-NEXT: %[[Y_25:[A-Za-z0-9_$.-]+]] = arith.subi %[[Y_23]], %[[Y_24]] : i32
// CHECK-NEXT: %[[Y_26:[A-Za-z0-9_$.-]+]] = arith.addi %[[Y_24]], %[[V13]] : i32
// CHECK-NEXT: %[[Y_27:[A-Za-z0-9_$.-]+]] = arith.shli %[[Y_26]], %[[V14]] : i32
// CHECK-NEXT: %[[Y_28:[A-Za-z0-9_$.-]+]] = arith.bitcast %[[Y_27]] : i32 to f32
// CHECK-NEXT: %[[Y_29:[A-Za-z0-9_$.-]+]] = arith.mulf %[[Y_22]], %[[Y_28]] : f32
// CHECK-NEXT: %[[Y_30:[A-Za-z0-9_$.-]+]] = arith.addi %[[Y_25]], %[[V13]] : i32
// CHECK-NEXT: %[[Y_31:[A-Za-z0-9_$.-]+]] = arith.shli %[[Y_30]], %[[V14]] : i32
// CHECK-NEXT: %[[Y_32:[A-Za-z0-9_$.-]+]] = arith.bitcast %[[Y_31]] : i32 to f32
// CHECK-NEXT: %[[Y_33:[A-Za-z0-9_$.-]+]] = arith.mulf %[[Y_29]], %[[Y_32]] : f32
// CHECK-NEXT: %[[Y_34:[A-Za-z0-9_$.-]+]] = arith.cmpf ogt, %[[X]], %[[V1]] : f32
// CHECK-NEXT: %[[Y_35:[A-Za-z0-9_$.-]+]] = arith.select %[[Y_34]], %[[V15]], %[[Y_33]] : f32
// CHECK-NEXT: %[[Y_36:[A-Za-z0-9_$.-]+]] = arith.cmpf uno, %[[X]], %[[X]] : f32
// CHECK-NEXT: %[[Y_37:[A-Za-z0-9_$.-]+]] = arith.select %[[Y_36]], %[[X]], %[[Y_35]] : f32
// CHECK-NEXT: func.return %[[Y_37]] : f32
// CHECK-NEXT: }
// exp: 2^n * p(r), the 2^n built in the exponent bits; NaN kept, inf past the largest f32.
func.func @exp_f32(%x: f32) -> f32 {
  %y = math.exp %x : f32
  func.return %y : f32
}

// -----

// CHECK-LABEL: func.func @two_tanh_share_coefficients
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: f32, %[[Z:[A-Za-z0-9_$.-]+]]: f32) -> f32 {
// CHECK-NEXT: %[[V0:[A-Za-z0-9_$.-]+]] = arith.constant -9.000000e+00 : f32
// CHECK-NEXT: %[[V1:[A-Za-z0-9_$.-]+]] = arith.constant 9.000000e+00 : f32
// CHECK-NEXT: %[[V2:[A-Za-z0-9_$.-]+]] = arith.constant -2.76076837e-16 : f32
// CHECK-NEXT: %[[V3:[A-Za-z0-9_$.-]+]] = arith.constant 2.00018794e-13 : f32
// CHECK-NEXT: %[[V4:[A-Za-z0-9_$.-]+]] = arith.constant -8.60467184e-11 : f32
// CHECK-NEXT: %[[V5:[A-Za-z0-9_$.-]+]] = arith.constant 5.12229725e-08 : f32
// CHECK-NEXT: %[[V6:[A-Za-z0-9_$.-]+]] = arith.constant 1.48572235e-05 : f32
// CHECK-NEXT: %[[V7:[A-Za-z0-9_$.-]+]] = arith.constant 0.000637261954 : f32
// CHECK-NEXT: %[[V8:[A-Za-z0-9_$.-]+]] = arith.constant 0.00489352457 : f32
// CHECK-NEXT: %[[V9:[A-Za-z0-9_$.-]+]] = arith.constant 1.19825836e-06 : f32
// CHECK-NEXT: %[[V10:[A-Za-z0-9_$.-]+]] = arith.constant 0.000118534706 : f32
// CHECK-NEXT: %[[V11:[A-Za-z0-9_$.-]+]] = arith.constant 0.00226843474 : f32
// CHECK-NEXT: %[[V12:[A-Za-z0-9_$.-]+]] = arith.constant 0.00489352504 : f32
// CHECK-NEXT: %[[A:[A-Za-z0-9_$.-]+]] = arith.maximumf %[[X]], %[[V0]] : f32
// CHECK-NEXT: %[[A_1:[A-Za-z0-9_$.-]+]] = arith.minimumf %[[A]], %[[V1]] : f32
// CHECK-NEXT: %[[A_2:[A-Za-z0-9_$.-]+]] = arith.mulf %[[A_1]], %[[A_1]] : f32
// CHECK-NEXT: %[[A_3:[A-Za-z0-9_$.-]+]] = arith.mulf %[[V2]], %[[A_2]] : f32
// CHECK-NEXT: %[[A_4:[A-Za-z0-9_$.-]+]] = arith.addf %[[A_3]], %[[V3]] : f32
// CHECK-NEXT: %[[A_5:[A-Za-z0-9_$.-]+]] = arith.mulf %[[A_4]], %[[A_2]] : f32
// CHECK-NEXT: %[[A_6:[A-Za-z0-9_$.-]+]] = arith.addf %[[A_5]], %[[V4]] : f32
// CHECK-NEXT: %[[A_7:[A-Za-z0-9_$.-]+]] = arith.mulf %[[A_6]], %[[A_2]] : f32
// CHECK-NEXT: %[[A_8:[A-Za-z0-9_$.-]+]] = arith.addf %[[A_7]], %[[V5]] : f32
// CHECK-NEXT: %[[A_9:[A-Za-z0-9_$.-]+]] = arith.mulf %[[A_8]], %[[A_2]] : f32
// CHECK-NEXT: %[[A_10:[A-Za-z0-9_$.-]+]] = arith.addf %[[A_9]], %[[V6]] : f32
// CHECK-NEXT: %[[A_11:[A-Za-z0-9_$.-]+]] = arith.mulf %[[A_10]], %[[A_2]] : f32
// CHECK-NEXT: %[[A_12:[A-Za-z0-9_$.-]+]] = arith.addf %[[A_11]], %[[V7]] : f32
// CHECK-NEXT: %[[A_13:[A-Za-z0-9_$.-]+]] = arith.mulf %[[A_12]], %[[A_2]] : f32
// CHECK-NEXT: %[[A_14:[A-Za-z0-9_$.-]+]] = arith.addf %[[A_13]], %[[V8]] : f32
// CHECK-NEXT: %[[A_15:[A-Za-z0-9_$.-]+]] = arith.mulf %[[A_1]], %[[A_14]] : f32
// CHECK-NEXT: %[[A_16:[A-Za-z0-9_$.-]+]] = arith.mulf %[[V9]], %[[A_2]] : f32
// CHECK-NEXT: %[[A_17:[A-Za-z0-9_$.-]+]] = arith.addf %[[A_16]], %[[V10]] : f32
// CHECK-NEXT: %[[A_18:[A-Za-z0-9_$.-]+]] = arith.mulf %[[A_17]], %[[A_2]] : f32
// CHECK-NEXT: %[[A_19:[A-Za-z0-9_$.-]+]] = arith.addf %[[A_18]], %[[V11]] : f32
// CHECK-NEXT: %[[A_20:[A-Za-z0-9_$.-]+]] = arith.mulf %[[A_19]], %[[A_2]] : f32
// CHECK-NEXT: %[[A_21:[A-Za-z0-9_$.-]+]] = arith.addf %[[A_20]], %[[V12]] : f32
// CHECK-NEXT: %[[A_22:[A-Za-z0-9_$.-]+]] = arith.divf %[[A_15]], %[[A_21]] : f32
// CHECK-NEXT: %[[B:[A-Za-z0-9_$.-]+]] = arith.maximumf %[[Z]], %[[V0]] : f32
// CHECK-NEXT: %[[B_1:[A-Za-z0-9_$.-]+]] = arith.minimumf %[[B]], %[[V1]] : f32
// CHECK-NEXT: %[[B_2:[A-Za-z0-9_$.-]+]] = arith.mulf %[[B_1]], %[[B_1]] : f32
// CHECK-NEXT: %[[B_3:[A-Za-z0-9_$.-]+]] = arith.mulf %[[V2]], %[[B_2]] : f32
// CHECK-NEXT: %[[B_4:[A-Za-z0-9_$.-]+]] = arith.addf %[[B_3]], %[[V3]] : f32
// CHECK-NEXT: %[[B_5:[A-Za-z0-9_$.-]+]] = arith.mulf %[[B_4]], %[[B_2]] : f32
// CHECK-NEXT: %[[B_6:[A-Za-z0-9_$.-]+]] = arith.addf %[[B_5]], %[[V4]] : f32
// CHECK-NEXT: %[[B_7:[A-Za-z0-9_$.-]+]] = arith.mulf %[[B_6]], %[[B_2]] : f32
// CHECK-NEXT: %[[B_8:[A-Za-z0-9_$.-]+]] = arith.addf %[[B_7]], %[[V5]] : f32
// CHECK-NEXT: %[[B_9:[A-Za-z0-9_$.-]+]] = arith.mulf %[[B_8]], %[[B_2]] : f32
// CHECK-NEXT: %[[B_10:[A-Za-z0-9_$.-]+]] = arith.addf %[[B_9]], %[[V6]] : f32
// CHECK-NEXT: %[[B_11:[A-Za-z0-9_$.-]+]] = arith.mulf %[[B_10]], %[[B_2]] : f32
// CHECK-NEXT: %[[B_12:[A-Za-z0-9_$.-]+]] = arith.addf %[[B_11]], %[[V7]] : f32
// CHECK-NEXT: %[[B_13:[A-Za-z0-9_$.-]+]] = arith.mulf %[[B_12]], %[[B_2]] : f32
// CHECK-NEXT: %[[B_14:[A-Za-z0-9_$.-]+]] = arith.addf %[[B_13]], %[[V8]] : f32
// CHECK-NEXT: %[[B_15:[A-Za-z0-9_$.-]+]] = arith.mulf %[[B_1]], %[[B_14]] : f32
// CHECK-NEXT: %[[B_16:[A-Za-z0-9_$.-]+]] = arith.mulf %[[V9]], %[[B_2]] : f32
// CHECK-NEXT: %[[B_17:[A-Za-z0-9_$.-]+]] = arith.addf %[[B_16]], %[[V10]] : f32
// CHECK-NEXT: %[[B_18:[A-Za-z0-9_$.-]+]] = arith.mulf %[[B_17]], %[[B_2]] : f32
// CHECK-NEXT: %[[B_19:[A-Za-z0-9_$.-]+]] = arith.addf %[[B_18]], %[[V11]] : f32
// CHECK-NEXT: %[[B_20:[A-Za-z0-9_$.-]+]] = arith.mulf %[[B_19]], %[[B_2]] : f32
// CHECK-NEXT: %[[B_21:[A-Za-z0-9_$.-]+]] = arith.addf %[[B_20]], %[[V12]] : f32
// CHECK-NEXT: %[[B_22:[A-Za-z0-9_$.-]+]] = arith.divf %[[B_15]], %[[B_21]] : f32
// CHECK-NEXT: %[[S:[A-Za-z0-9_$.-]+]] = arith.addf %[[A_22]], %[[B_22]] : f32
// CHECK-NEXT: func.return %[[S]] : f32
// CHECK-NEXT: }
func.func @two_tanh_share_coefficients(%x: f32, %z: f32) -> f32 {
  %a = math.tanh %x : f32
  %b = math.tanh %z : f32
  %s = arith.addf %a, %b : f32
  func.return %s : f32
}
