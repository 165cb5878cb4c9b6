#pragma once

#include "sluice/jobs/job_registry.hpp"

namespace sluice {

/// `sluice run changelog-to-mysql`: a changelog file written into a MySQL
/// table whose columns give the file's schema.
JobDefinition changelog_to_mysql_job();

/// Prints the answer to "row by row or batch by batch?" for a job whose
/// source is `source` and whose MySQL sink is `sink`: what each layer saw.
void print_mysql_layers(const JobResult& result, const std::string& source,
                        const std::string& sink);

}  // namespace sluice
