#include "sluice/connectors/mysql/sink/statement_writer.hpp"

#include <mysqld_error.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <thread>
#include <unordered_map>

#include "sluice/connectors/mysql/sink/bulk_statement.hpp"
#include "sluice/engine/common/fault_point.hpp"
#include "sluice/engine/common/text.hpp"

namespace sluice {
namespace {

// Rows per statement of execute_chunked(): larger batches gain little and
// hold larger packets.
constexpr size_t kRowsPerChunk = 2000;

// The end of the chunk of `rows` from `begin` on: at most kRowsPerChunk
// rows, whose values of `columns` take at most `budget` bytes on the wire
// (`bytes`), or one row.
size_t chunk_end(const Batch& batch, std::span<const uint32_t> rows, size_t begin,
                 const std::vector<size_t>& columns, size_t budget, size_t& bytes) {
  size_t end = begin;
  while (end < rows.size() && end - begin < kRowsPerChunk) {
    const size_t row_bytes = BulkStatement::wire_size(batch, rows[end], columns);
    if (bytes + row_bytes > budget && end > begin) break;
    bytes += row_bytes;
    ++end;
  }
  return end;
}

// "?", as `table` compares its column `c` with a value of `c`'s input type:
// a BIT with BYTES as the number they make.
std::string parameter(const TableInfo& table, const Column& c) {
  const TableColumn* target = table.column(c.name);
  if (target != nullptr && target->column_type.rfind("bit", 0) == 0 &&
      c.type.id == TypeId::kBytes) {
    return "CAST(CONV(HEX(?), 16, 10) AS UNSIGNED)";
  }
  return "?";
}

// The head of a DELETE from `target` that finds its rows by an index, never
// by a scan. Under READ COMMITTED a scan still waits for the lock of every
// row it passes: a DELETE of 50 keys from a table of 40 rows, which the
// optimizer would scan, would wait on rows another transaction holds, for
// as long as it holds them (a prepared XA transaction: until its checkpoint
// completes, which may be this very subtask's to make). sql_safe_updates
// makes the server take the range over the key whatever it costs (EXPLAIN
// does not show it; Handler_read_key does), and refuse a DELETE no index
// serves rather than scan.
std::string delete_by_index(const std::string& target) {
  return "SET STATEMENT sql_safe_updates=1 FOR DELETE FROM " + target + " WHERE ";
}

// "`c`=?", see parameter().
std::string equals_parameter(const TableInfo& table, const Column& c) {
  return quote_identifier(c.name) + "=" + parameter(table, c);
}

// "`c` <=> ?": whether `table`'s column `c` holds the value, NULL too.
// Text compares as its bytes in the column's charset, not by the column's
// collation, which may take 'a' for 'A' or 'a ' and so find another row.
std::string holds_parameter(const TableInfo& table, const Column& c) {
  const TableColumn* target = table.column(c.name);
  if (target != nullptr && !target->charset.empty() && c.type.id == TypeId::kString) {
    return "CAST(" + quote_identifier(c.name) + " AS BINARY) <=> CAST(CONVERT(? USING " +
           target->charset + ") AS BINARY)";
  }
  return quote_identifier(c.name) + " <=> " + parameter(table, c);
}

// The images of a flush's changes to a table without a key, each with the
// rows that insert it (`inserts`) or delete one of it (`deletes`) that do
// not undo each other: what the flush changes in all.
struct RowImages {
  struct Hash {
    size_t operator()(const std::vector<Value>& image) const {
      size_t h = 0;
      for (const Value& v : image) h = h * 31 + v.hash();
      return h;
    }
  };
  struct Rows {
    std::vector<uint32_t> inserts, deletes;
  };
  std::unordered_map<std::vector<Value>, Rows, Hash> of;

