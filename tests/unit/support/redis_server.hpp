// A throwaway redis-server for the Redis backend's unit tests, started as the e2e harness starts
// one (tests/e2e/service_harness.py, Redis): a free loopback port, no snapshots, no append-only
// file, its own directory. A missing redis-server is a test failure that says so, never a skip.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "store/backend.hpp"

extern char** environ;

namespace simdup::test_support {

class redis_server {
 public:
  redis_server() = default;
  redis_server(const redis_server&) = delete;
  redis_server& operator=(const redis_server&) = delete;
  ~redis_server() { stop(); }

  /// Starts redis-server with its files under `dir` and waits until the backend can connect.
  /// Adds a test failure naming the problem (and leaves the server stopped) when it cannot.
  void start(const std::filesystem::path& dir) {
    // A port taken between choosing it and the server binding it makes the server exit: try
    // a few free ports.
    std::string last_problem;
    for (int attempt = 0; attempt < 3; ++attempt) {
      port_ = free_loopback_port();
      if (port_ == 0) {
        ADD_FAILURE() << "no free loopback port for redis-server: " << std::strerror(errno);
        return;
      }
      const std::string port = std::to_string(port_), where = dir.string();
      std::vector<std::string> args = {"redis-server", "--port", port, "--bind",
                                       "127.0.0.1",    "--save", "",   "--appendonly",
                                       "no",           "--dir",  where};
      std::vector<char*> argv;
      for (std::string& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      posix_spawn_file_actions_t quiet;
      posix_spawn_file_actions_init(&quiet);
      posix_spawn_file_actions_addopen(&quiet, 1, "/dev/null", O_WRONLY, 0);
      posix_spawn_file_actions_addopen(&quiet, 2, "/dev/null", O_WRONLY, 0);
      const int rc = posix_spawnp(&pid_, "redis-server", &quiet, nullptr, argv.data(), environ);
      posix_spawn_file_actions_destroy(&quiet);
      if (rc != 0) {
        pid_ = -1;
        ADD_FAILURE() << "cannot start redis-server (" << std::strerror(rc)
                      << "): the Redis backend's unit tests need a real redis-server on PATH "
                         "(Debian package redis-server, scripts/install-deps.sh)";
        return;
      }
      if (wait_until_ready(last_problem)) return;
      stop();
    }
    ADD_FAILURE() << "redis-server did not start: " << last_problem;
  }

  /// Whether start() succeeded and the server still runs.
  bool running() const { return pid_ > 0; }

  std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_); }
  int port() const { return port_; }

  void stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
  }

 private:
  static int free_loopback_port() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return 0;
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    socklen_t len = sizeof addr;
    int port = 0;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
      port = ntohs(addr.sin_port);
    }
    ::close(fd);
    return port;
  }

  /// Polls until the backend connects (the server listens), the server exits, or a guard of
  /// 30 s that only a hang reaches.
  bool wait_until_ready(std::string& problem) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        problem = "it exited at once (status " + std::to_string(status) + ") on port " +
                  std::to_string(port_);
        return false;
      }
      auto b = detail::open_redis_backend(url());
      if (b) return true;
      problem = b.error().message;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    problem = "no answer on port " + std::to_string(port_) + " within 30 s: " + problem;
    return false;
  }

  pid_t pid_ = -1;
  int port_ = 0;
};

}  // namespace simdup::test_support
