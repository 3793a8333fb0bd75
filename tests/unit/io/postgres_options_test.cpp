// Checks of the PostgreSQL options that need no server: connection strings (no passwords on
// the command line) and the errors of a source or sink configured wrongly. The server itself is
// exercised end to end by tests/e2e/test_postgres_*.py.
#include <simdup/postgres.hpp>

#include "io/postgres_common.hpp"

#include <gtest/gtest.h>

namespace simdup {
namespace {

TEST(PostgresConnection, AcceptsUrisKeywordsAndTheEnvironment) {
  for (const char* ok :
       {"postgresql://", "postgresql:///news", "postgres://app@db1:5433/news",
        "postgresql:///news?host=/run/postgresql", "host=/tmp dbname=news", "service=news", ""}) {
    EXPECT_TRUE(check_connection_string(ok, "--from")) << ok;
  }
}

TEST(PostgresConnection, RefusesPasswordsWithoutEchoingThem) {
  for (const char* bad : {"postgresql://app:s3cret@db1/news", "host=db1 password=s3cret",
                          "postgresql:///news?password=s3cret"}) {
    const status st = check_connection_string(bad, "--to");
    ASSERT_FALSE(st) << bad;
    EXPECT_EQ(st.error().code, errc::invalid_argument);
    EXPECT_NE(st.error().message.find("--to: refusing a password"), std::string::npos);
    EXPECT_EQ(st.error().message.find("s3cret"), std::string::npos);
  }
}

TEST(PostgresConnection, RejectsWhatLibpqCannotParse) {
  const status st = check_connection_string("host=db1 dbname", "--from");
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message.find("--from: not a libpq connection string"), std::string::npos);
}

TEST(PostgresQuoting, QuotesEachPartOfATableName) {
  EXPECT_EQ(detail::quote_identifier("news"), "\"news\"");
  EXPECT_EQ(detail::quote_identifier("we\"ird"), "\"we\"\"ird\"");
  EXPECT_EQ(detail::quote_table("crawl.News"), "\"crawl\".\"News\"");
  postgres_source_options o;
  o.table = "crawl.news";
  EXPECT_EQ(detail::source_query(o), "SELECT * FROM \"crawl\".\"news\"");
  o.table.clear();
  o.query = "SELECT id, text FROM t;\n";
  EXPECT_EQ(detail::source_query(o), "SELECT id, text FROM t");
}

TEST(PostgresSource, NeedsExactlyOneOfTableAndQuery) {
  postgres_source_options o;
  o.connection = "postgresql:///none?host=/nonexistent";
  auto r = postgres_records::connect(o);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, errc::invalid_argument);
  o.table = std::string("t");  // (assigning the literal trips GCC 12's false -Wrestrict)
  o.query = "SELECT 1";
  EXPECT_FALSE(postgres_records::connect(o));
}

TEST(PostgresSource, AnUnreachableServerIsUnavailable) {
  postgres_source_options o;
  o.connection = "postgresql:///none?host=/nonexistent&connect_timeout=2";
  o.table = std::string("t");
  auto r = postgres_records::connect(o);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, errc::unavailable);
  EXPECT_NE(r.error().message.find("--from: cannot connect to PostgreSQL"), std::string::npos);
}

}  // namespace
}  // namespace simdup
