// The library in one include: every header of include/simdup but the HTTP service's. The service
// (simdup/service.hpp: a server with its own threads, sockets and store) is a program around the
// library, not part of it: a program that embeds it includes service.hpp on its own
// (docs/architecture.md, "Public headers"). Programs that use one part can include that part's
// header instead; scripts/check_includes.py checks that no library header is missing here.
#pragma once

#include <simdup/all_pairs.hpp>
#include <simdup/clusters.hpp>
#include <simdup/decision_sink.hpp>
#include <simdup/dedup.hpp>
#include <simdup/dedup_index.hpp>
#include <simdup/dedup_job.hpp>
#include <simdup/dedup_report.hpp>
#include <simdup/detection.hpp>
#include <simdup/document.hpp>
#include <simdup/duration.hpp>
#include <simdup/error.hpp>
#include <simdup/exact_layer.hpp>
#include <simdup/fingerprint.hpp>
#include <simdup/fingerprint_list.hpp>
#include <simdup/fingerprint_scan.hpp>
#include <simdup/jieba.hpp>
#include <simdup/json.hpp>
#include <simdup/keep_policy.hpp>
#include <simdup/minhash.hpp>
#include <simdup/normalize.hpp>
#include <simdup/normalizer_pair.hpp>
#include <simdup/online_index.hpp>
#include <simdup/output_sink.hpp>
#include <simdup/pipeline.hpp>
#include <simdup/plan.hpp>
#include <simdup/postgres.hpp>
#include <simdup/postgres_sink.hpp>
#include <simdup/reader.hpp>
#include <simdup/record_source.hpp>
#include <simdup/segmenter.hpp>
#include <simdup/simhash.hpp>
#include <simdup/utf8.hpp>
#include <simdup/verify.hpp>