  explicit RowImages(const Batch& batch) {
    std::vector<Value> image;
    for (uint32_t r = 0; r < batch.size(); ++r) {
      image.clear();
      for (size_t c = 0; c < batch.schema().size(); ++c) image.push_back(batch.column(c).value(r));
      Rows& rows = of[image];
      const RowKind kind = batch.kind(r);
      const bool removes = kind == RowKind::kDelete || kind == RowKind::kUpdateBefore;
      std::vector<uint32_t>& undone = removes ? rows.inserts : rows.deletes;
      if (!undone.empty()) {
        undone.pop_back();  // a multiset: -D x after +I x (or +I x after -D x) leaves it as it was
      } else {
        (removes ? rows.deletes : rows.inserts).push_back(r);
      }
    }
  }
};

}  // namespace

MySqlError StatementWriter::with_rejected_row(const MySqlError& e, const Batch& batch,
                                              std::span<const uint32_t> rows) const {
  // The server names the row it refused by its place in the statement's
  // arrays ("... at row 2"): say which change that is.
  const std::string& message = e.message();
  const size_t at = message.rfind(" at row ");
  if (at == std::string::npos) return e;
  const size_t row = std::strtoul(message.c_str() + at + 8, nullptr, 10);
  if (row == 0 || row > rows.size()) return e;
  const RowRef change = const_cast<Batch&>(batch).ref(rows[row - 1]);
  const std::string which = key_of(batch, rows[row - 1]);
  std::string where;
  if (const auto position = batch.position(rows[row - 1]); position && describe_position_) {
    where = describe_position_(*position);
  }
  return MySqlError(
      e.code(), message + "; that is the change " +
                    (which.empty() ? shortened_sql(change.to_string(), 200) : "of key " + which) +
                    (where.empty() ? "" : ", from " + where));
}

bool is_exact_key_column(const DataType& type) {
  return type.id != TypeId::kString && type.id != TypeId::kDouble;
}

StatementWriter::StatementWriter(const std::string& table, const Schema& input,
                                 const std::vector<size_t>& key, bool upsert, int subtask,
                                 Counters counters)
    : target_(quote_identifier(table)),
      table_(table),
      subtask_(subtask),
      key_(key),
      counters_(counters) {
  std::vector<std::string> columns, params, updates;
  for (size_t i = 0; i < input.size(); ++i) {
    const Column& c = input.column(i);
    columns.push_back(quote_identifier(c.name));
    params.push_back("?");
    upsert_.columns.push_back(i);
    upsert_.types.push_back(c.type);
    // An upsert writes the row's whole image: with keys that the table may
    // take for equal while their bytes differ ('abc', 'ABC'), the key's
    // spelling too, so that the last change of a key decides all of it.
    const bool in_key = std::find(key.begin(), key.end(), i) != key.end();
    if (!in_key || !is_exact_key_column(c.type)) {
      updates.push_back(quote_identifier(c.name) + "=VALUES(" + quote_identifier(c.name) + ")");
    }
  }
  if (upsert && updates.empty()) {
    // Every column is in the key: nothing to update, but not INSERT IGNORE,
    // which would turn a too long or wrong value into a warning.
    const std::string first = quote_identifier(input.column(key.front()).name);
    updates.push_back(first + "=" + first);
  }
  upsert_.head = "INSERT INTO " + target_ + " (" + join(columns) + ") VALUES ";
  upsert_.row = "(" + join(params) + ")";
  upsert_.separator = ", ";
  if (!upsert) {
    if (key.empty()) {  // rows without a key, which a delete finds by every column (append())
      delete_one_.columns = upsert_.columns;
      delete_one_.types = upsert_.types;
      delete_one_.one_row = true;
      fit_to(TableInfo{}, input, {});
    }
    return;
  }
  upsert_.tail = " ON DUPLICATE KEY UPDATE " + join(updates);
  for (size_t k : key) {
    delete_.columns.push_back(k);
    delete_.types.push_back(input.column(k).type);
  }
  fit_to(TableInfo{}, input, {});
}

void StatementWriter::fit_to(const TableInfo& table, const Schema& input,
                             const std::vector<TableIndex>& unique) {
  if (key_.empty()) {
    std::vector<std::string> conditions;
    for (size_t c : delete_one_.columns)
      conditions.push_back(holds_parameter(table, input.column(c)));
    delete_one_.head = "DELETE FROM " + target_ + " WHERE ";
    delete_one_.row = join(conditions, " AND ");
    delete_one_.tail = " LIMIT 1";
    return;
  }
  std::vector<std::string> key_conditions;
  for (size_t k : key_) key_conditions.push_back(equals_parameter(table, input.column(k)));
  const std::string by_key = join(key_conditions, " AND ");
  if (key_.size() == 1) {
    // `k` IN (…): the server plans it with less work than ORs of `k`=?.
    const Column& k = input.column(key_[0]);
    delete_.head = delete_by_index(target_) + quote_identifier(k.name) + " IN (";
    delete_.row = parameter(table, k);
    delete_.separator = ", ";
    delete_.tail = ")";
  } else {
    delete_.head = delete_by_index(target_);
    delete_.row = "(" + by_key + ")";
    delete_.separator = " OR ";
  }
  displace_.clear();
  for (const TableIndex& index : unique) {
    // A prefix would compare by LEFT(), which no index serves: such a key
    // is left to the order of the changes alone.
    if (std::any_of(index.prefixes.begin(), index.prefixes.end(),
                    [](uint32_t prefix) { return prefix > 0; })) {
      continue;
    }
    BulkSql& displace = displace_.emplace_back();
    std::vector<std::string> conditions;
    for (const std::string& name : index.columns) {
      const size_t at = input.require(name);
      conditions.push_back(equals_parameter(table, input.column(at)));
      displace.columns.push_back(at);
      displace.types.push_back(input.column(at).type);
    }
    displace.columns.insert(displace.columns.end(), delete_.columns.begin(), delete_.columns.end());
    displace.types.insert(displace.types.end(), delete_.types.begin(), delete_.types.end());
    displace.head = delete_by_index(target_);
    displace.row = "(" + join(conditions, " AND ") + " AND NOT (" + by_key + "))";
    displace.separator = " OR ";
  }
}

void StatementWriter::write(SinkConnection& connection, const Batch& rows,
                            const std::vector<UpsertBuffer::Run>& runs) {
  for (const UpsertBuffer::Run& run : runs) {
    if (row_events_) {
      // No other unique key, so nothing to displace (RowEventEncoder::fit).
      counters_.rows_affected->add(write_row_events(connection, rows, run));
      (run.deletes ? counters_.deletes : counters_.upserts)->add(run.rows.size());
      continue;
    }
    if (!run.deletes) {
      for (const BulkSql& displace : displace_) {
        const uint64_t displaced = execute_chunked(connection, displace, rows, run.rows);
        counters_.rows_affected->add(displaced);
        if (counters_.displaced != nullptr) counters_.displaced->add(displaced);
      }
    }
    counters_.rows_affected->add(
        execute_chunked(connection, run.deletes ? delete_ : upsert_, rows, run.rows));
    (run.deletes ? counters_.deletes : counters_.upserts)->add(run.rows.size());
  }
}
void StatementWriter::append(SinkConnection& connection, const Batch& rows) {
  bool inserts_only = true;
  for (uint32_t r = 0; r < rows.size() && inserts_only; ++r) {
    inserts_only = rows.kind(r) == RowKind::kInsert || rows.kind(r) == RowKind::kUpdateAfter;
  }
  if (inserts_only) {
    std::vector<uint32_t> all(rows.size());
    std::iota(all.begin(), all.end(), 0);
    counters_.rows_affected->add(execute_chunked(connection, upsert_, rows, all));
    counters_.upserts->add(all.size());
    return;
  }
  if (!key_.empty()) throw std::logic_error("StatementWriter::append: a delete in append mode");
  // The deletes first: the table between is a part of the one before, so
  // a unique key (a nullable one, which a table without a primary key may
  // have) refuses none of its rows; the inserts then make the one after.
  std::vector<uint32_t> inserts, deletes;
  for (const auto& [image, changes] : RowImages(rows).of) {
    inserts.insert(inserts.end(), changes.inserts.begin(), changes.inserts.end());
    deletes.insert(deletes.end(), changes.deletes.begin(), changes.deletes.end());
  }
  std::sort(inserts.begin(), inserts.end());
  std::sort(deletes.begin(), deletes.end());
  const uint64_t deleted = execute_chunked(connection, delete_one_, rows, deletes);
  if (deleted < deletes.size()) {
    // The target lacks rows its source had: another writer took them.
    spdlog::warn("mysql sink {}: {} of {} deletes found no row equal to theirs", target_,
                 deletes.size() - deleted, deletes.size());
    if (counters_.deletes_unmatched != nullptr) {
      counters_.deletes_unmatched->add(deletes.size() - deleted);
    }
  }
  counters_.deletes->add(deletes.size());
  counters_.rows_affected->add(deleted + execute_chunked(connection, upsert_, rows, inserts));
  counters_.upserts->add(inserts.size());
}

uint64_t StatementWriter::execute_chunked(SinkConnection& connection, const BulkSql& statement,
                                          const Batch& batch, std::span<const uint32_t> rows) {
  uint64_t affected = 0;
  size_t begin = 0;
  while (begin < rows.size()) {
    if (begin > 0) fault_point("mid-flush", subtask_);
    size_t bytes = 0;
    const size_t end = chunk_end(batch, rows, begin, statement.columns, packet_budget_, bytes);
    const size_t n = end - begin;
    try {
      affected += connection.execute_bulk(statement, batch, rows.subspan(begin, n));
    } catch (const MySqlError& e) {
      counters_.records_send_errors->add(n);
      if (!dead_letters_ || !e.rejects_value())
        throw with_rejected_row(e, batch, rows.subspan(begin, n));
      // The statement is undone, the transaction goes on: its rows once
      // more, one by one.
      affected += execute_each(connection, statement, batch, rows.subspan(begin, n));
    } catch (...) {
      counters_.records_send_errors->add(n);
      throw;
    }
    counters_.statements->add(1);
    counters_.records_send->add(n);
    counters_.bytes_send->add(bytes);
    begin = end;
  }
  return affected;
}

uint64_t StatementWriter::write_row_events(SinkConnection& connection, const Batch& batch,
                                           const UpsertBuffer::Run& run) {
  using Kind = RowEventEncoder::Kind;
  const BulkSql& statement = run.deletes ? delete_ : upsert_;
  // A Delete_rows of a key the table has no row of would fail: those keys
  // (inserted and deleted since the last flush) go as a statement.
  std::vector<uint32_t> as_events, as_statement;
  std::vector<Kind> kinds;
  for (size_t i = 0; i < run.rows.size(); ++i) {
    if (run.deletes && !run.had_row[i]) {
      as_statement.push_back(run.rows[i]);
      continue;
    }
    as_events.push_back(run.rows[i]);
    kinds.push_back(run.deletes ? Kind::kDelete : run.had_row[i] ? Kind::kUpdate : Kind::kWrite);
  }
  // Each chunk is encoded while the server applies the one sent before.
  uint64_t affected = 0;
  std::span<const uint32_t> sent;  // the chunk the server is applying
  size_t sent_bytes = 0;
  const auto finish_sent = [&] {
    if (sent.empty()) return;
    const std::span<const uint32_t> chunk = std::exchange(sent, {});
    if (applied(chunk.size(), [&] { connection.finish(); })) {
      counters_.statements->add(1);
      counters_.records_send->add(chunk.size());
      counters_.bytes_send->add(sent_bytes);
      if (counters_.row_events != nullptr) counters_.row_events->add(chunk.size());
      affected += chunk.size();
    } else {
      affected += execute_chunked(connection, statement, batch, chunk);
    }
  };
  size_t begin = 0;
  while (begin < as_events.size()) {
    if (begin > 0) fault_point("mid-flush", subtask_);
    // Within half the statements' budget: base64 takes a third more, and
    // an update carries its key twice.
    size_t bytes = 0;
    const size_t end =
        chunk_end(batch, as_events, begin, upsert_.columns, packet_budget_ / 2, bytes);
    const auto chunk = std::span<const uint32_t>(as_events).subspan(begin, end - begin);
    std::optional<std::string> sql =
        encode_row_events(batch, chunk, std::span<const Kind>(kinds).subspan(begin, end - begin));
    finish_sent();
    const size_t sql_bytes = sql ? sql->size() : 0;
    // One row of values of megabytes may not fit a packet as base64, which
    // the server would refuse, dropping the connection: it goes bound.
    const bool fits = sql_bytes + 1024 < max_packet_;
    if (sql && fits && row_events_ &&
        applied(chunk.size(), [&] { connection.send(std::move(*sql)); })) {
      sent = chunk;
      sent_bytes = sql_bytes;
    } else {
      affected += execute_chunked(connection, statement, batch, chunk);
    }
    begin = end;
  }
  finish_sent();
  if (!as_statement.empty())
    affected += execute_chunked(connection, statement, batch, as_statement);
  return affected;
}

std::optional<std::string> StatementWriter::encode_row_events(
    const Batch& batch, std::span<const uint32_t> rows,
    std::span<const RowEventEncoder::Kind> kinds) {
  if (!row_events_) return std::nullopt;
  RowEventEncoder& encoder = *row_events_;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (!encoder.add(kinds[i], batch, rows[i])) {
      encoder.clear();
      if (counters_.row_event_fallbacks != nullptr) counters_.row_event_fallbacks->add(1);
      return std::nullopt;
    }
  }
  return encoder.statement();
}

