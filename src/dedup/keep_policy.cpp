#include <simdup/keep_policy.hpp>

namespace simdup {

result<keep_policy> parse_keep_policy(std::string_view spec) {
  keep_policy policy;
  if (spec == "first") {
    policy.rule = keep_rule::first;
  } else if (spec == "longest") {
    policy.rule = keep_rule::longest;
  } else if (spec == "newest") {
    policy.rule = keep_rule::newest;
  } else if (spec.starts_with("field:") && spec.size() > 6) {
    policy.rule = keep_rule::field;
    policy.field = std::string(spec.substr(6));
  } else {
    constexpr std::string_view allowed = "first, longest, newest or field:NAME";
    return invalid_parameter(
        {.name = "keep",
         .value = std::string(spec),
         .allowed = std::string(allowed),
         .reason = ": expected " + std::string(allowed) + ", got '" + std::string(spec) + "'"});
  }
  return policy;
}

bool keep_before(keep_rule rule, const keep_rank& a, const keep_rank& b) noexcept {
  switch (rule) {
    case keep_rule::first:
      break;
    case keep_rule::longest:
      if (a.length != b.length) return a.length > b.length;
      break;
    case keep_rule::newest:
      if (a.time != b.time) return a.time > b.time;
      break;
    case keep_rule::field:
      if (a.field != b.field) return a.field > b.field;
      break;
  }
  return a.ordinal < b.ordinal;
}

}  // namespace simdup
