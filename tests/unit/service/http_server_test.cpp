// The epoll HTTP server on real loopback sockets: keep-alive, pipelining, replies completed
// from other threads, dropped replies, 100-continue, the server's own error answers, chunked
// bodies, HTTP/1.0, large bodies and many concurrent clients.
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

TEST(HttpServer, KeepAliveServesManyRequestsOnOneConnection) {
  fixture f;
  client c(f.port());
  ASSERT_TRUE(c.connected());
  for (int i = 0; i < 200; ++i) {
    c.send(i % 2 == 0 ? post("/echo?i=" + std::to_string(i), "body" + std::to_string(i))
                      : get("/echo", "Authorization: Bearer t0k\r\n"));
    const auto a = c.read();
    ASSERT_TRUE(a.has_value()) << i;
    EXPECT_EQ(a->status, 200);
    EXPECT_TRUE(a->has("content-type: text/plain"));
    EXPECT_FALSE(a->has("connection: close"));
    if (i % 2 == 0) {
      EXPECT_EQ(a->body, "POST /echo?i=" + std::to_string(i) + " body" + std::to_string(i));
    } else {
      EXPECT_EQ(a->body, "GET /echo? ");
      EXPECT_TRUE(a->has("x-auth: bearer t0k"));
    }
  }
}

TEST(HttpServer, PipelinedRequestsAreAnsweredInOrder) {
  fixture f;
  client c(f.port());
  std::string burst;
  for (int i = 0; i < 30; ++i) {
    burst += post(i % 3 == 0 ? "/async" : "/echo", std::to_string(i));
  }
  c.send(burst);
  for (int i = 0; i < 30; ++i) {
    const auto a = c.read();
    ASSERT_TRUE(a.has_value()) << i;
    EXPECT_EQ(a->body,
              std::string("POST ") + (i % 3 == 0 ? "/async" : "/echo") + "? " + std::to_string(i));
  }
}

TEST(HttpServer, ReplySentLaterFromAnotherThread) {
  fixture f;
  client c(f.port());
  c.send(post("/hold", "x"));
  reply r = f.held.take();
  ASSERT_TRUE(r.pending());
  // Held by the test, the reply is sent from another thread after the handler returned.
  std::thread later([r = std::move(r)]() mutable {
    r.send(text("late"));
    r.send(text("ignored"));  // a second send does nothing
  });
  later.join();
  const auto a = c.read();
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->body, "late");
  // The connection goes on.
  c.send(get("/echo"));
  ASSERT_TRUE(c.read().has_value());
}

TEST(HttpServer, DroppedReplyOrThrowingHandlerAnswers500) {
  fixture f;
  client c(f.port());
  for (const char* path : {"/drop", "/throw"}) {
    c.send(get(path));
    const auto a = c.read();
    ASSERT_TRUE(a.has_value()) << path;
    EXPECT_EQ(a->status, 500);
    EXPECT_TRUE(a->has("content-type: application/json"));
    EXPECT_NE(a->body.find(R"("code":"internal")"), std::string::npos) << a->body;
  }
  c.send(get("/echo"));
  ASSERT_TRUE(c.read().has_value());
  // A held reply dropped on another thread answers 500 too.
  c.send(get("/hold"));
  std::thread([r = f.held.take()] {}).join();
  const auto a = c.read();
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->status, 500);
  EXPECT_EQ(f.rejected_statuses(), (std::vector<int>{500, 500, 500}));
}

TEST(HttpServer, ExpectContinueGetsAnInterimAnswer) {
  fixture f;
  client c(f.port());
  c.send("POST /echo HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n");
  const auto interim = c.read();
  ASSERT_TRUE(interim.has_value());
  EXPECT_EQ(interim->status, 100);
  c.send("data");
  const auto a = c.read();
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->status, 200);
  EXPECT_EQ(a->body, "POST /echo? data");
}