template <typename Call>
bool StatementWriter::applied(size_t rows, Call&& call) {
  try {
    call();
    return true;
  } catch (const MySqlError& e) {
    counters_.records_send_errors->add(rows);
    // What a statement would meet, too: it decides, as it does without
    // row events.
    if (e.retriable() || e.code() == ER_LOCK_WAIT_TIMEOUT) throw;
    const bool of_these_rows = e.code() == ER_KEY_NOT_FOUND || e.rejects_value() ||
                               e.code() == ER_NO_REFERENCED_ROW_2 ||
                               e.code() == ER_ROW_IS_REFERENCED_2;
    if (!of_these_rows) {
      spdlog::warn("mysql sink {}: the server refused row events ({}); writing statements", target_,
                   e.what());
      row_events_.reset();
    }
    if (counters_.row_event_fallbacks != nullptr) counters_.row_event_fallbacks->add(1);
    return false;
  }
}

uint64_t StatementWriter::execute_each(SinkConnection& connection, const BulkSql& statement,
                                       const Batch& batch, std::span<const uint32_t> rows) {
  uint64_t affected = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    try {
      affected += connection.execute_bulk(statement, batch, rows.subspan(i, 1));
    } catch (const MySqlError& e) {
      if (!e.rejects_value()) throw with_rejected_row(e, batch, rows.subspan(i, 1));
      dead_letter(connection, batch, rows[i], e);
    }
  }
  return affected;
}

