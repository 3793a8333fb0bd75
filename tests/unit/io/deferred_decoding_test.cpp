// reader_options::defer_decoding: a reader that only frames JSONL lines, and decode_record,
// which must give every record and every bad record exactly as a reader that parses.
#include <gtest/gtest.h>

#include "io/io_test_util.hpp"

#include <thread>

namespace simdup {
namespace {

// Records with every field the JSONL reader fills, escapes, invalid UTF-8, blank lines and
// malformed lines among them.
std::string mixed_jsonl() {
  std::string s;
  s += R"({"id":"a\"1","text":"Hello\nworld","url":"http://x/","title":"T","extra":[1,{"y":2}]})"
       "\n";
  s += R"({"id": 1.50 , "text": "number id", "time": 1700000000})"
       "\n\n";
  s += R"({"text":"no id", "time": "2024-05-01T12:00:00Z"})"
       "\n";
  s += "{\"id\":\"bad utf8\",\"text\":\"caf\xC3 au lait\"}\n";
  s += R"({"id":2,"text":"broken)"
       "\n";
  s += R"({"id":3})"
       "\n";
  s += R"({"id":4,"features":["a",["b",2.5]]})"
       "\n";
  s += R"({"id":5,"text":"x"} 7)"
       "\n";
  s += R"({"id":6,"text":"last","title":null})"
       "\n";
  return s;
}

void expect_same(const document& a, const document& b) {
  EXPECT_EQ(a.id, b.id);
  EXPECT_EQ(a.id_is_number, b.id_is_number);
  EXPECT_EQ(a.id_generated, b.id_generated);
  EXPECT_EQ(a.text, b.text);
  EXPECT_EQ(a.text_is_html, b.text_is_html);
  EXPECT_EQ(a.url, b.url);
  EXPECT_EQ(a.title, b.title);
  EXPECT_EQ(a.time, b.time);
  ASSERT_EQ(a.features.has_value(), b.features.has_value());
  if (a.features) {
    ASSERT_EQ(a.features->size(), b.features->size());
    for (std::size_t i = 0; i < a.features->size(); ++i) {
      EXPECT_EQ((*a.features)[i].text, (*b.features)[i].text);
      EXPECT_EQ((*a.features)[i].weight, (*b.features)[i].weight);
    }
  }
  EXPECT_EQ(a.invalid_utf8, b.invalid_utf8);
  EXPECT_EQ(a.raw, b.raw);
  EXPECT_EQ(a.format, b.format);
  EXPECT_EQ(a.source, b.source);
  EXPECT_EQ(a.line, b.line);
  EXPECT_EQ(a.offset, b.offset);
  EXPECT_FALSE(b.needs_decoding);
}

// Every frame of a deferred reader (each checked to hold only its frame).
std::vector<document> frames_of(const std::string& name, const std::string& data,
                                std::vector<std::string>* framing_errors = nullptr) {
  reader_options opts;
  opts.defer_decoding = true;
  reader r = reader::from_memory(name, data, opts);
  std::vector<document> frames;
  document doc;
  error_info err;
  for (;;) {
    const read_status st = r.next(doc, err);
    if (st == read_status::record) {
      frames.push_back(doc);
    } else if (st == read_status::bad_record && framing_errors) {
      framing_errors->push_back(err.message);
    } else if (st != read_status::bad_record) {
      break;
    }
  }
  return frames;
}

TEST(DeferredDecoding, FramesOnlyThenDecodesAsTheReaderParses) {
  const std::string data = mixed_jsonl();
  const test::read_all_result parsed = test::read_string("m.jsonl", data);
  ASSERT_EQ(parsed.docs.size(), 6u);
  ASSERT_EQ(parsed.bad.size(), 3u);

  std::vector<document> frames = frames_of("m.jsonl", data);
  ASSERT_EQ(frames.size(), 9u);  // every non-blank line, the malformed ones too
  std::vector<document> decoded;
  std::vector<std::string> bad;
  const field_names fields;
  for (document& f : frames) {
    EXPECT_TRUE(f.needs_decoding);
    EXPECT_TRUE(f.text.empty());
    EXPECT_TRUE(f.id.empty());
    EXPECT_FALSE(f.raw.empty());
    error_info err;
    const read_status st = decode_record(f, fields, err);
    if (st == read_status::record) {
      decoded.push_back(f);
    } else {
      ASSERT_EQ(st, read_status::bad_record);
      EXPECT_EQ(err.code, errc::invalid_input);
      bad.push_back(err.message);
    }
  }
  ASSERT_EQ(decoded.size(), parsed.docs.size());
  for (std::size_t i = 0; i < decoded.size(); ++i) {
    SCOPED_TRACE(parsed.docs[i].raw);
    expect_same(parsed.docs[i], decoded[i]);
  }
  EXPECT_EQ(bad, parsed.bad);
  EXPECT_EQ(decoded[3].invalid_utf8, 1u);  // the repair is counted as the reader counts it
}

TEST(DeferredDecoding, ReusedDocumentsLoseTheirEarlierFields) {
  // A frame lands in a document that held a record with every field; decoding clears them.
  std::vector<document> frames =
      frames_of("r.jsonl",
                "{\"id\":\"x\",\"text\":\"t\",\"url\":\"u\",\"title\":\"v\",\"time\":5,"
                "\"features\":[\"f\"]}\n{\"text\":\"plain\"}\n");
  ASSERT_EQ(frames.size(), 2u);
  const field_names fields;
  error_info err;
  document doc = frames[0];
  ASSERT_EQ(decode_record(doc, fields, err), read_status::record);
  ASSERT_TRUE(doc.features.has_value());
  doc.raw = frames[1].raw;
  doc.line = frames[1].line;
  doc.needs_decoding = true;
  ASSERT_EQ(decode_record(doc, fields, err), read_status::record);
  EXPECT_EQ(doc.text, "plain");
  EXPECT_EQ(doc.id, "r.jsonl:2");
  EXPECT_TRUE(doc.id_generated);
  EXPECT_TRUE(doc.url.empty());
  EXPECT_TRUE(doc.title.empty());
  EXPECT_FALSE(doc.time.has_value());
  EXPECT_FALSE(doc.features.has_value());
}

