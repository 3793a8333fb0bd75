// HTML to text, the first normalisation step. Internal to the text component.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace simdup::detail {

/// Replaces `out` with the text content of `html`: tags and comments removed, <script> and
/// <style> bodies dropped, block-level and unknown tags turned into one space, character
/// references decoded to UTF-8. Follows browsers where it is cheap to: a script ends at the first
/// "</script" even inside a JavaScript string; a '<' that does not start a tag is text; a
/// numeric reference may omit its ';'. Named references need their ';'. Anything malformed
/// stays as text. Bytes are not validated here (UTF-8 repair is the next step). Linear time.
void html_to_text(std::string_view html, std::string& out);

/// The code point of a named character reference ("amp" -> '&'), or 0 if unknown.
/// Case-sensitive, as in HTML ("Eacute" and "eacute" differ).
char32_t lookup_html_entity(std::string_view name) noexcept;

/// Number of named references known to lookup_html_entity().
std::size_t html_entity_count() noexcept;

}  // namespace simdup::detail