std::string StatementWriter::key_of(const Batch& batch, uint32_t row) const {
  const RowRef change = const_cast<Batch&>(batch).ref(row);
  std::string out;
  for (size_t k : key_) {
    out += (out.empty() ? "" : ", ") + batch.schema().column(k).name + "=" +
           change.value(k).to_string();
  }
  return out;
}

namespace {

// `text` as a literal any sql_mode reads alike: X'…'.
std::string hex_literal(std::string_view text) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  std::string out = "X'";
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    out += kDigits[byte >> 4];
    out += kDigits[byte & 15];
  }
  return out + "'";
}

}  // namespace

void StatementWriter::dead_letter(SinkConnection& connection, const Batch& batch, uint32_t row,
                                  const MySqlError& e) {
  const DeadLetters& letters = *dead_letters_;
  std::string where;
  if (const auto position = batch.position(row); position && describe_position_) {
    where = describe_position_(*position);
  }
  spdlog::warn("mysql sink {}: the change of key {} refused ({}): into dead-letter table '{}'",
               target_, key_of(batch, row), e.message(), letters.table);
  connection.execute(
      "INSERT INTO " + quote_identifier(letters.table) +
      " (job, source_table, target_table, change_key, change_kind, change_values, error_code, "
      "error, position) VALUES (" +
      hex_literal(letters.job) + ", " +
      hex_literal(letters.source.empty() ? table_ : letters.source) + ", " + hex_literal(table_) +
      ", " + hex_literal(key_of(batch, row)) + ", " + hex_literal(to_string(batch.kind(row))) +
      ", " + hex_literal(const_cast<Batch&>(batch).ref(row).to_string()) + ", " +
      std::to_string(e.code()) + ", " + hex_literal(e.message()) + ", " + hex_literal(where) + ")");
  if (counters_.dead_letters != nullptr) counters_.dead_letters->add(1);
}

