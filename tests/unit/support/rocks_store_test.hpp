// A fixture for tests of the RocksDB backend across restarts: a store directory per test, a
// copy of it as a kill -9 would leave it, and one-document calls.
#pragma once

#include <gtest/gtest.h>
#include <rocksdb/db.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "store/backend.hpp"
#include "support/backend_calls.hpp"

namespace simdup::test_support {

class rocks_store_test : public ::testing::Test {
 protected:
  void SetUp() override {
    // Appended, not "simdup_store_" + to_string: GCC 12's -Wrestrict misreads that at -O2.
    std::string name = "simdup_store_";
    name += std::to_string(::getpid());
    name += "_";
    name += ::testing::UnitTest::GetInstance()->current_test_info()->name();
    dir_ = std::filesystem::temp_directory_path() / name;
    std::filesystem::remove_all(dir_);
    std::filesystem::remove_all(crashed());
    config_.name = "c";
    config_.k = 3;
    config_.window_s = 0;
  }
  void TearDown() override {
    std::filesystem::remove_all(dir_);
    std::filesystem::remove_all(crashed());
  }

  std::filesystem::path crashed() const { return dir_.string() + ".crashed"; }

  /// Segment files only at close (or when expire() finds none), so tests control them.
  std::unique_ptr<detail::backend> open(const std::filesystem::path& dir) {
    auto b = detail::open_rocks_backend(dir.string(), {0, 0});
    EXPECT_TRUE(b) << b.error().message;
    return b ? std::move(*b) : nullptr;
  }

  detail::doc_outcome one(detail::backend& b, detail::doc_op op, std::string id, uint64_t fp,
                          int64_t time) {
    return apply_one(b, config_, op, std::move(id), fp, time);
  }

  uint64_t documents(detail::backend& b) {
    auto st = b.stats(config_);
    EXPECT_TRUE(st) << st.error().message;
    return st ? st->documents : ~uint64_t{0};
  }

  /// Ids matching `fp` exactly (check at `time`).
  std::vector<std::string> ids_at(detail::backend& b, uint64_t fp, int64_t time = 1000) {
    std::vector<std::string> ids;
    for (const auto& m : one(b, detail::doc_op::check, "q", fp, time).matches) {
      if (m.distance == 0) ids.push_back(m.id);
    }
    return ids;
  }

  /// A copy of the store as a kill -9 would leave it: taken while the backend is open, after
  /// its writes were acknowledged (so synced), without the segment file saved at close.
  void copy_as_crashed() {
    std::filesystem::copy(dir_, crashed(), std::filesystem::copy_options::recursive);
  }

  /// Opens the closed store under dir_ with RocksDB itself (every column family) and calls
  /// body(db): for tests that write what another build would have written.
  template <class Body>
  void with_raw_db(Body&& body) {
    std::vector<std::string> names;
    ASSERT_TRUE(rocksdb::DB::ListColumnFamilies(rocksdb::DBOptions(), dir_.string(), &names).ok());
    std::vector<rocksdb::ColumnFamilyDescriptor> families;
    for (const auto& name : names) families.emplace_back(name, rocksdb::ColumnFamilyOptions());
    std::vector<rocksdb::ColumnFamilyHandle*> handles;
    rocksdb::DB* raw = nullptr;
    ASSERT_TRUE(
        rocksdb::DB::Open(rocksdb::DBOptions(), dir_.string(), families, &handles, &raw).ok());
    std::unique_ptr<rocksdb::DB> db(raw);
    body(*db);
    for (auto* h : handles) ASSERT_TRUE(db->DestroyColumnFamilyHandle(h).ok());
  }

  /// Fingerprints far apart (distance >= 8), so each document only matches itself.
  static uint64_t fp(int i) {
    return uint64_t{0xFF} << (8 * (i % 8)) ^ (i >= 8 ? ~uint64_t{0} : 0);
  }

  std::filesystem::path dir_;
  detail::collection_config config_;
};

}  // namespace simdup::test_support
