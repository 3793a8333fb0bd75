// The whole public API in one include: every header of include/simdup. Programs that use one part
// can include that part's header instead; tests/e2e/test_install.py checks that none is missing.
#pragma once

#include <simdup/all_pairs.hpp>
#include <simdup/clusters.hpp>
#include <simdup/decision_sink.hpp>
#include <simdup/dedup.hpp>
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
#include <simdup/index.hpp>
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
#include <simdup/service.hpp>
#include <simdup/simhash.hpp>
#include <simdup/utf8.hpp>
#include <simdup/verify.hpp>
