// The Redis backend where it differs from the others, against a real redis-server per test:
// its address, databases, clients sharing one server, the script reloaded after a flush,
// expiry riding on requests, and a server that is gone. What every backend promises is
// backend_contract_test.cpp, run on this one too.
#include <hiredis/hiredis.h>

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "store/backend.hpp"
#include "support/backend_calls.hpp"
#include "support/redis_server.hpp"

namespace simdup::detail {
namespace {

class RedisBackend : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("simdup_redis_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    config_.name = "c";
    config_.k = 3;
    config_.window_s = 100;
    server_.start(dir_);
    if (!server_.running()) GTEST_FAIL() << "the Redis backend cannot be tested (see above)";
  }
  void TearDown() override {
    server_.stop();
    std::filesystem::remove_all(dir_);
  }

  std::unique_ptr<backend> open(const std::string& url) {
    auto b = open_redis_backend(url);
    EXPECT_TRUE(b) << b.error().message;
    return b ? std::move(*b) : nullptr;
  }

  doc_outcome one(backend& b, doc_op op, std::string id, uint64_t fp, int64_t time) {
    return test_support::apply_one(b, config_, op, std::move(id), fp, time);
  }

  /// A command sent to the server directly (database 0), beside the backend; its reply's
  /// integer or text.
  std::string raw_command(std::vector<const char*> words) {
    redisContext* c = redisConnect("127.0.0.1", server_.port());
    EXPECT_TRUE(c && !c->err) << (c ? c->errstr : "out of memory");
    std::string out;
    if (c && !c->err) {
      auto* r = static_cast<redisReply*>(
          redisCommandArgv(c, static_cast<int>(words.size()), words.data(), nullptr));
      EXPECT_TRUE(r) << words[0];
      if (r && r->type == REDIS_REPLY_INTEGER) out = std::to_string(r->integer);
      if (r && (r->type == REDIS_REPLY_STATUS || r->type == REDIS_REPLY_STRING)) {
        out.assign(r->str, r->len);
      }
      if (r) freeReplyObject(r);
    }
    if (c) redisFree(c);
    return out;
  }

  std::filesystem::path dir_;
  collection_config config_;
  test_support::redis_server server_;
};

TEST_F(RedisBackend, RefusesBadAddressesByName) {
  const auto refused = [](const std::string& url) {
    auto b = open_redis_backend(url);
    EXPECT_FALSE(b) << url;
    if (b) return std::string();
    EXPECT_EQ(b.error().code, errc::invalid_argument) << url;
    return b.error().message;
  };
  EXPECT_EQ(refused("redis://127.0.0.1:0"), "--store redis://127.0.0.1:0: bad port");
  EXPECT_EQ(refused("redis://127.0.0.1:65536"), "--store redis://127.0.0.1:65536: bad port");
  EXPECT_EQ(refused("redis://127.0.0.1:x"), "--store redis://127.0.0.1:x: bad port");
  EXPECT_EQ(refused("redis://:6379"), "--store redis://:6379: no host");
  EXPECT_EQ(refused(server_.url() + "/x"), "--store " + server_.url() + "/x: bad database number");
  EXPECT_EQ(refused(server_.url() + "/-1"),
            "--store " + server_.url() + "/-1: bad database number");
}

TEST_F(RedisBackend, AServerThatIsNotThereIsUnavailableAtOpen) {
  const std::string url = server_.url();
  server_.stop();
  auto b = open_redis_backend(url);
  ASSERT_FALSE(b);
  EXPECT_EQ(b.error().code, errc::unavailable);
  EXPECT_NE(b.error().message.find("cannot connect to Redis at 127.0.0.1:" +
                                   std::to_string(server_.port())),
            std::string::npos)
      << b.error().message;
}

TEST_F(RedisBackend, AServerGoneAfterOpenFailsRequestsAsUnavailable) {
  auto b = open(server_.url());
  ASSERT_TRUE(b->create(config_));
  server_.stop();
  doc_input in{"a", 0xF0F0, 1000};
  doc_outcome out;
  auto st =
      b->apply(config_, doc_op::check_insert, std::span(&in, 1), 1000, 10, std::span(&out, 1));
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().code, errc::unavailable);
  auto stats = b->stats(config_);
  ASSERT_FALSE(stats);
  EXPECT_EQ(stats.error().code, errc::unavailable);
}

// Several processes share one server: what one client inserts, another finds at once.
TEST_F(RedisBackend, ClientsOfOneServerShareItsCollections) {
  auto first = open(server_.url());
  auto second = open(server_.url());
  ASSERT_TRUE(first->create(config_));
  EXPECT_TRUE(second->create(config_));  // the same settings: no conflict
  EXPECT_TRUE(one(*first, doc_op::check_insert, "a", 0xF0F0, 1000).inserted);
  const doc_outcome dup = one(*second, doc_op::check_insert, "b", 0xF0F1, 1000);
  EXPECT_FALSE(dup.inserted);
  ASSERT_EQ(dup.matches.size(), 1u);
  EXPECT_EQ(dup.matches[0].id, "a");
  EXPECT_EQ(dup.matches[0].distance, 1);
  ASSERT_TRUE(*second->remove(config_, "a"));
  EXPECT_TRUE(one(*first, doc_op::check, "q", 0xF0F0, 1000).matches.empty());
}

TEST_F(RedisBackend, DatabaseNumbersAreSeparateStores) {
  auto zero = open(server_.url());
  auto two = open(server_.url() + "/2");
  ASSERT_TRUE(two->create(config_));
  one(*two, doc_op::insert, "a", 0xF0F0, 1000);
  auto in_zero = zero->collections();
  ASSERT_TRUE(in_zero);
  EXPECT_TRUE(in_zero->empty());
  auto in_two = two->collections();
  ASSERT_TRUE(in_two);
  ASSERT_EQ(in_two->size(), 1u);
  EXPECT_EQ(raw_command({"DBSIZE"}), "0");  // the raw connection uses database 0
}

// The script is loaded once per server; after SCRIPT FLUSH (or a restart) it is loaded again.
TEST_F(RedisBackend, ReloadsItsScriptAfterAFlush) {
  auto b = open(server_.url());
  ASSERT_TRUE(b->create(config_));
  EXPECT_TRUE(one(*b, doc_op::check_insert, "a", 0xF0F0, 1000).inserted);
  EXPECT_EQ(raw_command({"SCRIPT", "FLUSH"}), "OK");
  const doc_outcome dup = one(*b, doc_op::check_insert, "b", 0xF0F1, 1000);
  EXPECT_FALSE(dup.inserted);
  ASSERT_EQ(dup.matches.size(), 1u);
  EXPECT_EQ(dup.matches[0].id, "a");
}

// Each request also expires a bounded share of what left the window (the service's expiry
// loop does the rest), so a request can find a document gone before expire() ran.
TEST_F(RedisBackend, RequestsExpireWhatLeftTheWindow) {
  auto b = open(server_.url());
  ASSERT_TRUE(b->create(config_));
  one(*b, doc_op::insert, "old", 0xAAAA, 1000);
  EXPECT_TRUE(one(*b, doc_op::check, "q", 0x5555, 1100).matches.empty());
  auto st = b->stats(config_);
  ASSERT_TRUE(st);
  EXPECT_EQ(st->documents, 0u);
  EXPECT_EQ(st->expired, 1u);
}

}  // namespace
}  // namespace simdup::detail
