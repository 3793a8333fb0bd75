#include <gtest/gtest.h>

#include <simdup/json.hpp>

#include <cmath>
#include <limits>

namespace simdup {
namespace {

std::string str(std::string_view s) {
  std::string out;
  json::append_string(out, s);
  return out;
}

TEST(JsonWriter, EscapesQuotesBackslashesAndControls) {
  EXPECT_EQ(str("a\"b\\c"), R"("a\"b\\c")");
  EXPECT_EQ(str("\n\r\t\b\f"), R"("\n\r\t\b\f")");
  EXPECT_EQ(str(std::string_view("\x01\x1f\0", 3)), R"("\u0001\u001f\u0000")");
  EXPECT_EQ(str("/ and \x7f stay"), "\"/ and \x7f stay\"");
}

TEST(JsonWriter, KeepsValidUtf8AndReplacesInvalid) {
  EXPECT_EQ(str("中文 ß 😀"), "\"中文 ß 😀\"");
  std::string out;
  EXPECT_EQ(json::append_string(out,
                                "a\xFF"
                                "b\xE4\xB8"),
            2u);
  EXPECT_EQ(out,
            "\"a\xEF\xBF\xBD"
            "b\xEF\xBF\xBD\"");
}

TEST(JsonWriter, NumbersRoundTripAndNonFiniteIsNull) {
  std::string out;
  json::append_number(out, 3.0);
  out += ' ';
  json::append_number(out, 0.25);
  out += ' ';
  json::append_number(out, -1e-7);
  out += ' ';
  json::append_number(out, std::numeric_limits<double>::quiet_NaN());
  out += ' ';
  json::append_number(out, 1e300);
  EXPECT_EQ(out, "3 0.25 -1e-07 null 1e+300");
}

TEST(JsonWriter, WriterPlacesCommasAndIds) {
  std::string out;
  json::writer w(out);
  w.begin_object()
      .key("id")
      .id("42", true)
      .key("sid")
      .id("x\"y", false)
      .key("features")
      .begin_array();
  w.begin_array().value("tok").value(2.5).end_array();
  w.begin_array().value("b").value(int64_t{1}).end_array();
  w.end_array().key("ok").value(true).key("none").null().key("empty").begin_array().end_array();
  w.end_object();
  EXPECT_EQ(
      out,
      R"({"id":42,"sid":"x\"y","features":[["tok",2.5],["b",1]],"ok":true,"none":null,"empty":[]})");
}

}  // namespace
}  // namespace simdup
