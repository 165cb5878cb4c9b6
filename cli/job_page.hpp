#pragma once

#include <string_view>

namespace sluice {

/// The page a running job serves at / on metrics.port (cli/job_page.html):
/// its graph, rates, backpressure, checkpoints, sink and CDC source, read
/// from /api/job once a second; given ?run=URL, or a file dropped on it, a
/// finished run's --metrics-file JSON.
std::string_view job_page();

}  // namespace sluice
