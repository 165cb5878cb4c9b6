#pragma once

#include "sluice/jobs/job_registry.hpp"

namespace sluice {

/// `sluice run orders-demo`, the main demo: generated orders upserted into
/// MySQL with checkpoints and FlushSignals, answering "row by row or batch
/// by batch?" and checking the table at the end.
JobDefinition orders_demo_job();

/// `sluice run idle-flush`: a trickle of orders with idle gaps, showing when
/// buffered rows become visible in MySQL while the source sends nothing.
JobDefinition idle_flush_job();

/// The orders jobs' options: the datagen source's and the MySQL sink's.
std::vector<OptionSpec> orders_options();
/// The orders jobs' preparation: the sink table created, or emptied unless resuming.
void prepare_orders_table(const Config& config, const std::string& job, bool resuming);
/// The orders jobs' report: the sink's layers, then the table checked against the changelog.
bool report_orders_table(const Config& config, const JobResult& result);

}  // namespace sluice
