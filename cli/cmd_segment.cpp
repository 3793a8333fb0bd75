// `simdup segment`: the jieba words of each record, as jieba.cut gives them, for checking
// segmentation and user dictionaries (docs/chinese.md).
#include "command.hpp"
#include "document_job.hpp"
#include "options.hpp"

#include <simdup/jieba.hpp>
#include <simdup/json.hpp>

#include <memory>

namespace simdup::cli {
namespace {

struct segment_command {
  input_options input;
  run_options run;
  jieba_options jieba;
  bool no_hmm = false;
};

int run_segment(segment_command& cmd) {
  cmd.jieba.hmm = !cmd.no_hmm;
  auto seg = jieba_segmenter::create(cmd.jieba);
  if (!seg) {
    print_error("segment", seg.error().message);
    return exit_failure;
  }
  const bool tsv = cmd.run.format == "tsv";
  return run_document_job("segment", cmd.input, cmd.run, [&](document_batch& b) {
    std::vector<std::string_view> words;
    for (std::size_t i = 0; i < b.size; ++i) {
      const document& doc = b.docs[i];
      words.clear();
      (*seg)->segment(doc.text, words);
      if (tsv) {
        append_tsv_escaped(b.out, doc.id);
        for (std::string_view w : words) {
          b.out.push_back('\t');
          append_tsv_escaped(b.out, w);
        }
        b.out.push_back('\n');
        continue;
      }
      b.out.append("{\"id\":");
      json::append_id(b.out, doc.id, doc.id_is_number);
      b.out.append(",\"words\":[");
      for (std::size_t j = 0; j < words.size(); ++j) {
        if (j) b.out.push_back(',');
        b.invalid_utf8 += json::append_string(b.out, words[j]);
      }
      b.out.append("]}\n");
    }
  });
}

void setup_segment(CLI::App& app, int& rc) {
  auto cmd = std::make_shared<segment_command>();
  CLI::App* sub = app.add_subcommand(
      "segment",
      "Print each record's jieba words (jieba.cut, default mode) of the raw text: JSONL "
      "{\"id\": ..., \"words\": [...]}, or id<TAB>word<TAB>word... with --format tsv");
  add_input_options(*sub, cmd->input);
  sub->add_option("--jieba-dict", cmd->jieba.dict,
                  "jieba data directory or its jieba.bin (default: $SIMDUP_JIEBA_DIR, else the "
                  "built-in location)");
  sub->add_option("--user-dict", cmd->jieba.user_dicts,
                  "User dictionary, `word [freq] [tag]` per line (repeatable, applied in order)")
      ->allow_extra_args(false);
  sub->add_flag("--no-hmm", cmd->no_hmm, "Do not join unknown runs with the HMM (jieba HMM=False)");
  add_run_options(*sub, cmd->run);
  sub->callback([cmd, &rc] { rc = run_segment(*cmd); });
}

SIMDUP_REGISTER_COMMAND(25, setup_segment);

}  // namespace
}  // namespace simdup::cli
