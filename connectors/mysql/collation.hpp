#pragma once

#include <string>

#include "sluice/connectors/mysql/connection.hpp"
#include "sluice/engine/graph/job_graph.hpp"

namespace sluice {

/// Text as a column of `charset` and `collation` compares it: each
/// character's weight (the server's WEIGHT_STRING of it), trailing spaces
/// dropped under a PAD SPACE collation. Values the collation takes for
/// equal ('abc' and 'ABC ' under utf8mb4_unicode_ci, 'ß' and 'ss') have
/// equal images, so that a sink's input partitioned by it sends them to one
/// subtask. The weights of the characters below U+20000 come from the
/// server, once per collation in a process; those above, ideographs all,
/// are taken as themselves. With a `prefix`, only the first `prefix`
/// characters count, as in an index on a prefix of the column.
KeyImage collation_image(MySqlConnection& connection, const std::string& charset,
                         const std::string& collation, uint32_t prefix = 0);

}  // namespace sluice
