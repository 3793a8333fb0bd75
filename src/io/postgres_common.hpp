// Pieces shared by the PostgreSQL source and sinks: connecting (with an application name the
// server shows in pg_stat_activity), identifier quoting and turning libpqxx exceptions into
// error values.
#pragma once

#include <simdup/error.hpp>

#include <pqxx/pqxx>

#include <exception>
#include <memory>
#include <string>
#include <string_view>

namespace simdup {
struct postgres_source_options;
}

namespace simdup::detail {

/// The source's rows as a query: "SELECT * FROM table", or the --query without a trailing ';'.
std::string source_query(const postgres_source_options& options);

/// `"name"` with embedded quotes doubled.
std::string quote_identifier(std::string_view name);
/// `'value'` escaped for the connection (libpqxx's quote(), whose inlined concatenation GCC 12
/// flags with a false -Wrestrict warning).
std::string quote_literal(pqxx::transaction_base& t, std::string_view value);
/// "schema.table" or "table" as quoted identifiers ("\"schema\".\"table\"").
std::string quote_table(std::string_view name);

/// Opens a connection. `application_name` is the fallback shown in pg_stat_activity (a name
/// in the connection string wins). Errors are errc::unavailable naming `what`.
result<std::unique_ptr<pqxx::connection>> pg_connect(std::string_view connection,
                                                     const char* application_name,
                                                     std::string_view what);

/// A libpqxx exception as an error: errc::unavailable for a lost connection, io_error
/// otherwise, the server's message (first line) after `context`.
error_info pg_error(const std::exception& e, std::string_view context);

}  // namespace simdup::detail
