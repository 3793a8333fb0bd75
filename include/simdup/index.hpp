// The Hamming index: planner, batch all-pairs, online index and clusters.
#pragma once

#include <simdup/all_pairs.hpp>
#include <simdup/clusters.hpp>
#include <simdup/online_index.hpp>
#include <simdup/plan.hpp>