std::string dead_letter_table_sql(const std::string& table) {
  return "CREATE TABLE IF NOT EXISTS " + quote_identifier(table) +
         " (id BIGINT AUTO_INCREMENT PRIMARY KEY, job VARCHAR(255) NOT NULL, source_table "
         "VARCHAR(255) NOT NULL, target_table VARCHAR(64) NOT NULL, change_key TEXT NOT NULL, "
         "change_kind CHAR(2) NOT NULL, change_values MEDIUMBLOB NOT NULL, error_code INT NOT "
         "NULL, error TEXT NOT NULL, position VARCHAR(255) NOT NULL, refused_at TIMESTAMP(3) NOT "
         "NULL DEFAULT CURRENT_TIMESTAMP(3)) DEFAULT CHARSET=utf8mb4";
}

void fail_write(const std::string& doing, const std::string& target, const MySqlError& e,
                int retries) {
  const std::string message =
      doing + " " + target + " failed" +
      (retries > 0 ? " after " + count_of(static_cast<uint64_t>(retries), "retry", "retries")
                   : "") +
      ": " + e.what();
  if (e.rejects_value()) throw DataError(message);
  if (e.rejects_configuration()) throw ConfigError(message);
  throw Error(message);
}

namespace {

// Waits before retry `retry` (0 first) after `e`; false if cancelled.
bool wait_before_retry(const RetryPolicy& policy, int retry, const std::string& target,
                       const MySqlError& e) {
  const auto wait = policy.backoff * (1 << std::min(retry, 6));
  spdlog::warn("mysql sink {}: {}; retrying in {} ms on a new connection", target, e.what(),
               wait.count());
  if (policy.retries != nullptr) policy.retries->add(1);
  if (policy.canceller != nullptr) return policy.canceller->sleep_for(wait);
  std::this_thread::sleep_for(wait);
  return true;
}

}  // namespace

void before_retry(const RetryPolicy& policy, int retry, const std::string& doing,
                  const std::string& target, const MySqlError& e) {
  const bool cancelled = policy.canceller != nullptr && policy.canceller->cancelled();
  if (!e.retriable() || retry >= policy.max_retries || cancelled ||
      !wait_before_retry(policy, retry, target, e)) {
    fail_write(doing, target, e, retry);
  }
}

}  // namespace sluice
