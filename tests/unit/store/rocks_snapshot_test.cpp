// Segment files of the RocksDB backend: a restart loads the saved index and replays only what
// came after it; a missing, stale or corrupt file falls back to a rebuild from RocksDB.
#include <gtest/gtest.h>
#include <rocksdb/db.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "store/backend.hpp"
#include "support/rocks_store_test.hpp"

namespace simdup::detail {
namespace {

namespace fs = std::filesystem;

class RocksSnapshot : public test_support::rocks_store_test {
 protected:
  std::vector<fs::path> segment_files(const fs::path& dir) const {
    std::vector<fs::path> out;
    if (!fs::exists(dir / "segments")) return out;
    for (const auto& e : fs::directory_iterator(dir / "segments")) out.push_back(e.path());
    return out;
  }
};

TEST_F(RocksSnapshot, RestartAfterCrashLoadsTheFileAndReplaysNewerChanges) {
  {
    auto b = open(dir_);
    ASSERT_TRUE(b->create(config_));
    for (int i = 0; i < 4; ++i) one(*b, doc_op::insert, "d" + std::to_string(i), fp(i), 1000);
  }
  ASSERT_EQ(segment_files(dir_).size(), 1u);
  {
    auto b = open(dir_);
    EXPECT_EQ(documents(*b), 4u);
    // After the file: a new document, a deletion, a replacement (same id, new fingerprint).
    one(*b, doc_op::insert, "d4", fp(4), 1000);
    ASSERT_TRUE(*b->remove(config_, "d0"));
    one(*b, doc_op::insert, "d1", fp(9), 1000);
    EXPECT_TRUE(one(*b, doc_op::check_insert, "d5", fp(5), 1000).inserted);
    copy_as_crashed();
  }
  auto b = open(crashed());
  auto st = b->stats(config_);
  ASSERT_TRUE(st);
  EXPECT_EQ(st->documents, 5u);  // d1..d5
  EXPECT_TRUE(ids_at(*b, fp(0)).empty());
  EXPECT_TRUE(ids_at(*b, fp(1)).empty());
  EXPECT_EQ(ids_at(*b, fp(9)), std::vector<std::string>{"d1"});
  for (int i : {2, 3, 4, 5}) {
    EXPECT_EQ(ids_at(*b, fp(i)), std::vector<std::string>{"d" + std::to_string(i)}) << i;
  }
  // Numbers are not reused: a new document gets its own, and the old ones stay distinct.
  EXPECT_TRUE(one(*b, doc_op::check_insert, "d6", fp(6), 1000).inserted);
  EXPECT_EQ(ids_at(*b, fp(6)), std::vector<std::string>{"d6"});
  EXPECT_EQ(ids_at(*b, fp(5)), std::vector<std::string>{"d5"});
}

TEST_F(RocksSnapshot, CorruptFileIsRebuiltFromTheStore) {
  {
    auto b = open(dir_);
    ASSERT_TRUE(b->create(config_));
    for (int i = 0; i < 6; ++i) one(*b, doc_op::insert, "d" + std::to_string(i), fp(i), 1000);
  }
  const auto files = segment_files(dir_);
  ASSERT_EQ(files.size(), 1u);
  {
    // Same size, one byte changed in the middle: only the checksum can tell.
    std::fstream f(files[0], std::ios::in | std::ios::out | std::ios::binary);
    const auto size = fs::file_size(files[0]);
    f.seekg(static_cast<std::streamoff>(size / 2));
    char byte = 0;
    f.read(&byte, 1);
    byte = static_cast<char>(byte ^ 0x5A);
    f.seekp(static_cast<std::streamoff>(size / 2));
    f.write(&byte, 1);
  }
  auto b = open(dir_);
  EXPECT_EQ(documents(*b), 6u);
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(ids_at(*b, fp(i)), std::vector<std::string>{"d" + std::to_string(i)}) << i;
  }
}

TEST_F(RocksSnapshot, StaleFileIsRebuiltFromTheStore) {
  fs::path old_copy = dir_.string() + ".old";
  {
    auto b = open(dir_);
    ASSERT_TRUE(b->create(config_));
    one(*b, doc_op::insert, "d0", fp(0), 1000);
  }
  auto files = segment_files(dir_);
  ASSERT_EQ(files.size(), 1u);
  fs::copy_file(files[0], old_copy);
  {
    auto b = open(dir_);
    ASSERT_TRUE(*b->remove(config_, "d0"));
    for (int i = 1; i < 5; ++i) one(*b, doc_op::insert, "d" + std::to_string(i), fp(i), 1000);
  }
  files = segment_files(dir_);
  ASSERT_EQ(files.size(), 1u);  // the older file was replaced
  // An old file under the current name (a restored backup, say): not what the record covers.
  fs::copy_file(old_copy, files[0], fs::copy_options::overwrite_existing);
  fs::remove(old_copy);
  auto b = open(dir_);
  EXPECT_EQ(documents(*b), 4u);
  EXPECT_TRUE(ids_at(*b, fp(0)).empty());
  for (int i = 1; i < 5; ++i) {
    EXPECT_EQ(ids_at(*b, fp(i)), std::vector<std::string>{"d" + std::to_string(i)}) << i;
  }
}

// Writers at once: the group commit acknowledges an insert only after a sync that covers it
// (WAL buffer written out and fsynced), so a copy taken right after the last answer, as a
// kill -9 leaves the store, holds every acknowledged document.
TEST_F(RocksSnapshot, ConcurrentAcknowledgedInsertsSurviveACrash) {
  constexpr int threads = 8;
  constexpr int per_thread = 40;
  const auto fp_of = [](int t, int i) {
    uint64_t z = static_cast<uint64_t>(t * 1000 + i) + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  };
  const auto id_of = [](int t, int i) { return std::to_string(t) + "-" + std::to_string(i); };
  {
    auto b = open(dir_);
    ASSERT_TRUE(b->create(config_));
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] {
        for (int i = 0; i < per_thread; ++i)
          one(*b, doc_op::insert, id_of(t, i), fp_of(t, i), 1000);
      });
    }
    for (auto& th : pool) th.join();
    copy_as_crashed();
  }
  auto b = open(crashed());
  EXPECT_EQ(documents(*b), uint64_t{threads * per_thread});
  for (int t = 0; t < threads; ++t) {
    for (int i = 0; i < per_thread; ++i) {
      EXPECT_EQ(ids_at(*b, fp_of(t, i)), std::vector<std::string>{id_of(t, i)}) << t << " " << i;
    }
  }
}