TEST(DeferredDecoding, FieldNamesComeFromTheCaller) {
  std::vector<document> frames = frames_of("f.jsonl", "{\"key\":\"k1\",\"body\":\"the body\"}\n");
  ASSERT_EQ(frames.size(), 1u);
  field_names fields;
  fields.id = "key";
  fields.text = "body";
  error_info err;
  ASSERT_EQ(decode_record(frames[0], fields, err), read_status::record) << err.message;
  EXPECT_EQ(frames[0].id, "k1");
  EXPECT_EQ(frames[0].text, "the body");
}

TEST(DeferredDecoding, OtherFormatsAreParsedByTheReader) {
  std::vector<document> frames = frames_of("t.tsv", "a\tfirst text\nb\tsecond\\ttext\n");
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_FALSE(frames[0].needs_decoding);
  EXPECT_EQ(frames[1].text, "second\ttext");
  const document before = frames[1];
  error_info err;
  ASSERT_EQ(decode_record(frames[1], field_names{}, err), read_status::record);
  expect_same(before, frames[1]);
}

TEST(DeferredDecoding, FramingErrorsStayTheReaders) {
  // A line over the record limit is still refused by next(), before any decoding.
  reader_options opts;
  opts.defer_decoding = true;
  opts.max_record_bytes = 64;
  reader r = reader::from_memory(
      "l.jsonl", "{\"text\":\"short\"}\n{\"text\":\"" + std::string(100, 'x') + "\"}\n", opts);
  document doc;
  error_info err;
  EXPECT_EQ(r.next(doc, err), read_status::record);
  EXPECT_EQ(r.next(doc, err), read_status::bad_record);
  EXPECT_EQ(err.code, errc::too_large);
  EXPECT_EQ(r.next(doc, err), read_status::end);
}

TEST(DeferredDecoding, DecodeRecordsKeepsOrderAndNamesEachBadPlace) {
  const std::string data =
      "{\"id\":1,\"text\":\"a\"}\n{\"id\":2}\n{\"id\":3,\"text\":\"c\"}\n[4]\n"
      "{\"id\":5,\"text\":\"e\"}\n{\"id\":6,\"text\":\n{\"id\":7,\"text\":\"g\"}\n";
  std::vector<document> frames = frames_of("d.jsonl", data);
  ASSERT_EQ(frames.size(), 7u);
  std::vector<std::size_t> places;
  std::vector<std::string> messages;
  const std::size_t kept =
      decode_records(frames, field_names{}, [&](std::size_t at, error_info& err) {
        places.push_back(at);
        messages.push_back(err.message);
        return true;
      });
  ASSERT_EQ(kept, 4u);
  EXPECT_EQ(places, (std::vector<std::size_t>{1, 3, 5}));
  EXPECT_EQ(messages, test::read_string("d.jsonl", data).bad);
  std::vector<std::string> ids;
  for (std::size_t i = 0; i < kept; ++i) ids.push_back(frames[i].id);
  EXPECT_EQ(ids, (std::vector<std::string>{"1", "3", "5", "7"}));

  // false from on_bad stops at the first bad frame: only the records before it are decoded.
  frames = frames_of("d.jsonl", data);
  places.clear();
  EXPECT_EQ(decode_records(frames, field_names{},
                           [&](std::size_t at, error_info&) {
                             places.push_back(at);
                             return false;
                           }),
            1u);
  EXPECT_EQ(places, (std::vector<std::size_t>{1}));
  EXPECT_EQ(frames[0].id, "1");
}

TEST(DeferredDecodingThreads, DecodeAtOnceAsOneThreadDoes) {
  std::string data;
  for (int i = 0; i < 4000; ++i) {
    data += i % 97 == 0
                ? "{\"id\":" + std::to_string(i) + ",\"text\":\n"
                : "{\"id\":" + std::to_string(i) + ",\"text\":\"document " +
                      std::to_string(i * 7919) + " of many\",\"time\":" + std::to_string(i) + "}\n";
  }
  const test::read_all_result parsed = test::read_string("c.jsonl", data);
  std::vector<document> frames = frames_of("c.jsonl", data);
  ASSERT_EQ(frames.size(), 4000u);
  std::vector<read_status> status(frames.size());
  std::vector<std::string> messages(frames.size());
  const field_names fields;
  std::vector<std::thread> threads;
  constexpr std::size_t kThreads = 4;
  for (std::size_t t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      error_info err;
      for (std::size_t i = t; i < frames.size(); i += kThreads) {
        status[i] = decode_record(frames[i], fields, err);
        if (status[i] != read_status::record) messages[i] = err.message;
      }
    });
  }
  for (auto& th : threads) th.join();
  std::size_t next_doc = 0;
  std::vector<std::string> bad;
  for (std::size_t i = 0; i < frames.size(); ++i) {
    if (status[i] == read_status::record) {
      ASSERT_LT(next_doc, parsed.docs.size());
      expect_same(parsed.docs[next_doc++], frames[i]);
    } else {
      bad.push_back(messages[i]);
    }
  }
  EXPECT_EQ(next_doc, parsed.docs.size());
  EXPECT_EQ(bad, parsed.bad);
  EXPECT_EQ(bad.size(), 42u);
}

}  // namespace
}  // namespace simdup
