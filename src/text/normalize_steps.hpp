// The normaliser's steps made ready from normalize_options, shared by normalizer and
// normalizer_pair. Internal to the text component.
#pragma once

#include <simdup/error.hpp>
#include <simdup/normalize.hpp>

#include "text/fold.hpp"
#include "text/t2s.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace simdup::detail {

struct normalize_steps {
  normalize_options options;
  fold_plan plan;
  // Its const member functions only read OpenCC's loaded dictionaries, so one converter serves
  // every thread (OpenCC builds per-call segment lists).
  std::optional<t2s_converter> t2s;

  /// Fails as normalizer::create does.
  static result<normalize_steps> make(const normalize_options& options);
  /// normalizer::normalize.
  void run(std::string_view text, std::string& out, normalize_stats* stats) const;
};

/// normalize_options::cjk_content, in place on valid UTF-8 (the output of the steps before).
void keep_cjk_content(std::string& text);

}  // namespace simdup::detail
