// Fingerprints texts (the arguments, or three built-in ones) with simdup's default pipeline and
// prints each fingerprint in hex, then the Hamming distance of every pair.
#include <simdup/simdup.hpp>

#include <cstdio>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  std::vector<std::string> texts(argv + 1, argv + argc);
  if (texts.empty()) {
    texts = {"The quick brown fox jumps over the lazy dog near the river bank.",
             "The quick brown fox jumped over the lazy dog near the river bank!",
             "Stock markets fell sharply on Tuesday morning after the report."};
  }

  auto fp = simdup::fingerprinter::create(simdup::fingerprint_options{});
  if (!fp) {
    std::fprintf(stderr, "fingerprint_texts: %s\n", fp.error().message.c_str());
    return 1;
  }

  std::vector<uint64_t> prints;
  for (const std::string& text : texts) {
    const simdup::fingerprint_result r = fp->fingerprint(text);
    if (r.status != simdup::fingerprint_status::ok) {
      std::printf("%s\t(%s)\n", simdup::status_name(r.status), text.c_str());
      return 1;
    }
    prints.push_back(r.fingerprint);
    std::printf("%s\t%s\n", simdup::to_hex(r.fingerprint).c_str(), text.c_str());
  }
  for (std::size_t i = 0; i < prints.size(); ++i) {
    for (std::size_t j = i + 1; j < prints.size(); ++j) {
      std::printf("distance %zu %zu = %d\n", i, j, simdup::hamming_distance(prints[i], prints[j]));
    }
  }
  return 0;
}
