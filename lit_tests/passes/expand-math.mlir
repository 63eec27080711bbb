// RUN: nimble-opt %s --split-input-file -p expand-math | filecheck %s

// CHECK-LABEL: func.func @tanh_f32
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: f32) -> f32 {
// CHECK-NEXT: %[[Y:[A-Za-z0-9_$.-]+]] = arith.constant -9.000000e+00 : f32
// CHECK-NEXT: %[[Y_1:[A-Za-z0-9_$.-]+]] = arith.maximumf %[[X]], %[[Y]] : f32
// CHECK-NEXT: %[[Y_2:[A-Za-z0-9_$.-]+]] = arith.constant 9.000000e+00 : f32
// CHECK-NEXT: %[[Y_3:[A-Za-z0-9_$.-]+]] = arith.minimumf %[[Y_1]], %[[Y_2]] : f32
// CHECK-NEXT: %[[Y_4:[A-Za-z0-9_$.-]+]] = arith.mulf %[[Y_3]], %[[Y_3]] : f32
// CHECK-NEXT: %[[Y_5:[A-Za-z0-9_$.-]+]] = arith.constant -2.76076837e-16 : f32
// CHECK-NEXT: %[[Y_6:[A-Za-z0-9_$.-]+]] = arith.mulf %[[Y_5]], %[[Y_4]] : f32
// CHECK-NEXT: %[[Y_7:[A-Za-z0-9_$.-]+]] = arith.constant 2.00018794e-13 : f32
// CHECK-NEXT: %[[Y_8:[A-Za-z0-9_$.-]+]] = arith.addf %[[Y_6]], %[[Y_7]] : f32
// CHECK-NEXT: %[[Y_9:[A-Za-z0-9_$.-]+]] = arith.mulf %[[Y_8]], %[[Y_4]] : f32
// CHECK-NEXT: %[[Y_10:[A-Za-z0-9_$.-]+]] = arith.constant -8.60467184e-11 : f32
// CHECK-NEXT: %[[Y_11:[A-Za-z0-9_$.-]+]] = arith.addf %[[Y_9]], %[[Y_10]] : f32
// CHECK-NEXT: %[[Y_12:[A-Za-z0-9_$.-]+]] = arith.mulf %[[Y_11]], %[[Y_4]] : f32
// CHECK-NEXT: %[[Y_13:[A-Za-z0-9_$.-]+]] = arith.constant 5.12229725e-08 : f32
// CHECK-NEXT: %[[Y_14:[A-Za-z0-9_$.-]+]] = arith.addf %[[Y_12]], %[[Y_13]] : f32
// CHECK-NEXT: %[[Y_15:[A-Za-z0-9_$.-]+]] = arith.mulf %[[Y_14]], %[[Y_4]] : f32
// CHECK-NEXT: %[[Y_16:[A-Za-z0-9_$.-]+]] = arith.constant 1.48572235e-05 : f32
// CHECK-NEXT: %[[Y_17:[A-Za-z0-9_$.-]+]] = arith.addf %[[Y_15]], %[[Y_16]] : f32
// CHECK-NEXT: %[[Y_18:[A-Za-z0-9_$.-]+]] = arith.mulf %[[Y_17]], %[[Y_4]] : f32
// CHECK-NEXT: %[[Y_19:[A-Za-z0-9_$.-]+]] = arith.constant 0.000637261954 : f32
// CHECK-NEXT: %[[Y_20:[A-Za-z0-9_$.-]+]] = arith.addf %[[Y_18]], %[[Y_19]] : f32
// CHECK-NEXT: %[[Y_21:[A-Za-z0-9_$.-]+]] = arith.mulf %[[Y_20]], %[[Y_4]] : f32
// CHECK-NEXT: %[[Y_22:[A-Za-z0-9_$.-]+]] = arith.constant 0.00489352457 : f32
// CHECK-NEXT: %[[Y_23:[A-Za-z0-9_$.-]+]] = arith.addf %[[Y_21]], %[[Y_22]] : f32
// CHECK-NEXT: %[[Y_24:[A-Za-z0-9_$.-]+]] = arith.mulf %[[Y_3]], %[[Y_23]] : f32
// CHECK-NEXT: %[[Y_25:[A-Za-z0-9_$.-]+]] = arith.constant 1.19825836e-06 : f32
// CHECK-NEXT: %[[Y_26:[A-Za-z0-9_$.-]+]] = arith.mulf %[[Y_25]], %[[Y_4]] : f32
// CHECK-NEXT: %[[Y_27:[A-Za-z0-9_$.-]+]] = arith.constant 0.000118534706 : f32
// CHECK-NEXT: %[[Y_28:[A-Za-z0-9_$.-]+]] = arith.addf %[[Y_26]], %[[Y_27]] : f32
// CHECK-NEXT: %[[Y_29:[A-Za-z0-9_$.-]+]] = arith.mulf %[[Y_28]], %[[Y_4]] : f32
// CHECK-NEXT: %[[Y_30:[A-Za-z0-9_$.-]+]] = arith.constant 0.00226843474 : f32
// CHECK-NEXT: %[[Y_31:[A-Za-z0-9_$.-]+]] = arith.addf %[[Y_29]], %[[Y_30]] : f32
// CHECK-NEXT: %[[Y_32:[A-Za-z0-9_$.-]+]] = arith.mulf %[[Y_31]], %[[Y_4]] : f32
// CHECK-NEXT: %[[Y_33:[A-Za-z0-9_$.-]+]] = arith.constant 0.00489352504 : f32
// CHECK-NEXT: %[[Y_34:[A-Za-z0-9_$.-]+]] = arith.addf %[[Y_32]], %[[Y_33]] : f32
// CHECK-NEXT: %[[Y_35:[A-Za-z0-9_$.-]+]] = arith.divf %[[Y_24]], %[[Y_34]] : f32
// CHECK-NEXT: func.return %[[Y_35]] : f32
// CHECK-NEXT: }


func.func @tanh_f32(%x: f32) -> f32 {
  %y = math.tanh %x : f32
  func.return %y : f32
}

// -----

// CHECK-LABEL: func.func @erf_vector
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: vector<16xf32>) -> vector<16xf32> {
// CHECK-NEXT: %[[Y:[A-Za-z0-9_$.-]+]] = arith.constant dense<-4.000000e+00> : vector<16xf32>
// CHECK-NEXT: %[[Y_1:[A-Za-z0-9_$.-]+]] = arith.maximumf %[[X]], %[[Y]] : vector<16xf32>
// CHECK-NEXT: %[[Y_2:[A-Za-z0-9_$.-]+]] = arith.constant dense<4.000000e+00> : vector<16xf32>
// CHECK-NEXT: %[[Y_3:[A-Za-z0-9_$.-]+]] = arith.minimumf %[[Y_1]], %[[Y_2]] : vector<16xf32>
// CHECK-NEXT: %[[Y_4:[A-Za-z0-9_$.-]+]] = arith.mulf %[[Y_3]], %[[Y_3]] : vector<16xf32>
// CHECK-NEXT: %[[Y_5:[A-Za-z0-9_$.-]+]] = arith.constant dense<-2.72614237e-10> : vector<16xf32>
// CHECK-NEXT: %[[Y_6:[A-Za-z0-9_$.-]+]] = arith.mulf %[[Y_5]], %[[Y_4]] : vector<16xf32>
// CHECK-NEXT: %[[Y_7:[A-Za-z0-9_$.-]+]] = arith.constant dense<2.77068146e-08> : vector<16xf32>
// CHECK-NEXT: %[[Y_8:[A-Za-z0-9_$.-]+]] = arith.addf %[[Y_6]], %[[Y_7]] : vector<16xf32>
// CHECK-NEXT: %[[Y_9:[A-Za-z0-9_$.-]+]] = arith.mulf %[[Y_8]], %[[Y_4]] : vector<16xf32>
// CHECK-NEXT: %[[Y_10:[A-Za-z0-9_$.-]+]] = arith.constant dense<-2.10102394e-06> : vector<16xf32>
// CHECK-NEXT: %[[Y_11:[A-Za-z0-9_$.-]+]] = arith.addf %[[Y_9]], %[[Y_10]] : vector<16xf32>
// CHECK-NEXT: %[[Y_12:[A-Za-z0-9_$.-]+]] = arith.mulf %[[Y_11]], %[[Y_4]] : vector<16xf32>
// CHECK-NEXT: %[[Y_13:[A-Za-z0-9_$.-]+]] = arith.constant dense<-5.69250624e-05> : vector<16xf32>
// CHECK-NEXT: %[[Y_14:[A-Za-z0-9_$.-]+]] = arith.addf %[[Y_12]], %[[Y_13]] : vector<16xf32>
// CHECK-NEXT: %[[Y_15:[A-Za-z0-9_$.-]+]] = arith.mulf %[[Y_14]], %[[Y_4]] : vector<16xf32>
// CHECK-NEXT: %[[Y_16:[A-Za-z0-9_$.-]+]] = arith.constant dense<-0.000734990637> : vector<16xf32>
// CHECK-NEXT: %[[Y_17:[A-Za-z0-9_$.-]+]] = arith.addf %[[Y_15]], %[[Y_16]] : vector<16xf32>
// CHECK-NEXT: %[[Y_18:[A-Za-z0-9_$.-]+]] = arith.mulf %[[Y_17]], %[[Y_4]] : vector<16xf32>
// CHECK-NEXT: %[[Y_19:[A-Za-z0-9_$.-]+]] = arith.constant dense<-2.954600e-03> : vector<16xf32>
// CHECK-NEXT: %[[Y_20:[A-Za-z0-9_$.-]+]] = arith.addf %[[Y_18]], %[[Y_19]] : vector<16xf32>
// CHECK-NEXT: %[[Y_21:[A-Za-z0-9_$.-]+]] = arith.mulf %[[Y_20]], %[[Y_4]] : vector<16xf32>
// CHECK-NEXT: %[[Y_22:[A-Za-z0-9_$.-]+]] = arith.constant dense<-0.0160960332> : vector<16xf32>
// CHECK-NEXT: %[[Y_23:[A-Za-z0-9_$.-]+]] = arith.addf %[[Y_21]], %[[Y_22]] : vector<16xf32>
// CHECK-NEXT: %[[Y_24:[A-Za-z0-9_$.-]+]] = arith.mulf %[[Y_3]], %[[Y_23]] : vector<16xf32>
// CHECK-NEXT: %[[Y_25:[A-Za-z0-9_$.-]+]] = arith.constant dense<-1.45660715e-05> : vector<16xf32>
// CHECK-NEXT: %[[Y_26:[A-Za-z0-9_$.-]+]] = arith.mulf %[[Y_25]], %[[Y_4]] : vector<16xf32>
// CHECK-NEXT: %[[Y_27:[A-Za-z0-9_$.-]+]] = arith.constant dense<-0.000213374049> : vector<16xf32>
// CHECK-NEXT: %[[Y_28:[A-Za-z0-9_$.-]+]] = arith.addf %[[Y_26]], %[[Y_27]] : vector<16xf32>
// CHECK-NEXT: %[[Y_29:[A-Za-z0-9_$.-]+]] = arith.mulf %[[Y_28]], %[[Y_4]] : vector<16xf32>
// CHECK-NEXT: %[[Y_30:[A-Za-z0-9_$.-]+]] = arith.constant dense<-0.00168282702> : vector<16xf32>
// CHECK-NEXT: %[[Y_31:[A-Za-z0-9_$.-]+]] = arith.addf %[[Y_29]], %[[Y_30]] : vector<16xf32>
// CHECK-NEXT: %[[Y_32:[A-Za-z0-9_$.-]+]] = arith.mulf %[[Y_31]], %[[Y_4]] : vector<16xf32>
// CHECK-NEXT: %[[Y_33:[A-Za-z0-9_$.-]+]] = arith.constant dense<-0.00737332925> : vector<16xf32>
// CHECK-NEXT: %[[Y_34:[A-Za-z0-9_$.-]+]] = arith.addf %[[Y_32]], %[[Y_33]] : vector<16xf32>
// CHECK-NEXT: %[[Y_35:[A-Za-z0-9_$.-]+]] = arith.mulf %[[Y_34]], %[[Y_4]] : vector<16xf32>
// CHECK-NEXT: %[[Y_36:[A-Za-z0-9_$.-]+]] = arith.constant dense<-0.0142647391> : vector<16xf32>
// CHECK-NEXT: %[[Y_37:[A-Za-z0-9_$.-]+]] = arith.addf %[[Y_35]], %[[Y_36]] : vector<16xf32>
// CHECK-NEXT: %[[Y_38:[A-Za-z0-9_$.-]+]] = arith.divf %[[Y_24]], %[[Y_37]] : vector<16xf32>
// CHECK-NEXT: func.return %[[Y_38]] : vector<16xf32>
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
// CHECK-NEXT: %[[Y:[A-Za-z0-9_$.-]+]] = arith.constant -103.972084 : f32
// CHECK-NEXT: %[[Y_1:[A-Za-z0-9_$.-]+]] = arith.maximumf %[[X]], %[[Y]] : f32
// CHECK-NEXT: %[[Y_2:[A-Za-z0-9_$.-]+]] = arith.constant 88.7228394 : f32
// CHECK-NEXT: %[[Y_3:[A-Za-z0-9_$.-]+]] = arith.minimumf %[[Y_1]], %[[Y_2]] : f32
// CHECK-NEXT: %[[Y_4:[A-Za-z0-9_$.-]+]] = arith.constant 1.44269502 : f32
// CHECK-NEXT: %[[Y_5:[A-Za-z0-9_$.-]+]] = arith.mulf %[[Y_3]], %[[Y_4]] : f32
// CHECK-NEXT: %[[Y_6:[A-Za-z0-9_$.-]+]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT: %[[Y_7:[A-Za-z0-9_$.-]+]] = arith.addf %[[Y_5]], %[[Y_6]] : f32
// CHECK-NEXT: %[[Y_8:[A-Za-z0-9_$.-]+]] = math.floor %[[Y_7]] : f32
// CHECK-NEXT: %[[Y_9:[A-Za-z0-9_$.-]+]] = arith.constant 0.693359375 : f32
// CHECK-NEXT: %[[Y_10:[A-Za-z0-9_$.-]+]] = arith.mulf %[[Y_8]], %[[Y_9]] : f32
// CHECK-NEXT: %[[Y_11:[A-Za-z0-9_$.-]+]] = arith.subf %[[Y_3]], %[[Y_10]] : f32
// CHECK-NEXT: %[[Y_12:[A-Za-z0-9_$.-]+]] = arith.constant -0.000212194442 : f32
// CHECK-NEXT: %[[Y_13:[A-Za-z0-9_$.-]+]] = arith.mulf %[[Y_8]], %[[Y_12]] : f32
// CHECK-NEXT: %[[Y_14:[A-Za-z0-9_$.-]+]] = arith.subf %[[Y_11]], %[[Y_13]] : f32
// CHECK-NEXT: %[[Y_15:[A-Za-z0-9_$.-]+]] = arith.mulf %[[Y_14]], %[[Y_14]] : f32
// CHECK-NEXT: %[[Y_16:[A-Za-z0-9_$.-]+]] = arith.constant 0.000198756912 : f32
// CHECK-NEXT: %[[Y_17:[A-Za-z0-9_$.-]+]] = arith.mulf %[[Y_16]], %[[Y_14]] : f32
// CHECK-NEXT: %[[Y_18:[A-Za-z0-9_$.-]+]] = arith.constant 0.00139819994 : f32
// CHECK-NEXT: %[[Y_19:[A-Za-z0-9_$.-]+]] = arith.addf %[[Y_17]], %[[Y_18]] : f32
// CHECK-NEXT: %[[Y_20:[A-Za-z0-9_$.-]+]] = arith.mulf %[[Y_19]], %[[Y_14]] : f32
// CHECK-NEXT: %[[Y_21:[A-Za-z0-9_$.-]+]] = arith.constant 0.00833345205 : f32
// CHECK-NEXT: %[[Y_22:[A-Za-z0-9_$.-]+]] = arith.addf %[[Y_20]], %[[Y_21]] : f32
// CHECK-NEXT: %[[Y_23:[A-Za-z0-9_$.-]+]] = arith.mulf %[[Y_22]], %[[Y_14]] : f32
// CHECK-NEXT: %[[Y_24:[A-Za-z0-9_$.-]+]] = arith.constant 0.0416657962 : f32
// CHECK-NEXT: %[[Y_25:[A-Za-z0-9_$.-]+]] = arith.addf %[[Y_23]], %[[Y_24]] : f32
// CHECK-NEXT: %[[Y_26:[A-Za-z0-9_$.-]+]] = arith.mulf %[[Y_25]], %[[Y_14]] : f32
// CHECK-NEXT: %[[Y_27:[A-Za-z0-9_$.-]+]] = arith.constant 0.166666657 : f32
// CHECK-NEXT: %[[Y_28:[A-Za-z0-9_$.-]+]] = arith.addf %[[Y_26]], %[[Y_27]] : f32
// CHECK-NEXT: %[[Y_29:[A-Za-z0-9_$.-]+]] = arith.mulf %[[Y_28]], %[[Y_14]] : f32
// CHECK-NEXT: %[[Y_30:[A-Za-z0-9_$.-]+]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT: %[[Y_31:[A-Za-z0-9_$.-]+]] = arith.addf %[[Y_29]], %[[Y_30]] : f32
// CHECK-NEXT: %[[Y_32:[A-Za-z0-9_$.-]+]] = arith.mulf %[[Y_31]], %[[Y_15]] : f32
// CHECK-NEXT: %[[Y_33:[A-Za-z0-9_$.-]+]] = arith.addf %[[Y_32]], %[[Y_14]] : f32
// CHECK-NEXT: %[[Y_34:[A-Za-z0-9_$.-]+]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[Y_35:[A-Za-z0-9_$.-]+]] = arith.addf %[[Y_33]], %[[Y_34]] : f32
// CHECK-NEXT: %[[Y_36:[A-Za-z0-9_$.-]+]] = arith.fptosi %[[Y_8]] : f32 to i32
// CHECK-NEXT: %[[Y_37:[A-Za-z0-9_$.-]+]] = arith.constant 1 : i32
// CHECK-NEXT: %[[Y_38:[A-Za-z0-9_$.-]+]] = arith.shrsi %[[Y_36]], %[[Y_37]] : i32
// CHECK-NEXT: %[[Y_39:[A-Za-z0-9_$.-]+]] = arith.subi %[[Y_36]], %[[Y_38]] : i32
// CHECK-NEXT: %[[Y_40:[A-Za-z0-9_$.-]+]] = arith.constant 127 : i32
// CHECK-NEXT: %[[Y_41:[A-Za-z0-9_$.-]+]] = arith.addi %[[Y_38]], %[[Y_40]] : i32
// CHECK-NEXT: %[[Y_42:[A-Za-z0-9_$.-]+]] = arith.constant 23 : i32
// CHECK-NEXT: %[[Y_43:[A-Za-z0-9_$.-]+]] = arith.shli %[[Y_41]], %[[Y_42]] : i32
// CHECK-NEXT: %[[Y_44:[A-Za-z0-9_$.-]+]] = arith.bitcast %[[Y_43]] : i32 to f32
// CHECK-NEXT: %[[Y_45:[A-Za-z0-9_$.-]+]] = arith.mulf %[[Y_35]], %[[Y_44]] : f32
// CHECK-NEXT: %[[Y_46:[A-Za-z0-9_$.-]+]] = arith.constant 127 : i32
// CHECK-NEXT: %[[Y_47:[A-Za-z0-9_$.-]+]] = arith.addi %[[Y_39]], %[[Y_46]] : i32
// CHECK-NEXT: %[[Y_48:[A-Za-z0-9_$.-]+]] = arith.constant 23 : i32
// CHECK-NEXT: %[[Y_49:[A-Za-z0-9_$.-]+]] = arith.shli %[[Y_47]], %[[Y_48]] : i32
// CHECK-NEXT: %[[Y_50:[A-Za-z0-9_$.-]+]] = arith.bitcast %[[Y_49]] : i32 to f32
// CHECK-NEXT: %[[Y_51:[A-Za-z0-9_$.-]+]] = arith.mulf %[[Y_45]], %[[Y_50]] : f32
// CHECK-NEXT: %[[Y_52:[A-Za-z0-9_$.-]+]] = arith.constant 88.7228394 : f32
// CHECK-NEXT: %[[Y_53:[A-Za-z0-9_$.-]+]] = arith.cmpf ogt, %[[X]], %[[Y_52]] : f32
// CHECK-NEXT: %[[Y_54:[A-Za-z0-9_$.-]+]] = arith.constant 0x7f800000 : f32
// CHECK-NEXT: %[[Y_55:[A-Za-z0-9_$.-]+]] = arith.select %[[Y_53]], %[[Y_54]], %[[Y_51]] : f32
// CHECK-NEXT: %[[Y_56:[A-Za-z0-9_$.-]+]] = arith.cmpf uno, %[[X]], %[[X]] : f32
// CHECK-NEXT: %[[Y_57:[A-Za-z0-9_$.-]+]] = arith.select %[[Y_56]], %[[X]], %[[Y_55]] : f32
// CHECK-NEXT: func.return %[[Y_57]] : f32
// CHECK-NEXT: }
// exp: 2^n * p(r), the 2^n built in the exponent bits; NaN kept, inf past the largest f32.
func.func @exp_f32(%x: f32) -> f32 {
  %y = math.exp %x : f32
  func.return %y : f32
}
