#include "text/html.hpp"

#include <gtest/gtest.h>

#include <string>

namespace simdup::detail {
namespace {

std::string text_of(std::string_view html) {
  std::string out = "stale";
  html_to_text(html, out);
  return out;
}

TEST(Html, TagsRemovedBlockTagsBecomeSpaces) {
  EXPECT_EQ(text_of("<p>one</p><p>two</p>"), " one  two ");
  EXPECT_EQ(text_of("<b>bo</b>ld <SPAN class=x>word</SPAN>"), "bold word");
  EXPECT_EQ(text_of("line<br>break<br/>here<hr />end"), "line break here end");
  EXPECT_EQ(text_of("<custom-tag>x</custom-tag>"), " x ");
  EXPECT_EQ(text_of(""), "");
  EXPECT_EQ(text_of("no markup at all"), "no markup at all");
}

TEST(Html, ScriptAndStyleBodiesDropped) {
  EXPECT_EQ(text_of("a<script>if (x < y) { alert('<b>') }</script>b"), "a  b");
  EXPECT_EQ(text_of("a<STYLE type=\"text/css\">p > b { color: red }</Style>b"), "a  b");
  // Like browsers, a script ends at the first "</script" even inside a JavaScript string: the
  // rest of the string is text.
  EXPECT_EQ(text_of("<script>var s = \"</script>\";</script>after"), "  \"; after");
  // "</scripts" is not the end tag.
  EXPECT_EQ(text_of("<script>x</scripts>y</script>z"), "  z");
  // An unclosed script swallows the rest, as in browsers.
  EXPECT_EQ(text_of("a<script>never closed <p>text"), "a ");
}

TEST(Html, CommentsAndDeclarationsDropped) {
  EXPECT_EQ(text_of("a<!-- comment <p> -->b"), "ab");
  EXPECT_EQ(text_of("a<!---->b<!-->c<!--->d"), "abcd");
  EXPECT_EQ(text_of("<!DOCTYPE html>x<?xml version=\"1.0\"?>y<![CDATA[z]]>w"), "xyw");
  EXPECT_EQ(text_of("a<!-- never closed"), "a");
  EXPECT_EQ(text_of("a</>b"), "ab");
  EXPECT_EQ(text_of("a</ b>c"), "ac");
}

TEST(Html, LessThanInTextStaysText) {
  EXPECT_EQ(text_of("1 < 2 and 3<4, <3"), "1 < 2 and 3<4, <3");
  EXPECT_EQ(text_of("x <"), "x <");
  EXPECT_EQ(text_of("x </"), "x </");
}

TEST(Html, UnclosedTagKeptAsText) {
  EXPECT_EQ(text_of("a <b c d"), "a <b c d");
  EXPECT_EQ(text_of("<a<a<a"), "<a<a<a");
}

TEST(Html, QuotedAttributeMayContainGreaterThan) {
  EXPECT_EQ(text_of("<a title=\"x > y\" href='p>q'>link</a>"), "link");
  EXPECT_EQ(text_of("<img alt = \"a>b\">text"), " text");
  // An unterminated quote: the tag ends at the first '>' instead.
  EXPECT_EQ(text_of("<a title=\"oops>text</a>"), "text");
}

TEST(Html, NamedEntities) {
  EXPECT_EQ(text_of("&amp;&lt;&gt;&quot;&apos;"), "&<>\"'");
  EXPECT_EQ(text_of("&nbsp;&copy;&reg;&mdash;&ndash;&hellip;"), "\u00A0©®—–…");
  EXPECT_EQ(text_of("&lsquo;&rsquo;&ldquo;&rdquo;&middot;&bull;"), "‘’“”·•");
  EXPECT_EQ(text_of("&euro;&yen;&pound;&times;&divide;&deg;"), "€¥£×÷°");
  EXPECT_EQ(text_of("&eacute;&Eacute;&szlig;&alpha;&Omega;&hearts;"), "éÉßαΩ♥");
  EXPECT_EQ(html_entity_count(), 253u);
  EXPECT_EQ(lookup_html_entity("amp"), U'&');
  EXPECT_EQ(lookup_html_entity("AMP_"), 0u);
  EXPECT_EQ(lookup_html_entity(""), 0u);
}

TEST(Html, NumericEntities) {
  EXPECT_EQ(text_of("&#20013;&#x4e2d;&#X4E2D;"), "中中中");
  EXPECT_EQ(text_of("&#65&#x42;C"), "ABC");  // ';' optional for numeric references
  EXPECT_EQ(text_of("&#128512;"), "😀");
  EXPECT_EQ(text_of("&#150;&#x80;"), "–€");  // Windows-1252 meaning of C1 values
  EXPECT_EQ(text_of("&#0;&#xD800;&#x110000;&#99999999999999;"), "\uFFFD\uFFFD\uFFFD\uFFFD");
}

TEST(Html, MalformedEntitiesStayText) {
  EXPECT_EQ(text_of("&#;&#x;&#xg;&;&unknown;&amp"), "&#;&#x;&#xg;&;&unknown;&amp");
  EXPECT_EQ(text_of("AT&T R&D"), "AT&T R&D");
  EXPECT_EQ(text_of("&Amp;"), "&Amp;");  // names are case-sensitive
  // Entities at the very end of the buffer.
  EXPECT_EQ(text_of("x&"), "x&");
  EXPECT_EQ(text_of("x&#"), "x&#");
  EXPECT_EQ(text_of("x&#x"), "x&#x");
  EXPECT_EQ(text_of("x&lt"), "x&lt");
  EXPECT_EQ(text_of("x&#51"), "x3");
  EXPECT_EQ(text_of("x&lt;"), "x<");
}

TEST(Html, DecodedEntitiesAreNotMarkup) {
  EXPECT_EQ(text_of("&lt;script&gt;x&lt;/script&gt;"), "<script>x</script>");
  EXPECT_EQ(text_of("&amp;lt;"), "&lt;");
}

TEST(Html, AdversarialInputsStayLinear) {
  // Each of these would be quadratic with naive rescanning; 2 MB keeps the test fast even
  // under sanitizers, and a quadratic pass would take minutes.
  const std::size_t n = 2u << 20;
  std::string lts;
  while (lts.size() < n) lts += "<a";
  EXPECT_EQ(text_of(lts), lts);
  std::string quotes;
  while (quotes.size() < n) quotes += "<a x=\">\"";
  EXPECT_FALSE(text_of(quotes).empty());
  std::string unterminated;
  while (unterminated.size() < n) unterminated += "<a x=\"";
  EXPECT_EQ(text_of(unterminated), unterminated);
  std::string scripts;
  while (scripts.size() < n) scripts += "<script></scrip";
  EXPECT_EQ(text_of(scripts), " ");
  std::string comments;
  while (comments.size() < n) comments += "<!--";
  EXPECT_EQ(text_of(comments), "");
  std::string amps(n, '&');
  EXPECT_EQ(text_of(amps), amps);
  std::string digits = "&#" + std::string(n, '9');
  EXPECT_EQ(text_of(digits), "\uFFFD");
}

}  // namespace
}  // namespace simdup::detail
