#include "io/postgres_common.hpp"

#include <simdup/postgres.hpp>

#include <libpq-fe.h>

#include <string>

namespace simdup {

namespace {

// The parsed options of a connection string, freed on scope exit.
struct conninfo {
  PQconninfoOption* options = nullptr;
  std::string error;
  explicit conninfo(std::string_view connection) {
    char* err = nullptr;
    options = PQconninfoParse(std::string(connection).c_str(), &err);
    if (err) {
      error = err;
      while (!error.empty() && (error.back() == '\n' || error.back() == ' ')) error.pop_back();
      PQfreemem(err);
    }
  }
  ~conninfo() {
    if (options) PQconninfoFree(options);
  }
  conninfo(const conninfo&) = delete;
  conninfo& operator=(const conninfo&) = delete;
};

}  // namespace

status check_connection_string(std::string_view connection, std::string_view option) {
  const conninfo info(connection);
  if (!info.options) {
    return make_error(
        errc::invalid_argument,
        std::string(option) + ": not a libpq connection string or URI: " + info.error);
  }
  for (const PQconninfoOption* o = info.options; o->keyword; ++o) {
    if (std::string_view(o->keyword) == "password" && o->val && *o->val) {
      return make_error(errc::invalid_argument,
                        std::string(option) +
                            ": refusing a password on the command line (other users see it in "
                            "the process list); use PGPASSWORD, ~/.pgpass (PGPASSFILE) or a "
                            "service file (docs/databases.md)");
    }
  }
  return {};
}

namespace detail {

std::string quote_identifier(std::string_view name) {
  std::string out = "\"";
  for (const char c : name) {
    if (c == '"') out.push_back('"');
    out.push_back(c);
  }
  out.push_back('"');
  return out;
}

std::string quote_literal(pqxx::transaction_base& t, std::string_view value) {
  std::string out = "'";
  out += t.esc(std::string(value));
  out += "'";
  return out;
}

std::string quote_table(std::string_view name) {
  const std::size_t dot = name.find('.');
  if (dot == std::string_view::npos) return quote_identifier(name);
  return quote_identifier(name.substr(0, dot)) + "." + quote_identifier(name.substr(dot + 1));
}

result<std::unique_ptr<pqxx::connection>> pg_connect(std::string_view connection,
                                                     const char* application_name,
                                                     std::string_view what) {
  // Rebuilt as keyword=value pairs so a fallback application name can be added to a URI too.
  const conninfo info(connection);
  if (!info.options) {
    return make_error(errc::invalid_argument,
                      std::string(what) + ": not a libpq connection string: " + info.error);
  }
  std::string keywords;
  for (const PQconninfoOption* o = info.options; o->keyword; ++o) {
    if (!o->val) continue;
    keywords += std::string(o->keyword) + "='";
    for (const char* c = o->val; *c; ++c) {
      if (*c == '\'' || *c == '\\') keywords.push_back('\\');
      keywords.push_back(*c);
    }
    keywords += "' ";
  }
  keywords += "fallback_application_name='" + std::string(application_name) + "'";
  try {
    return std::make_unique<pqxx::connection>(keywords);
  } catch (const std::exception& e) {
    return pg_error(e, std::string(what) + ": cannot connect to PostgreSQL");
  }
}

error_info pg_error(const std::exception& e, std::string_view context) {
  // libpq messages span lines: the error, then DETAIL/HINT lines (kept, joined by spaces), and
  // for a syntax error the query with a caret under the position (dropped: noise on one line).
  std::string message;
  const std::string_view all = e.what();
  std::size_t begin = 0;
  while (begin < all.size()) {
    std::size_t end = all.find('\n', begin);
    if (end == std::string_view::npos) end = all.size();
    const std::string_view line = all.substr(begin, end - begin);
    begin = end + 1;
    const bool caret = line.find_first_not_of(" ^") == std::string_view::npos;
    if (line.empty() || caret || line.starts_with("LINE ")) continue;
    if (!message.empty()) message.push_back(' ');
    message.append(line);
  }
  if (message.starts_with("ERROR:  ")) message.erase(0, 8);
  const bool lost = dynamic_cast<const pqxx::broken_connection*>(&e) != nullptr ||
                    dynamic_cast<const pqxx::in_doubt_error*>(&e) != nullptr ||
                    message.find("terminating connection") != std::string::npos;
  return make_error(lost ? errc::unavailable : errc::io_error,
                    std::string(context) + (lost ? ": connection lost: " : ": ") + message);
}

}  // namespace detail
}  // namespace simdup