TEST(HttpServer, OversizeBodyIs413JsonAndCloses) {
  server_options o;
  o.max_body_bytes = 1000;
  fixture f(o);
  client c(f.port());
  c.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 5000\r\n\r\n" + std::string(5000, 'x'));
  const auto a = c.read();
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->status, 413);
  EXPECT_TRUE(a->has("connection: close"));
  EXPECT_TRUE(a->has("content-type: application/json"));
  EXPECT_EQ(a->body.rfind(R"({"error":{"code":"too_large","message":")", 0), 0u) << a->body;
  EXPECT_TRUE(c.closed_by_server());
  EXPECT_EQ(f.rejected_statuses(), (std::vector<int>{413}));
}

TEST(HttpServer, BadRequestIs400JsonAndCloses) {
  fixture f;
  client c(f.port());
  c.send(get("/echo") + "NONSENSE\r\n\r\n" + get("/echo"));
  const auto ok = c.read();
  ASSERT_TRUE(ok.has_value());
  EXPECT_EQ(ok->status, 200);
  const auto a = c.read();
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->status, 400);
  EXPECT_TRUE(a->has("connection: close"));
  EXPECT_EQ(a->body.rfind(R"({"error":{"code":"bad_request","message":")", 0), 0u) << a->body;
  EXPECT_TRUE(c.closed_by_server());
  EXPECT_EQ(f.rejected_statuses(), (std::vector<int>{400}));
}

TEST(HttpServer, ChunkedHeadAndHttp10) {
  fixture f;
  client c(f.port());
  c.send(
      "POST /echo HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n");
  auto a = c.read();
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->body, "POST /echo? abcde");
  // HEAD: the headers of the answer, no body.
  c.send("HEAD /echo HTTP/1.1\r\n\r\n" + get("/echo"));
  a = c.read(true);
  ASSERT_TRUE(a.has_value());
  EXPECT_TRUE(a->has("content-length: 12"));
  a = c.read();
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->body, "GET /echo? ");
  // HTTP/1.0 keep-alive is confirmed; plain HTTP/1.0 closes.
  client c10(f.port());
  c10.send("GET /echo HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
  a = c10.read();
  ASSERT_TRUE(a.has_value());
  EXPECT_TRUE(a->has("connection: keep-alive"));
  c10.send("GET /echo HTTP/1.0\r\n\r\n");
  a = c10.read();
  ASSERT_TRUE(a.has_value());
  EXPECT_TRUE(a->has("connection: close"));
  EXPECT_TRUE(c10.closed_by_server());
}

TEST(HttpServer, LargeBodiesBothWays) {
  fixture f;
  client c(f.port());
  const std::string up = pattern(3u << 20);
  c.send(post("/len", up));  // arrives in many reads; parsed once complete
  auto a = c.read();
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->body, std::to_string(up.size()) + " 1");
  // An answer larger than the socket buffers is written in parts as the client reads (a small
  // receive buffer makes sure the server meets a full socket).
  client small(f.port(), 65536);
  small.send(get("/big?5000000") + get("/echo"));
  a = small.read();
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->body.size(), 5000000u);
  EXPECT_TRUE(a->body == pattern(5000000));
  a = small.read();
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->body, "GET /echo? ");
}

TEST(HttpServer, ManyConcurrentClients) {
  server_options o;
  o.threads = 2;
  fixture f(o);
  constexpr int clients = 32;
  constexpr int requests = 200;
  std::atomic<int> good{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < clients; ++t) {
    threads.emplace_back([&, t] {
      client c(f.port());
      for (int i = 0; i < requests; ++i) {
        const std::string body = std::to_string(t) + "-" + std::to_string(i);
        const char* path = (i + t) % 4 == 0 ? "/async" : "/echo";
        c.send(post(path, body));
        const auto a = c.read();
        if (!a || a->status != 200 || a->body != std::string("POST ") + path + "? " + body) return;
        good.fetch_add(1);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(good.load(), clients * requests);
}

TEST(HttpServer, Http10WithTransferEncodingIs400) {
  fixture f;
  client c(f.port());
  c.send(
      "POST /echo HTTP/1.0\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n"
      "0\r\n\r\n" +
      get("/echo"));
  const auto a = c.read();
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->status, 400);
  EXPECT_TRUE(a->has("connection: close"));
  EXPECT_TRUE(c.closed_by_server());
}

}  // namespace
}  // namespace simdup::detail::http
