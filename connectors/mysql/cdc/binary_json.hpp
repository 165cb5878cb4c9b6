#pragma once

#include <string>
#include <string_view>

namespace sluice {

/// The text of a MySQL JSON value from its binary form (MySQL 5.7 and 8
/// write JSON so in the binlog; MariaDB's JSON is text), as MySQL prints
/// it: `{"a": 1, "b": [true, null]}`, keys in their stored order, a double
/// with a point, a DATETIME in quotes with six fractional digits. Throws
/// DataError for bytes that are not the binary form.
std::string mysql_json_text(std::string_view binary);

}  // namespace sluice
