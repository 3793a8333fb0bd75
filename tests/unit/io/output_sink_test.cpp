// output_sink files: written under a temporary name, renamed on commit, given the permissions
// any new file gets (the umask), without touching the process's umask.
#include <gtest/gtest.h>

#include <simdup/output_sink.hpp>

#include "io/io_test_util.hpp"

#include <sys/stat.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace simdup {
namespace {

using test::temp_dir;

/// The process's umask as the kernel reports it (/proc/self/status, "Umask:\t0022"), read
/// without umask(2), which would change it.
int current_umask() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Umask:", 0) == 0) return std::stoi(line.substr(6), nullptr, 8);
  }
  return -1;
}

/// Sets the umask for one test and restores it.
class umask_scope {
 public:
  explicit umask_scope(mode_t mask) : saved_(::umask(mask)) {}
  ~umask_scope() { ::umask(saved_); }
  umask_scope(const umask_scope&) = delete;
  umask_scope& operator=(const umask_scope&) = delete;

 private:
  mode_t saved_;
};

std::size_t files_in(const std::filesystem::path& dir) {
  return static_cast<std::size_t>(std::distance(std::filesystem::directory_iterator(dir),
                                                std::filesystem::directory_iterator()));
}

TEST(OutputSink, CommittedFileHasTheUmasksPermissionsAndNoTemporaryIsLeft) {
  temp_dir dir;
  for (const mode_t mask : {mode_t{022}, mode_t{027}, mode_t{077}}) {
    umask_scope scope(mask);
    const std::string path = (dir.path() / ("out" + std::to_string(mask))).string();
    auto sink = output_sink::open(path);
    ASSERT_TRUE(sink) << sink.error().message;
    ASSERT_TRUE(sink->write("one line\n"));
    ASSERT_FALSE(std::filesystem::exists(path)) << "visible before commit";
    ASSERT_TRUE(sink->commit());
    struct stat st {};
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0666 & ~mask) << "umask " << std::oct << mask;
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    EXPECT_EQ(text.str(), "one line\n");
  }
  EXPECT_EQ(files_in(dir.path()), 3u);
}

TEST(OutputSink, AnUncommittedSinkLeavesNothing) {
  temp_dir dir;
  const std::string path = (dir.path() / "out.jsonl").string();
  {
    auto sink = output_sink::open(path);
    ASSERT_TRUE(sink);
    ASSERT_TRUE(sink->write("partial\n"));
    EXPECT_EQ(files_in(dir.path()), 1u);  // the temporary file
  }
  EXPECT_EQ(files_in(dir.path()), 0u);
}

TEST(OutputSink, AMissingDirectoryIsAClearError) {
  temp_dir dir;
  const std::string path = (dir.path() / "no_such_dir" / "out.jsonl").string();
  auto sink = output_sink::open(path);
  ASSERT_FALSE(sink);
  EXPECT_EQ(sink.error().code, errc::io_error);
  EXPECT_NE(sink.error().message.find("cannot create " + path + ".tmp."), std::string::npos)
      << sink.error().message;
  EXPECT_NE(sink.error().message.find("No such file or directory"), std::string::npos);
}

// A library opening files must not change process-wide state that other threads rely on: the
// umask read as umask(0) then umask(mask) was 0 for an instant, and a file another thread
// created then got mode 0666. A watcher thread reads the umask while sinks are opened.
TEST(OutputSink, OpeningNeverChangesTheProcessUmask) {
  temp_dir dir;
  umask_scope scope(022);
  ASSERT_EQ(current_umask(), 022);
  std::atomic<bool> done{false};
  std::atomic<int> changed_to{-1};
  std::thread watcher([&] {
    while (!done.load()) {
      if (const int mask = current_umask(); mask != 022) changed_to.store(mask);
    }
  });
  for (int i = 0; i < 3000 && changed_to.load() < 0; ++i) {
    // Appended, not "f" + to_string: GCC 12's -Wrestrict misreads that at -O2 (its PR 105329).
    std::string name = "f";
    name += std::to_string(i % 4);
    auto sink = output_sink::open((dir.path() / name).string());
    ASSERT_TRUE(sink);
  }
  done.store(true);
  watcher.join();
  EXPECT_EQ(changed_to.load(), -1) << "the umask was " << std::oct << changed_to.load();
}

}  // namespace
}  // namespace simdup
