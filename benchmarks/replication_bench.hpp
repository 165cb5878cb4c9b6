#pragma once

#include <vector>

#include "sluice/benchmarks/bench.hpp"

namespace sluice {

/// `replication`: mysql-to-mysql against the server's own ways of moving a
/// table to a second server (a throwaway one, started for the run): the
/// binlog's updates, inserts, deletes and a mix of them, in transactions
/// of 1000 rows and of one, applied by a replica (one SQL thread, and
/// four parallel ones) and by the job; and a snapshot copy against
/// mydumper | myloader, mariadb-dump | mariadb and LOAD DATA LOCAL INFILE.
/// One benchmark per workload, each of the group "replication".
std::vector<Benchmark> replication_benchmarks();

}  // namespace sluice
