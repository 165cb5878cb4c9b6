#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "sluice/engine/data/batch.hpp"
#include "sluice/engine/data/row.hpp"

namespace sluice {

/// A compact binary form of values, for state and keys. Equal values encode
/// to equal bytes, except DECIMALs of different scales.
void encode_values(const std::vector<Value>& values, std::string& out);
std::string encode_values(const std::vector<Value>& values);
/// Reads what encode_values() wrote; throws DataError on malformed input.
std::vector<Value> decode_values(std::string_view bytes);

/// The encoded key columns of `row`: what keyed state is indexed by.
std::string encode_key(const Row& row, const std::vector<size_t>& key_indexes);
std::string encode_key(RowRef row, const std::vector<size_t>& key_indexes);

}  // namespace sluice
