#include <simdup/record_source.hpp>

namespace simdup {
namespace {

class file_source final : public record_source {
 public:
  explicit file_source(reader in) : in_(std::move(in)) {}
  read_status next(document& doc, error_info& error) override { return in_.next(doc, error); }
  std::string_view header() const noexcept override { return in_.header(); }
  std::string_view last_skip_reason() const noexcept override { return in_.last_skip_reason(); }
  bool last_skip_was_input() const noexcept override { return in_.last_skip_was_input(); }
  const reader_stats& stats() const noexcept override { return in_.stats(); }

 private:
  reader in_;
};

}  // namespace

std::unique_ptr<record_source> make_file_source(reader in) {
  return std::make_unique<file_source>(std::move(in));
}

}  // namespace simdup
