// Helpers for the io tests: temporary files, gzip/zstd encoders, reading every record.
#pragma once

#include <simdup/reader.hpp>

#include <zlib.h>
#include <zstd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace simdup::test {

/// A fresh directory under the system temp dir, removed with the object.
class temp_dir {
 public:
  temp_dir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "simdup_io_XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data());
  }
  ~temp_dir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;

  /// Writes `bytes` to NAME inside the directory and returns its path.
  std::string write(const std::string& name, const std::string& bytes) const {
    const std::string p = (path_ / name).string();
    std::ofstream(p, std::ios::binary) << bytes;
    return p;
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

/// JSONL records {"id": i, "text": "document number i"} for i in [from, to).
inline std::string numbered_jsonl(int from, int to) {
  std::string s;
  for (int i = from; i < to; ++i) {
    s += "{\"id\":" + std::to_string(i) + ",\"text\":\"document number " + std::to_string(i) +
         "\"}\n";
  }
  return s;
}

/// One gzip member holding `data` (zlib's deflate with the gzip wrapper).
inline std::string gzip(const std::string& data) {
  z_stream z{};
  deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&z, data.size()) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

/// One zstd frame holding `data`.
inline std::string zstd(const std::string& data) {
  std::string out(ZSTD_compressBound(data.size()), '\0');
  out.resize(ZSTD_compress(out.data(), out.size(), data.data(), data.size(), 3));
  return out;
}

/// Everything a reader yields: records, and the messages of bad records / the failure.
struct read_all_result {
  std::vector<document> docs;
  std::vector<std::string> bad;
  std::string failure;  ///< empty unless the reader failed
};

inline read_all_result read_all(reader& r) {
  read_all_result out;
  document doc;
  error_info err;
  for (;;) {
    const read_status st = r.next(doc, err);
    if (st == read_status::record) {
      out.docs.push_back(doc);
    } else if (st == read_status::bad_record) {
      out.bad.push_back(err.message);
    } else if (st == read_status::failed) {
      out.failure = err.message;
      break;
    } else {
      break;
    }
  }
  return out;
}

/// Reads `data` from memory as `name` with the given format.
inline read_all_result read_string(const std::string& name, const std::string& data,
                                   input_format format = input_format::auto_detect,
                                   const reader_options& base = {}) {
  reader_options opts = base;
  opts.format = format;
  reader r = reader::from_memory(name, data, opts);
  return read_all(r);
}

}  // namespace simdup::test
