// Collection settings: the verify, sketch and minhash settings and the k range, their JSON form,
// and settings stored before they existed (which keep what they had: no verification, sketches
// of 128 hashes, no bands).
#include <gtest/gtest.h>

#include <simdup/plan.hpp>

#include <string>

#include "store/backend.hpp"

namespace simdup::detail {
namespace {

TEST(CollectionConfig, DefaultsVerifyAtACheapK) {
  collection_config c;
  c.name = "news";
  EXPECT_EQ(c.k, 4);
  EXPECT_EQ(c.verify, 0.8);
  EXPECT_EQ(to_json(c),
            R"({"name":"news","k":4,"window_s":604800,"compat":"none","shingle_width":4,)"
            R"("features":"shingles","top_k":0,"verify":"jaccard:0.8","sketch":512,)"
            R"("minhash":"10x6"})");
  // Verification with MinHash bands: the profile dedup's signer computes the keys from.
  const detection_profile p = detection_for(c);
  EXPECT_EQ(p.minhash.bands, 10u);
  EXPECT_EQ(p.minhash.rows, 6u);
  ASSERT_TRUE(p.verify);
  EXPECT_EQ(p.verify->max_hashes, 512u);
  // Without verification nothing would confirm a band's candidates: no bands.
  c.verify = 0;
  EXPECT_EQ(detection_for(c).minhash.bands, 0u);
}

TEST(CollectionConfig, SketchAndMinhashRoundTripAndAreCheckedByName) {
  collection_config base;
  base.name = "c";
  auto c = config_from_json(R"({"sketch":128,"minhash":"16x4"})", base);
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->sketch, 128);
  EXPECT_EQ(minhash_setting(c->minhash), "16x4");
  auto again = config_from_json(to_json(*c), base);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->sketch, 128);
  EXPECT_EQ(again->minhash.bands, 16u);
  EXPECT_EQ(again->minhash.rows, 4u);
  c = config_from_json(R"({"minhash":"off"})", base);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->minhash.bands, 0u);
  EXPECT_EQ(minhash_setting(c->minhash), "off");
  for (const char* body : {R"({"minhash":"65x2"})", R"({"minhash":"10"})"}) {
    c = config_from_json(body, base);
    ASSERT_FALSE(c) << body;
    ASSERT_TRUE(c.error().parameter);
    EXPECT_EQ(c.error().parameter->name, "minhash");
  }
  c = config_from_json(R"({"minhash":10})", base);
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().code, errc::invalid_input);
  for (const char* body : {R"({"sketch":15})", R"({"sketch":4097})"}) {
    c = config_from_json(body, base);
    ASSERT_FALSE(c) << body;
    ASSERT_TRUE(c.error().parameter);
    EXPECT_EQ(c.error().parameter->name, "sketch");
    EXPECT_EQ(c.error().parameter->allowed, "16..4096");
  }
}

TEST(CollectionConfig, VerifyRoundTripsThroughJson) {
  collection_config base;
  base.name = "c";
  for (const char* spec : {"off", "jaccard:0.8", "jaccard:1", "jaccard:0.05", "jaccard:0.333"}) {
    auto c = config_from_json(std::string(R"({"verify":")") + spec + "\"}", base);
    ASSERT_TRUE(c) << spec << ": " << c.error().message;
    EXPECT_EQ(verify_setting(c->verify), spec);
    auto again = config_from_json(to_json(*c), base);
    ASSERT_TRUE(again);
    EXPECT_EQ(again->verify, c->verify) << spec;
  }
}

TEST(CollectionConfig, BadVerifyAndKAreRefusedByName) {
  collection_config base;
  base.name = "c";
  for (const char* body : {R"({"verify":"jaccard:0"})", R"({"verify":"jaccard:1.01"})",
                           R"({"verify":"on"})", R"({"verify":"jaccard:"})"}) {
    auto c = config_from_json(body, base);
    ASSERT_FALSE(c) << body;
    EXPECT_EQ(c.error().code, errc::invalid_argument);
    EXPECT_NE(c.error().message.find("verify"), std::string::npos) << c.error().message;
    ASSERT_TRUE(c.error().parameter) << body;
    EXPECT_EQ(c.error().parameter->name, "verify");
  }
  auto c = config_from_json(R"({"verify":0.8})", base);
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().code, errc::invalid_input);
  // The online index's range, 0 to max_index_k.
  EXPECT_TRUE(config_from_json(R"({"k":0})", base));
  EXPECT_TRUE(config_from_json(R"({"k":)" + std::to_string(max_index_k) + "}", base));
  c = config_from_json(R"({"k":)" + std::to_string(max_index_k + 1) + "}", base);
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().message.find("k must be in 0..32, got 33"), std::string::npos);
  ASSERT_TRUE(c.error().parameter);
  EXPECT_EQ(c.error().parameter->name, "k");
  EXPECT_EQ(c.error().parameter->value, "33");
  c = config_from_json(R"({"top_k":1001})", base);
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().message, "top_k must be between 0 and 1000");
  EXPECT_EQ(c.error().parameter->allowed, "0..1000");
}

TEST(CollectionConfig, SettingsStoredWithoutVerifyKeepNone) {
  // As format 4 builds stored them.
  const std::string stored =
      R"({"name":"old","k":3,"window_s":0,"compat":"none","shingle_width":4,)"
      R"("features":"shingles","top_k":0})";
  auto c = config_from_json(stored, stored_config_base("old"));
  ASSERT_TRUE(c);
  EXPECT_EQ(c->k, 3);
  EXPECT_EQ(c->verify, 0);
  // Sketches stored before the setting were 128 hashes, and there were no bands.
  EXPECT_EQ(c->sketch, 128);
  EXPECT_EQ(c->minhash.bands, 0u);
  // A new collection given the same fields gets today's default instead.
  collection_config fresh;
  fresh.name = "old";
  auto d = config_from_json(stored, fresh);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->verify, 0.8);
}

}  // namespace
}  // namespace simdup::detail
