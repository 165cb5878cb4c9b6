#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sluice {

/// Follows RFC 4180's quoting across the lines of one CSV record, to tell
/// whether a line break ends the record or lies inside a quoted field. A
/// quote opens a field only at its start: anywhere else it opens nothing,
/// so a stray one spoils only its own line.
class CsvScan {
 public:
  /// Whether a quoted field is still open at the end of `line`, which
  /// follows the lines given before.
  bool ends_quoted(std::string_view line);

 private:
  bool quoted_ = false;       // inside a quoted field
  bool field_start_ = true;   // at the first character of a field
  bool just_closed_ = false;  // right after a quoted field's closing quote
};

/// The fields of one CSV record, split as RFC 4180 says: quoted fields may
/// hold commas, line breaks and doubled quotes. An unquoted empty field
/// and a quoted empty one ("") are told apart. Reused from record to
/// record, it allocates only for fields with doubled quotes, and only
/// until its buffers are large enough.
class CsvFields {
 public:
  /// Splits `record`, which must outlive the fields; throws DataError for
  /// a quoted field left open or followed by text, or a quote inside an
  /// unquoted field.
  void split(std::string_view record);

  size_t size() const { return fields_.size(); }
  /// Field `i`'s text, without its quotes.
  std::string_view text(size_t i) const {
    const Field& f = fields_[i];
    return f.unescaped ? std::string_view(unescaped_).substr(f.offset, f.size)
                       : record_.substr(f.offset, f.size);
  }
  bool quoted(size_t i) const { return fields_[i].quoted; }
  /// Whether field `i` is empty and unquoted: a NULL.
  bool null(size_t i) const { return fields_[i].size == 0 && !fields_[i].quoted; }

 private:
  struct Field {
    uint32_t offset = 0;  // in record_, or in unescaped_
    uint32_t size = 0;
    bool quoted = false;
    bool unescaped = false;  // held in unescaped_: it had doubled quotes
  };
  std::string_view record_;
  std::vector<Field> fields_;
  std::string unescaped_;
};

}  // namespace sluice
