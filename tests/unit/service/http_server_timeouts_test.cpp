// The epoll HTTP server on real loopback sockets when things go slowly or wrong: stuck writes,
// stop() with pending replies, replies outliving their connection, idle and slow connections,
// lost replies, backpressure on pipelined bytes, the connection limit and bad options.
#include "support/http_test_server.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

namespace simdup::detail::http {
namespace {

using namespace std::chrono_literals;
using namespace http_test;

TEST(HttpServer, StuckWriteTimesOut) {
  server_options o;
  o.timeout_s = 1;
  fixture f(o);
  client c(f.port(), 4096);
  c.send(get("/big?33554432"));
  // Never read: the server gives up on the write once it made no progress for 1 s and closes
  // the connection; only then does the client read what the kernel still holds. (The first
  // bytes of the answer show the connection was accepted: before, no connection is open either.)
  ASSERT_TRUE(eventually([&] { return c.has_data(); }));
  ASSERT_TRUE(eventually([&] { return f.srv->open_connections() == 0; }));
  std::size_t received = 0;
  while (auto n = c.drain()) received += n;
  EXPECT_GT(received, 0u);
  EXPECT_LT(received, 33554432u);
}

TEST(HttpServer, StopDeliversPendingRepliesFirst) {
  server_options o;
  o.threads = 1;  // both connections on one loop: when `idle` closes, that loop is stopping
  fixture f(o);
  client c(f.port());
  client idle(f.port());
  c.send(post("/hold", "x"));
  reply r = f.held.take();
  ASSERT_TRUE(r.pending());
  // stop() must wait for the reply: the reply is sent only once stop() is under way (it closes
  // the idle connection first), so an early return shows as `sending` still false.
  std::atomic<bool> sending{false};
  std::atomic<bool> idle_closed{false};
  std::thread later([r = std::move(r), &sending, &idle, &idle_closed]() mutable {
    idle_closed = idle.closed_by_server();
    sending = true;
    r.send(text("done"));
  });
  f.srv->stop();
  EXPECT_TRUE(sending.load());
  later.join();
  EXPECT_TRUE(idle_closed.load());
  const auto a = c.read();
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->body, "done");
  EXPECT_TRUE(a->has("connection: close"));
  EXPECT_TRUE(c.closed_by_server());
  f.srv->stop();  // idempotent
}

TEST(HttpServer, RepliesOutlivingConnectionAndServerAreDropped) {
  server_options o;
  o.timeout_s = 1;
  fixture f(o);
  {
    client c(f.port());
    c.send(get("/hold"));
    reply gone = f.held.take();
    ASSERT_TRUE(gone.pending());
  }  // the client closes while its reply is pending; the server notices
  ASSERT_TRUE(eventually([&] { return f.srv->open_connections() == 0; }));
  client c(f.port());
  c.send(get("/hold"));
  reply kept = f.held.take();
  ASSERT_TRUE(kept.pending());
  f.srv->stop();  // gives up on the pending reply after timeout_s
  f.srv.reset();
  kept.send(text("too late"));  // the mailbox is closed: dropped, no crash
  EXPECT_FALSE(kept.pending());
}

TEST(HttpServer, IdleAndSlowConnectionsTimeOut) {
  server_options o;
  o.timeout_s = 1;
  fixture f(o);
  client idle(f.port());
  client slow(f.port());
  slow.send("GET /echo HTTP/1.1\r\nHost");
  client used(f.port());
  used.send(get("/echo"));
  ASSERT_TRUE(used.read().has_value());
  // The server's 1 s timeout closes them: closed_by_server() sees EOF (the client never gives
  // up on its own before the read guard).
  EXPECT_TRUE(idle.closed_by_server());
  // A request cut off half-way is told why; idle keep-alive connections just close.
  const auto a = slow.read();
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->status, 408);
  EXPECT_TRUE(a->has("connection: close"));
  EXPECT_EQ(a->body.rfind(R"({"error":{"code":"timeout","message":")", 0), 0u) << a->body;
  EXPECT_TRUE(slow.closed_by_server());
  EXPECT_TRUE(used.closed_by_server());
  EXPECT_EQ(f.rejected_statuses(), (std::vector<int>{408}));
}

TEST(HttpServer, SlowBodyIsServedWhileItKeepsComing) {
  manual_clock clock;
  server_options o;
  o.timeout_s = 1;
  o.threads = 1;
  o.clock = clock.fn();
  fixture f(o);
  client c(f.port());
  c.send("POST /echo HTTP/1.1\r\nContent-Length: 6\r\n\r\n");
  // 6 bytes over 2.4 s of the server's clock: longer than timeout_s in all, but each arrives
  // within it. After each byte the clock moves on 400 ms and the test waits for a whole round
  // of the loop (three clock reads: the sweep of the second round judges by the new time), so
  // a server that did not restart the deadline on each read would answer 408 by the third.
  for (const char ch : std::string("abcdef")) {
    c.send(std::string(1, ch));
    clock.advance(400ms);
    const long seen = clock.reads;
    ASSERT_TRUE(eventually([&] { return clock.reads >= seen + 3; }));
  }
  const auto a = c.read();
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->status, 200);
  EXPECT_EQ(a->body, "POST /echo? abcdef");
}

