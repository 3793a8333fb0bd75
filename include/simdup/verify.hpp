// Verification of candidate pairs by the Jaccard similarity of character-shingle sets, kept as
// compact sorted arrays of 32-bit shingle hashes instead of the documents' text. The arrays of a
// whole corpus do not fit in memory (about 6 KB per English news article), so shingle_store
// spills them, about 3.1 bytes per hash, to a temporary file and keeps 8 bytes per document.
#pragma once

#include <simdup/error.hpp>
#include <simdup/normalize.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace simdup {

struct verify_options {
  /// A pair is confirmed when its Jaccard similarity is >= threshold (inclusive). In (0, 1].
  double threshold = 0.8;
  /// Code points per shingle. Default 5, the width the evaluation's ground truth uses.
  std::size_t shingle_width = 5;
  /// Keep only the this many smallest hashes of each document (a bottom-k sketch), which bounds
  /// the spilled bytes per document; 0 keeps every hash and the Jaccard is exact.
  /// With a cap, documents with at most max_hashes distinct shingles are still compared exactly.
  std::size_t max_hashes = 0;
  /// Directory of the temporary file that holds the shingle arrays while a run lasts; empty
  /// (default) means the system's temporary directory (TMPDIR, else /tmp).
  std::string tmp_dir;
};

/// The normalisation of the text whose shingles verification compares, made from the
/// fingerprint's (`fingerprint`, whose NFKC, case folding, t2s and OpenCC settings it keeps):
/// punctuation, symbols and digits kept, white space collapsed, and in a text that contains a
/// CJK ideograph or kana every white space and punctuation character removed
/// (normalize_options::cjk_content). With the default options this is the similarity the
/// evaluation's ground truth defines (docs/tuning.md): NFKC, case folding and collapsed white
/// space; for Chinese the content: t2s, white space and punctuation removed.
normalize_options verify_normalize_options(const normalize_options& fingerprint);

/// Parses the `--verify` value "jaccard:T" (T in (0, 1]) into options with that threshold.
result<verify_options> parse_verify_spec(std::string_view spec);

/// Replaces `out` with the sorted distinct 32-bit hashes (a rolling polynomial hash of the code
/// points, mixed, upper half) of the overlapping `width`-code-point shingles of `text` (already
/// normalised, valid UTF-8). Text shorter than `width` code points gives one shingle, the whole
/// text; empty text gives none. With max_hashes > 0 only the smallest max_hashes are kept.
void shingle_hashes(std::string_view text, std::size_t width, std::size_t max_hashes,
                    std::vector<uint32_t>& out);

/// Jaccard similarity |A ∩ B| / |A ∪ B| of two sets given by shingle_hashes with the same
/// max_hashes. Exact when neither array was cut to max_hashes; otherwise the bottom-k estimate
/// over the union's smallest hashes below both cut-offs. Two empty sets have similarity 0.
double sketch_jaccard(std::span<const uint32_t> a, std::span<const uint32_t> b,
                      std::size_t max_hashes) noexcept;

/// sketch_jaccard of two whole sets (max_hashes = 0) for a yes/no against `threshold`: exact
/// when the result is >= threshold; otherwise some value below threshold, found early when the
/// sizes or the part merged so far rule the threshold out. threshold 0 always gives the exact
/// value.
double jaccard_at_least(std::span<const uint32_t> a, std::span<const uint32_t> b,
                        double threshold) noexcept;

/// What jaccard_at_least returns for sets of sizes na and nb when the sizes alone rule the
/// threshold out (the smaller set is too small even if all of it were shared): the Jaccard if
/// it were, below threshold. nullopt when the arrays must be compared.
std::optional<double> jaccard_size_bound(std::size_t na, std::size_t nb, double threshold) noexcept;

/// The same for sets of sizes na and nb known to share at most `most_shared` hashes (e.g. the
/// sum over hash ranges of the smaller count): the Jaccard if they shared that many, when it is
/// below threshold; nullopt when the threshold may still be reached.
std::optional<double> jaccard_shared_bound(std::size_t most_shared, std::size_t na, std::size_t nb,
                                           double threshold) noexcept;

