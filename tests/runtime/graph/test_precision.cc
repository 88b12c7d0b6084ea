// The precision policy: its defaults (everything f32), the uniform f64 policy, per-layer-kind
// overrides, and the refusals (a dtype that cannot be a master copy, any mix: mixed precision is not
// implemented yet); the master dtypes ParamStore accepts.
#include <gtest/gtest.h>

#include "runtime/graph/precision.h"
#include "tests/support/test_support.h"

namespace baton {
namespace {

Precision all(DType dtype) { return {dtype, dtype, dtype, dtype, dtype}; }

TEST(PrecisionPolicy, TheDefaultIsEverythingF32) {
  const PrecisionPolicy p;
  EXPECT_EQ(kDefaultDType, DType::f32);
  EXPECT_EQ(p.defaults(), all(DType::f32));
  EXPECT_EQ(p.master(), DType::f32);
  EXPECT_EQ(p.compute(), DType::f32);
  EXPECT_EQ(p.activations(), DType::f32);
  EXPECT_EQ(p.gradients(), DType::f32);
  EXPECT_EQ(p.all_reduce(), DType::f32);
  EXPECT_EQ(p.of("conv2d"), all(DType::f32));
  EXPECT_TRUE(p.overrides().empty());
  EXPECT_EQ(p.str(), "uniform f32");
}

TEST(PrecisionPolicy, UniformF64IsEverythingF64) {
  const PrecisionPolicy p = PrecisionPolicy::uniform(DType::f64);
  EXPECT_EQ(p.defaults(), all(DType::f64));
  EXPECT_EQ(p.master(), DType::f64);
  EXPECT_EQ(p.all_reduce(), DType::f64);
  EXPECT_EQ(p.of("linear"), all(DType::f64));
  EXPECT_EQ(p.str(), "uniform f64");
  EXPECT_EQ(PrecisionPolicy::uniform(DType::f32).defaults(), PrecisionPolicy().defaults());
}

TEST(PrecisionPolicy, AnOverrideAppliesToItsLayerKindOnly) {
  const PrecisionPolicy p(all(DType::f64), {{"batch_norm2d", all(DType::f64)}});
  EXPECT_EQ(p.overrides().size(), 1u);
  EXPECT_EQ(&p.of("batch_norm2d"), &p.overrides().at("batch_norm2d"));
  EXPECT_EQ(&p.of("conv2d"), &p.defaults());
}

TEST(PrecisionPolicy, AMasterDtypeOtherThanF32OrF64IsRefused) {
  EXPECT_ERROR_MENTIONS(
      "precision policy: the master (parameter) dtype: dtype bf16 is not supported (expected f32 "
      "or f64)",
      PrecisionPolicy::uniform(DType::bf16));
  EXPECT_ERROR_MENTIONS("dtype f16 is not supported", PrecisionPolicy::uniform(DType::f16));
  EXPECT_ERROR_MENTIONS("dtype i64 is not supported", PrecisionPolicy::uniform(DType::i64));
}

TEST(PrecisionPolicy, EveryMixIsRefusedAsNotImplementedYet) {
  Precision bf16_compute = all(DType::f32);
  bf16_compute.compute = DType::bf16;
  EXPECT_ERROR_MENTIONS(
      "precision policy: the default is master f32, compute bf16, activations f32, gradients f32, "
      "all-reduce f32; mixed precision is not implemented yet",
      PrecisionPolicy{bf16_compute});
  Precision f16_activations = all(DType::f32);
  f16_activations.activations = DType::f16;
  f16_activations.gradients = DType::f16;
  EXPECT_ERROR_MENTIONS("mixed precision is not implemented yet", PrecisionPolicy{f16_activations});
  Precision f64_all_reduce = all(DType::f32);
  f64_all_reduce.all_reduce = DType::f64;
  EXPECT_ERROR_MENTIONS("mixed precision is not implemented yet", PrecisionPolicy{f64_all_reduce});
  // An override of another dtype than the default's is a mix too.
  EXPECT_ERROR_MENTIONS(
      "precision policy: layer kind 'batch_norm2d' is master f64, compute f64, activations f64, "
      "gradients f64, all-reduce f64; mixed precision is not implemented yet",
      PrecisionPolicy(all(DType::f32), {{"batch_norm2d", all(DType::f64)}}));
}

TEST(PrecisionPolicy, MasterDtypesAreF32AndF64) {
  EXPECT_TRUE(is_master_dtype(DType::f32));
  EXPECT_TRUE(is_master_dtype(DType::f64));
  for (DType d : {DType::f16, DType::bf16, DType::i32, DType::i64, DType::u8}) EXPECT_FALSE(is_master_dtype(d));
  EXPECT_EQ(master_dtypes_text(), "f32 or f64");
  EXPECT_NO_THROW(check_master_dtype(DType::f64, "here"));
  EXPECT_ERROR_MENTIONS("here: dtype f16 is not supported (expected f32 or f64)",
                        check_master_dtype(DType::f16, "here"));
}

}  // namespace
}  // namespace baton
