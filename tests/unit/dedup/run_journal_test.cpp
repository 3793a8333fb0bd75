// run_journal: chunks come back as they went in, a torn tail is cut off, a journal of other
// settings is refused naming the difference, and decisions survive only whole.
#include "dedup/run_journal.hpp"

#include <gtest/gtest.h>

#include <sys/resource.h>
#include <unistd.h>

#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>

namespace simdup::detail {
namespace {

namespace fs = std::filesystem;

class RunJournal : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("simdup-journal-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

// Chunk `n`: n + 1 documents with distinct signatures, and a bad entry before the second.
chunk make_chunk(uint32_t n) {
  chunk c;
  c.count = n + 1;
  c.docs.resize(c.count);
  c.sigs.resize(c.count);
  for (uint32_t i = 0; i < c.count; ++i) {
    c.docs[i].id = "doc-" + std::to_string(n) + "-" + std::to_string(i);
    c.docs[i].id_is_number = i % 2 == 1;
    c.docs[i].format = i % 3 == 0 ? input_format::csv : input_format::jsonl;
    doc_signature& s = c.sigs[i];
    s.fingerprint = 0x9E3779B97F4A7C15ull * (n * 100 + i + 1);
    s.has_fingerprint = i != 1;
    s.url_key = n + 1;
    s.title_key = 0;
    s.content_key = 1000 + n * 10 + i;
    s.length = 17 * i;
    s.time = -5 + static_cast<int64_t>(i);
    s.field = i == 0 ? -INFINITY : 0.5 * i;
    s.invalid_utf8 = i;
    s.html = i == 2;
    for (uint32_t h = 0; h < 3 * i; ++h) s.shingles.push_back(h * 7919 + n);
    if (i % 2 == 0) s.band_keys = {n + 1ull, i + 2ull};
  }
  c.bad.push_back(
      {make_error(errc::invalid_input, "in.jsonl:2: not JSON"), "invalid_input", false, 1});
  for (std::size_t b = 0; b < c.count * 64; ++b)
    c.sketches.push_back(static_cast<uint8_t>(b * 7 + n));
  c.framed = static_cast<uint32_t>(c.count + c.bad.size());
  c.digest = 0xABCDEF00u + n;
  c.bytes = 1000 * (n + 1);
  c.input_bytes = 500 * (n + 1);
  return c;
}

void expect_same(const chunk& got, const chunk& want) {
  ASSERT_EQ(got.count, want.count);
  EXPECT_EQ(got.framed, want.framed);
  EXPECT_EQ(got.digest, want.digest);
  EXPECT_EQ(got.bytes, want.bytes);
  EXPECT_EQ(got.input_bytes, want.input_bytes);
  EXPECT_EQ(got.sketches, want.sketches);
  ASSERT_EQ(got.bad.size(), want.bad.size());
  for (std::size_t j = 0; j < got.bad.size(); ++j) {
    EXPECT_EQ(got.bad[j].error.code, want.bad[j].error.code);
    EXPECT_EQ(got.bad[j].error.message, want.bad[j].error.message);
    EXPECT_EQ(got.bad[j].reason, want.bad[j].reason);
    EXPECT_EQ(got.bad[j].input, want.bad[j].input);
    EXPECT_EQ(got.bad[j].before, want.bad[j].before);
  }
  for (std::size_t i = 0; i < got.count; ++i) {
    EXPECT_EQ(got.docs[i].id, want.docs[i].id);
    EXPECT_EQ(got.docs[i].id_is_number, want.docs[i].id_is_number);
    EXPECT_EQ(got.docs[i].format, want.docs[i].format);
    const doc_signature &a = got.sigs[i], &b = want.sigs[i];
    EXPECT_EQ(a.fingerprint, b.fingerprint);
    EXPECT_EQ(a.has_fingerprint, b.has_fingerprint);
    EXPECT_EQ(a.url_key, b.url_key);
    EXPECT_EQ(a.title_key, b.title_key);
    EXPECT_EQ(a.content_key, b.content_key);
    EXPECT_EQ(a.length, b.length);
    EXPECT_EQ(a.time, b.time);
    EXPECT_EQ(a.field, b.field);
    EXPECT_EQ(a.invalid_utf8, b.invalid_utf8);
    EXPECT_EQ(a.html, b.html);
    EXPECT_TRUE(a.shingles.empty());  // in the shingle file: the journal has their count
    EXPECT_EQ(got.shingle_counts.at(i), b.shingles.size());
    EXPECT_EQ(a.band_keys, b.band_keys);
  }
}

// The shingle file's size after chunk n.
uint64_t shingle_end(uint32_t n) {
  return 1000 * (uint64_t{n} + 1);
}

// Replays the journal in `dir`, checking each chunk against make_chunk; returns how many came.
uint32_t replay_all(run_journal& j, uint64_t shingle_file_bytes = UINT64_MAX) {
  uint32_t n = 0;
  resume_point point;
  const status st = j.replay(
      [&](chunk& c) {
        expect_same(c, make_chunk(n++));
        return status{};
      },
      point, shingle_file_bytes);
  EXPECT_TRUE(st) << st.error().message;
  EXPECT_EQ(point.chunks.size(), n);
  for (uint32_t i = 0; i < point.chunks.size(); ++i) {
    EXPECT_EQ(point.chunks[i].digest, make_chunk(i).digest);
    EXPECT_EQ(point.chunks[i].framed, make_chunk(i).framed);
  }
  return n;
}

TEST_F(RunJournal, ChunksComeBackAsTheyWentIn) {
  {
    auto j = run_journal::create(dir_, "settings A\ninput x\n", dir_ / "shingles.bin");
    ASSERT_TRUE(j) << j.error().message;
    for (uint32_t n = 0; n < 5; ++n) ASSERT_TRUE(j->append(make_chunk(n), shingle_end(n)));
    EXPECT_EQ(j->chunks(), 5u);
    EXPECT_EQ(j->documents(), 1u + 2 + 3 + 4 + 5);
  }
  auto j = run_journal::open(dir_, "settings A\ninput x\n");
  ASSERT_TRUE(j) << j.error().message;
  EXPECT_EQ(replay_all(*j), 5u);
  // Appending after a replay continues the journal.
  ASSERT_TRUE(j->append(make_chunk(5), shingle_end(5)));
  auto again = run_journal::open(dir_, "settings A\ninput x\n");
  ASSERT_TRUE(again);
  EXPECT_EQ(replay_all(*again), 6u);
  EXPECT_EQ(again->documents(), 21u);
}

TEST_F(RunJournal, ATornTailIsCutOffAndTheChunksBeforeItStay) {
  uint64_t whole = 0;
  {
    auto j = run_journal::create(dir_, "id\n", dir_ / "shingles.bin");
    ASSERT_TRUE(j);
    for (uint32_t n = 0; n < 3; ++n) ASSERT_TRUE(j->append(make_chunk(n), shingle_end(n)));
    whole = j->bytes();
    ASSERT_TRUE(j->append(make_chunk(3), shingle_end(3)));
  }
  const fs::path file = dir_ / "chunks.bin";
  // The fourth record cut in its middle (the process died while writing it).
  fs::resize_file(file, fs::file_size(file) - 10);
  {
    auto j = run_journal::open(dir_, "id\n");
    ASSERT_TRUE(j);
    EXPECT_EQ(replay_all(*j), 3u);
    EXPECT_EQ(fs::file_size(file), whole);
  }
  // A flipped byte in the third record's payload: its checksum fails, the first two stay.
  {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(whole - 5));
    f.put('\x7f');
  }
  auto j = run_journal::open(dir_, "id\n");
  ASSERT_TRUE(j);
  EXPECT_EQ(replay_all(*j), 2u);
}

TEST_F(RunJournal, AChunkWhoseShinglesTheFileLacksEndsTheJournal) {
  {
    auto j = run_journal::create(dir_, "id\n", dir_ / "shingles.bin");
    ASSERT_TRUE(j);
    for (uint32_t n = 0; n < 4; ++n) ASSERT_TRUE(j->append(make_chunk(n), shingle_end(n)));
  }
  // The process died with the fourth chunk's arrays still in the store's buffer.
  auto j = run_journal::open(dir_, "id\n");
  ASSERT_TRUE(j);
  EXPECT_EQ(j->shingle_file(), dir_ / "shingles.bin");
  EXPECT_EQ(replay_all(*j, shingle_end(2) + 10), 3u);
  ASSERT_TRUE(j->append(make_chunk(3), shingle_end(3)));  // read and signed again
  auto again = run_journal::open(dir_, "id\n");
  ASSERT_TRUE(again);
  EXPECT_EQ(replay_all(*again), 4u);
}

TEST_F(RunJournal, RemovingItRemovesAShingleFileElsewhere) {
  const fs::path elsewhere = dir_.string() + "-tmp";
  fs::create_directories(elsewhere);
  const fs::path file = elsewhere / "out.tmp-x.shingles";
  {
    auto j = run_journal::create(dir_, "id\n", file);
    ASSERT_TRUE(j);
    std::ofstream(file) << "arrays";
    ASSERT_TRUE(j->append(make_chunk(0), 6));
  }
  ASSERT_TRUE(fs::exists(file));
  remove_journal(dir_);
  EXPECT_FALSE(fs::exists(file));
  EXPECT_FALSE(fs::exists(dir_));
  fs::remove_all(elsewhere);
}

TEST_F(RunJournal, OtherSettingsAreRefusedNamingTheFirstDifference) {
  {
    auto j = run_journal::create(dir_, "k 3\ninput a.jsonl bytes=10\n", dir_ / "shingles.bin");
    ASSERT_TRUE(j);
    ASSERT_TRUE(j->append(make_chunk(0), shingle_end(0)));
  }
  auto j = run_journal::open(dir_, "k 3\ninput a.jsonl bytes=12\n");
  ASSERT_FALSE(j);
  EXPECT_EQ(j.error().code, errc::invalid_argument);
  EXPECT_NE(j.error().message.find("it had \"input a.jsonl bytes=10\", this run has \"input "
                                   "a.jsonl bytes=12\""),
            std::string::npos)
      << j.error().message;
  // The journal is untouched: the right settings still resume it.
  auto right = run_journal::open(dir_, "k 3\ninput a.jsonl bytes=10\n");
  ASSERT_TRUE(right);
  EXPECT_EQ(replay_all(*right), 1u);
  EXPECT_EQ(run_journal::open(dir_ / "missing", "x").error().code, errc::not_found);
}

TEST_F(RunJournal, AReplayErrorStopsTheReplay) {
  auto j = run_journal::create(dir_, "id\n", dir_ / "shingles.bin");
  ASSERT_TRUE(j);
  for (uint32_t n = 0; n < 3; ++n) ASSERT_TRUE(j->append(make_chunk(n), shingle_end(n)));
  auto opened = run_journal::open(dir_, "id\n");
  ASSERT_TRUE(opened);
  int calls = 0;
  resume_point point;
  const status st = opened->replay(
      [&](chunk&) {
        return ++calls == 2 ? status(make_error(errc::too_large, "limit")) : status{};
      },
      point, UINT64_MAX);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().message, "limit");
  EXPECT_EQ(calls, 2);
}

TEST_F(RunJournal, DecisionsSurviveOnlyWhole) {
  auto j = run_journal::create(dir_, "id\n", dir_ / "shingles.bin");
  ASSERT_TRUE(j);
  journal_decisions d;
  d.candidate_pairs = 7;
  d.rejected_pairs = 3;
  d.prefiltered_pairs = 2;
  d.minhash_pairs = 2;
  d.engine_memory_bytes = 4096;
  d.verify_spill_bytes = 11;
  d.column_spill_bytes = 13;
  d.against_candidate_pairs = 1;
  d.decisions.resize(4);
  d.decisions[1] = {0, dedup_layer::near, 3, 0.875f, 0};
  d.decisions[2] = {2, dedup_layer::none, -1, NAN, 0};
  d.decisions[3] = {9, dedup_layer::exact, 0, 1.0f, 2};
  EXPECT_FALSE(j->load_decisions(4));  // none saved yet
  ASSERT_TRUE(j->save_decisions(d));
  const auto got = j->load_decisions(4);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->candidate_pairs, 7u);
  EXPECT_EQ(got->rejected_pairs, 3u);
  EXPECT_EQ(got->prefiltered_pairs, 2u);
  EXPECT_EQ(got->minhash_pairs, 2u);
  EXPECT_EQ(got->engine_memory_bytes, 4096u);
  EXPECT_EQ(got->verify_spill_bytes, 11u);
  EXPECT_EQ(got->column_spill_bytes, 13u);
  EXPECT_EQ(got->against_candidate_pairs, 1u);
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(got->decisions[i].representative, d.decisions[i].representative);
    EXPECT_EQ(got->decisions[i].layer, d.decisions[i].layer);
    EXPECT_EQ(got->decisions[i].distance, d.decisions[i].distance);
    EXPECT_EQ(got->decisions[i].against, d.decisions[i].against);
    if (std::isnan(d.decisions[i].jaccard)) {
      EXPECT_TRUE(std::isnan(got->decisions[i].jaccard));
    } else {
      EXPECT_EQ(got->decisions[i].jaccard, d.decisions[i].jaccard);
    }
  }
  EXPECT_FALSE(j->load_decisions(5));  // decisions for another number of documents
  {
    std::fstream f(dir_ / "decisions.bin", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(20);
    f.put('\x01');
  }
  EXPECT_FALSE(j->load_decisions(4));  // damaged: the near layer runs again
}

TEST_F(RunJournal, AFailedAppendNamesTheBytesAndLeavesTheJournalWhole) {
  auto j = run_journal::create(dir_, "id\n", dir_ / "shingles.bin");
  ASSERT_TRUE(j);
  ASSERT_TRUE(j->append(make_chunk(0), shingle_end(0)));
  const uint64_t before = j->bytes();
  // Writes past the current size fail with EFBIG, as on a full disk.
  rlimit old{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old), 0);
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit small = old;
  small.rlim_cur = before + 8;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  const status st = j->append(make_chunk(40), shingle_end(40));
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &old), 0);
  std::signal(SIGXFSZ, old_handler);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().code, errc::no_space);
  EXPECT_NE(st.error().message.find("more needed"), std::string::npos) << st.error().message;
  EXPECT_NE(st.error().message.find("--resume"), std::string::npos) << st.error().message;
  EXPECT_EQ(fs::file_size(dir_ / "chunks.bin"), before);
  auto opened = run_journal::open(dir_, "id\n");
  ASSERT_TRUE(opened);
  EXPECT_EQ(replay_all(*opened), 1u);
}

}  // namespace
}  // namespace simdup::detail