TEST_F(RocksSnapshot, ExpiredDocumentsStayGoneAfterACrash) {
  config_.window_s = 100;
  {
    auto b = open(dir_);
    ASSERT_TRUE(b->create(config_));
    one(*b, doc_op::insert, "old", fp(0), 1000);
    one(*b, doc_op::insert, "new", fp(1), 1050);
  }
  {
    auto b = open(dir_);
    ASSERT_TRUE(b->expire(config_, 1100));
    EXPECT_EQ(documents(*b), 1u);
    copy_as_crashed();
  }
  auto b = open(crashed());
  EXPECT_EQ(documents(*b), 1u);
  // Even a query whose own time still admits the old document does not report it.
  EXPECT_TRUE(ids_at(*b, fp(0), 1099).empty());
  EXPECT_EQ(ids_at(*b, fp(1), 1099), std::vector<std::string>{"new"});
}

TEST_F(RocksSnapshot, ExpireSavesAFirstFile) {
  auto b = open(dir_);
  ASSERT_TRUE(b->create(config_));
  ASSERT_TRUE(b->expire(config_, 1000));
  EXPECT_TRUE(segment_files(dir_).empty());  // nothing to save yet
  one(*b, doc_op::insert, "d0", fp(0), 1000);
  ASSERT_TRUE(b->expire(config_, 1000));
  EXPECT_EQ(segment_files(dir_).size(), 1u);
}

// The same id twice in one request: the later document replaces the earlier one, and nothing
// of the earlier one is left in the store (a rebuild or a replay would find it).
TEST_F(RocksSnapshot, SameIdTwiceInOneRequestLeavesOneDocument) {
  {
    auto b = open(dir_);
    ASSERT_TRUE(b->create(config_));
    one(*b, doc_op::insert, "seed", fp(7), 1000);
    ASSERT_TRUE(b->expire(config_, 1000));  // the first file
    ASSERT_EQ(segment_files(dir_).size(), 1u);
    std::vector<doc_input> batch = {{"x", fp(0), 1000}, {"y", fp(1), 1000}, {"x", fp(2), 1000}};
    std::vector<doc_outcome> out(batch.size());
    ASSERT_TRUE(b->apply(config_, doc_op::insert, batch, 1000, 10, out));
    EXPECT_EQ(documents(*b), 3u);
    EXPECT_TRUE(ids_at(*b, fp(0)).empty());
    EXPECT_EQ(ids_at(*b, fp(2)), std::vector<std::string>{"x"});
    copy_as_crashed();  // replays the request after the first file
  }
  for (const fs::path& dir : {dir_, crashed()}) {
    if (dir == dir_) fs::remove_all(dir_ / "segments");  // and a full rebuild here
    auto b = open(dir);
    EXPECT_EQ(documents(*b), 3u) << dir;
    EXPECT_TRUE(ids_at(*b, fp(0)).empty()) << dir;
    EXPECT_EQ(ids_at(*b, fp(2)), std::vector<std::string>{"x"}) << dir;
    EXPECT_EQ(ids_at(*b, fp(1)), std::vector<std::string>{"y"}) << dir;
  }
}

// A store of an earlier format (no format key, n/ values holding only ids) is refused instead
// of being misread.
TEST_F(RocksSnapshot, StoreOfAnotherFormatIsRefused) {
  {
    auto b = open(dir_);
    ASSERT_TRUE(b->create(config_));
  }
  with_raw_db([](rocksdb::DB& db) { ASSERT_TRUE(db.Delete(rocksdb::WriteOptions(), "f").ok()); });
  auto b = open_rocks_backend(dir_.string());
  ASSERT_FALSE(b);
  EXPECT_EQ(b.error().code, errc::unsupported);
  EXPECT_NE(b.error().message.find("re-create"), std::string::npos) << b.error().message;
}

}  // namespace
}  // namespace simdup::detail