/// Shingle arrays of many documents, addressed by document ordinal, in a temporary file: put()
/// appends each array (3 bytes of each hash and a bitmap of its top 8 bits: 3.125 bytes per
/// hash plus 32 per array) to a write buffer that goes to the file sequentially; memory holds
/// one 8-byte offset per ordinal and the buffer. The file is unlinked as soon as it is created, so
/// it disappears when the store is destroyed or the process ends, even by a crash.
class shingle_store {
 public:
  /// Creates the file in `dir` (empty: the system's temporary directory). `buffer_bytes`:
  /// encoded bytes collected before each write (default 1 MiB). errc::io_error naming `dir`
  /// when the file cannot be created.
  static result<shingle_store> create(const std::string& dir,
                                      std::size_t buffer_bytes = std::size_t{1} << 20);
  /// A store in the named file `path` (created, or emptied), which stays when the store closes:
  /// the resume journal's copy of a run's arrays. Errors as create().
  static result<shingle_store> create_file(const std::string& path,
                                           std::size_t buffer_bytes = std::size_t{1} << 20);
  /// Reopens a file create_file() filled, for adopt() to take its arrays back in order.
  /// errc::not_found when it is missing.
  static result<shingle_store> reopen_file(const std::string& path,
                                           std::size_t buffer_bytes = std::size_t{1} << 20);

  /// Stores the sorted distinct `hashes` of `ordinal`; ordinals must increase from call to
  /// call (skipped ordinals have empty arrays). errc::io_error naming the file's directory and
  /// the system's reason (e.g. "No space left on device") when a write fails; every later
  /// call then fails the same way.
  status put(uint32_t ordinal, std::span<const uint32_t> hashes);
  /// Writes the buffered arrays to the file.
  status flush();
  /// For a reopened file: `ordinal`'s array, of `count` hashes, is the next one in the file, as
  /// put() stored it. errc::corrupt_data when the file ends before it.
  status adopt(uint32_t ordinal, std::size_t count);
  /// Ends adopt(): the file is cut after the adopted arrays (a killed run may have written more)
  /// and later put() calls append.
  status end_adopting();
  /// Replaces `out` with the array of `ordinal` (empty when none was stored). Arrays still in
  /// the buffer are read from there. Safe to call from many threads at once while no put() or
  /// flush() runs. errc::io_error when the file cannot be read back.
  status get(uint32_t ordinal, std::vector<uint32_t>& out) const;
  /// The number of hashes stored for `ordinal` (0 when none), from memory: no read. Lets a
  /// caller rule out a pair by the sizes alone.
  std::size_t count(uint32_t ordinal) const noexcept;
  /// How many hashes of `ordinal` have each value of the top 8 bits, read from the file without
  /// the rest of the array (about 1 byte in 25). Errors as for get().
  status top_byte_counts(uint32_t ordinal, std::array<uint32_t, 256>& counts) const;
  /// Ordinals stored or skipped so far.
  uint32_t size() const noexcept { return static_cast<uint32_t>(offsets_.size() - 1); }
  /// Bytes held in memory: the offsets and the write buffer.
  std::size_t memory_bytes() const noexcept {
    return offsets_.capacity() * sizeof(uint64_t) + buffer_.capacity();
  }
  /// Encoded bytes stored (file and buffer).
  uint64_t stored_bytes() const noexcept { return offsets_.back(); }

  shingle_store(shingle_store&& other) noexcept;
  shingle_store& operator=(shingle_store&& other) noexcept;
  ~shingle_store();

 private:
  shingle_store(int fd, std::string dir, std::size_t buffer_bytes);
  status write_buffer();
  // Gives the ordinals before `ordinal` that have no array yet an empty one.
  void skip_to(uint32_t ordinal);
  // The bytes [begin, end) of the file or the buffer: a pointer into the buffer, or into
  // `scratch` after reading them from the file.
  status read_bytes(uint64_t begin, uint64_t end, std::vector<uint8_t>& scratch,
                    const uint8_t*& data) const;

  int fd_ = -1;
  std::string dir_;
  std::size_t buffer_bytes_;
  std::vector<uint64_t> offsets_{0};  // ordinal i's bytes are offsets_[i] .. offsets_[i+1]
  std::vector<uint8_t> buffer_;       // encoded bytes from file offset flushed_ on
  uint64_t flushed_ = 0;
  std::string failure_;  // the first write error, repeated by later calls
  bool adopting_ = false;
};

}  // namespace simdup
