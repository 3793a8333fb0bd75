// One-document calls into a store backend for the store and service unit tests.
#pragma once

#include <gtest/gtest.h>

#include <span>
#include <string>
#include <utility>

#include "store/backend.hpp"

namespace simdup::test_support {

/// Applies `op` to one document at `time` (also "now") and returns its outcome; a failed call
/// is a test failure (and an empty outcome).
inline detail::doc_outcome apply_one(detail::backend& b, const detail::collection_config& config,
                                     detail::doc_op op, std::string id, uint64_t fp, int64_t time) {
  detail::doc_input in{std::move(id), fp, time};
  detail::doc_outcome out;
  auto st = b.apply(config, op, std::span(&in, 1), time, 10, std::span(&out, 1));
  EXPECT_TRUE(st) << st.error().message;
  return out;
}

}  // namespace simdup::test_support
