// simdup_duckdb_sql SQL...: runs each statement through DuckDB's C API (the library simdup
// reads and writes Parquet with) in one in-memory database. The Parquet tests write their
// DuckDB-made inputs with it (COPY ... TO 'x.parquet' (FORMAT parquet, COMPRESSION ...)) and
// read outputs back (COPY (SELECT ...) TO 'x.json'). Exit 1 with DuckDB's message on an error.
#include <duckdb.h>

#include <cstdio>

int main(int argc, char** argv) {
  duckdb_database db = nullptr;
  duckdb_connection con = nullptr;
  if (duckdb_open(nullptr, &db) == DuckDBError || duckdb_connect(db, &con) == DuckDBError) {
    std::fprintf(stderr, "simdup_duckdb_sql: cannot open DuckDB\n");
    return 1;
  }
  int rc = 0;
  for (int i = 1; i < argc && rc == 0; ++i) {
    duckdb_result r;
    if (duckdb_query(con, argv[i], &r) == DuckDBError) {
      std::fprintf(stderr, "simdup_duckdb_sql: %s\n", duckdb_result_error(&r));
      rc = 1;
    }
    duckdb_destroy_result(&r);
  }
  duckdb_disconnect(&con);
  duckdb_close(&db);
  return rc;
}