TEST(HttpServer, LostReplyIsAnswered500AfterReplyTimeout) {
  server_options o;
  o.reply_timeout_s = 1;
  fixture f(o);
  client c(f.port());
  c.send(get("/hold"));
  reply r = f.held.take();
  ASSERT_TRUE(r.pending());
  const auto a = c.read();  // the reply is never sent in time
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->status, 500);
  EXPECT_TRUE(a->has("connection: close"));
  EXPECT_NE(a->body.find(R"("code":"internal")"), std::string::npos) << a->body;
  EXPECT_NE(a->body.find("in time"), std::string::npos) << a->body;
  EXPECT_TRUE(c.closed_by_server());
  r.send(text("too late"));  // dropped
  EXPECT_EQ(f.rejected_statuses(), (std::vector<int>{500}));
  client next(f.port());
  next.send(get("/echo"));
  ASSERT_TRUE(next.read().has_value());
}

TEST(HttpServer, PipelinedBytesWaitInTheSocketWhileAReplyIsPending) {
  server_options o;
  o.max_body_bytes = 64u << 20;
  fixture f(o);
  client c(f.port());
  c.send(get("/hold"));
  reply r = f.held.take();
  ASSERT_TRUE(r.pending());
  // Offer 64 MiB of a pipelined request without blocking: only the kernel's socket buffers
  // (a few MiB) and a little of the server's take it while the reply is pending.
  const std::string big = post("/len", pattern(64u << 20));
  std::size_t taken = 0;
  for (int idle_rounds = 0; idle_rounds < 5 && taken < big.size();) {
    const ssize_t n = c.send_some(std::string_view(big).substr(taken));
    if (n > 0) {
      taken += static_cast<std::size_t>(n);
      idle_rounds = 0;
    } else {
      ++idle_rounds;
      std::this_thread::sleep_for(50ms);
    }
  }
  EXPECT_LT(taken, 24u << 20);
  // Once answered, the rest flows and the pipelined request is served.
  r.send(text("held"));
  auto a = c.read();
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->body, "held");
  c.send(std::string_view(big).substr(taken));
  a = c.read();
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->body, std::to_string(64u << 20) + " 1");
}

TEST(HttpServer, ThrowingRejectionCallbackDoesNotStopTheServer) {
  server_options o;
  o.on_rejected = [](int) { throw std::runtime_error("metrics failed"); };
  auto s = server::start(o, [](request&& req, reply r) { r.send(text(req.path)); });
  ASSERT_TRUE(s.has_value());
  client c((*s)->port());
  // The 400 is found after the first answer, outside any read event.
  c.send(get("/a") + "NONSENSE\r\n\r\n");
  auto a = c.read();
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->body, "/a");
  a = c.read();
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->status, 400);
  client next((*s)->port());
  next.send(get("/b"));
  a = next.read();
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->body, "/b");
}

TEST(HttpServer, ConnectionLimitAnswers503) {
  server_options o;
  o.max_connections = 2;
  fixture f(o);
  client a(f.port());
  client b(f.port());
  for (client* c : {&a, &b}) {
    c->send(get("/echo"));
    ASSERT_TRUE(c->read().has_value());
  }
  client extra(f.port());
  const auto r = extra.read();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 503);
  EXPECT_NE(r->body.find(R"("code":"unavailable")"), std::string::npos);
  EXPECT_EQ(f.rejected_statuses(), (std::vector<int>{503}));
}

TEST(HttpServer, RejectsBadOptions) {
  server_options o;
  o.threads = 0;
  EXPECT_FALSE(server::start(o, [](request&&, reply) {}).has_value());
  o.threads = 257;  // service.cpp clamps; the server rejects
  EXPECT_FALSE(server::start(o, [](request&&, reply) {}).has_value());
  o.threads = 1;
  o.reply_timeout_s = -1;
  EXPECT_FALSE(server::start(o, [](request&&, reply) {}).has_value());
  o.reply_timeout_s = 0;
  o.host = "256.1.1.1";
  EXPECT_FALSE(server::start(o, [](request&&, reply) {}).has_value());
}

}  // namespace
}  // namespace simdup::detail::http
