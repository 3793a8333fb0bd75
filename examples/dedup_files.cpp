// Runs the whole dedup job through the library, as `simdup dedup` does: read JSONL/CSV/TSV/text/
// WARC inputs, drop exact and near duplicates, write OUT_DIR (kept records, duplicates.jsonl,
// summary.json, report.html). Usage: dedup_files OUT_DIR INPUT...
#include <simdup/simdup.hpp>

#include <cstdio>

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s OUT_DIR INPUT...\n", argv[0]);
    return 2;
  }
  simdup::dedup_job_options job;
  job.out_dir = argv[1];
  job.inputs.assign(argv + 2, argv + argc);
  job.dedup.mode = simdup::dedup_mode::batch;
  // The evaluated detection profile: k = 8, verification by shingle Jaccard >= 0.8, MinHash
  // 10x6, clusters around centers (see simdup/detection.hpp); only k is changed here.
  job.dedup.detection.k = 3;
  job.progress = simdup::progress_style::none;

  const simdup::result<simdup::dedup_summary> summary = simdup::run_dedup_job(job, stderr);
  if (!summary) {
    std::fprintf(stderr, "dedup_files: %s\n", summary.error().message.c_str());
    return 1;
  }
  std::printf("read %llu kept %llu duplicates %llu\n",
              static_cast<unsigned long long>(summary->read),
              static_cast<unsigned long long>(summary->kept),
              static_cast<unsigned long long>(summary->duplicates));
  return 0;
}
