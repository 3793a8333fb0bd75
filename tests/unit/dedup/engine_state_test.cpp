// The state both dedup engines share: ordinals, fingerprints, distances, the shingle store.
#include <simdup/dedup.hpp>

#include "dedup/engine_state.hpp"

#include <gtest/gtest.h>

namespace simdup::detail {
namespace {

doc_signature signature(uint64_t fingerprint, bool has_fingerprint = true) {
  doc_signature s;
  s.fingerprint = fingerprint;
  s.has_fingerprint = has_fingerprint;
  return s;
}

dedup_options unverified() {
  dedup_options o;
  o.detection.verify.reset();
  o.detection.minhash = minhash_options{};
  o.detection.clustering = cluster_linking::star;
  return o;
}

TEST(EngineState, AdmitNumbersDocumentsFromZero) {
  auto state = engine_state::create(unverified());
  ASSERT_TRUE(state);
  EXPECT_EQ(state->admit(signature(0b1011)).value(), 0u);
  EXPECT_EQ(state->admit(signature(0b0001)).value(), 1u);
  EXPECT_EQ(state->admit(signature(0, false)).value(), 2u);
  EXPECT_EQ(state->count, 3u);
  EXPECT_EQ(state->fingerprints, (std::vector<uint64_t>{0b1011, 0b0001, 0}));
}

TEST(EngineState, DistanceIsMinusOneWhenEitherDocumentIsShort) {
  auto state = engine_state::create(unverified());
  ASSERT_TRUE(state);
  ASSERT_TRUE(state->admit(signature(0xFF00)));
  ASSERT_TRUE(state->admit(signature(0x0F0F)));
  ASSERT_TRUE(state->admit(signature(0xFF00, false)));
  EXPECT_EQ(state->distance(0, 1), 8);  // 0xFF00 ^ 0x0F0F = 0xF00F
  EXPECT_EQ(state->distance(1, 0), 8);
  EXPECT_EQ(state->distance(0, 0), 0);
  EXPECT_EQ(state->distance(0, 2), -1);
  EXPECT_EQ(state->distance(2, 1), -1);
}

TEST(EngineState, ShingleStoreOnlyWhenNearPairsAreVerified) {
  dedup_options verified;  // defaults: jaccard:0.8
  verified.detection.verify->tmp_dir = ::testing::TempDir();
  auto with = engine_state::create(verified);
  ASSERT_TRUE(with);
  EXPECT_TRUE(with->shingles.has_value());
  ASSERT_TRUE(with->shingles->put(0, std::vector<uint32_t>{1, 2, 3}));
  ASSERT_TRUE(with->shingles->flush());
  EXPECT_GT(with->spilled_bytes(), 0u);

  dedup_options no_near = verified;
  no_near.near_layer = false;
  auto without_near = engine_state::create(no_near);
  ASSERT_TRUE(without_near);
  EXPECT_FALSE(without_near->shingles.has_value());
  EXPECT_EQ(without_near->spilled_bytes(), 0u);

  auto unverified_state = engine_state::create(unverified());
  ASSERT_TRUE(unverified_state);
  EXPECT_FALSE(unverified_state->shingles.has_value());
}

TEST(EngineState, RejectsAnInvalidProfileByParameter) {
  dedup_options o = unverified();
  o.detection.k = 40;
  auto state = engine_state::create(o);
  ASSERT_FALSE(state);
  EXPECT_EQ(state.error().code, errc::invalid_argument);
  EXPECT_NE(state.error().message.find("k must be in 0..32"), std::string::npos);
}

TEST(EngineState, MemoryCountsTablesAndFingerprints) {
  auto state = engine_state::create(unverified());
  ASSERT_TRUE(state);
  for (uint64_t i = 0; i < 1000; ++i) {
    doc_signature s = signature(i);
    s.content_key = i + 1;
    ASSERT_TRUE(state->admit(s));
    state->contents.find_or_insert(s.content_key, static_cast<uint32_t>(i));
  }
  EXPECT_GE(state->memory_bytes(), 1000 * sizeof(uint64_t) + state->contents.memory_bytes());
}

}  // namespace
}  // namespace simdup::detail
