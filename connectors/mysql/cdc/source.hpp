#pragma once

#include <compare>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sluice/connectors/mysql/binlog_position.hpp"
#include "sluice/connectors/mysql/url.hpp"
#include "sluice/engine/graph/job_graph.hpp"
#include "sluice/engine/graph/options.hpp"

namespace sluice {

/// The changes of MySQL/MariaDB tables, as Flink CDC's mysql-cdc source
/// gives them: first a snapshot of their rows (+I), read in one consistent
/// transaction in primary-key chunks, then every committed change from the
/// binlog position the snapshot was taken at (+I, -U/+U, -D), so that the
/// two meet with no gap and no duplicate. The tables of `tables` (shards of
/// one table, say) must have the same columns and key; their changes make
/// one stream. The tables `patterns` match make a stream of several
/// tables, each of its own columns, whose ALTER TABLEs it follows: a
/// SchemaChange in the stream (its detail a MySqlSchemaChange), the
/// columns kept in its checkpoint with the position (SchemaHistory). Its checkpointed state names
/// the server and the tables, and where it is: in the snapshot, the table and the last key it
/// emitted and the binlog position those rows are as of; in the binlog, the transaction and how
/// many of its changes it emitted, and the XA transactions prepared before it; and when the
/// server made the binlog file of that position, so that a restore fails rather than read a file
/// of that name that a binlog reset (RESET MASTER) made anew. A restore gives
/// every change after the checkpoint once: in the snapshot it takes a new one, first brings the
/// rows it emitted up to that snapshot's position from the binlog, then reads the rest; a row not
/// among them that the binlog removed meanwhile goes out as an insert and its delete, for a target
/// that is ahead of the checkpoint (at-least-once). With checkpoints on, a fresh snapshot emits
/// nothing until a checkpoint holds where it began. It runs with
/// parallelism 1, and hands control back to its task at least every 100 ms
/// whatever the server sends.
struct MySqlCdcOptions {
  /// The server read, and the database of `tables`. Default: SLUICE_MYSQL_URL.
  MySqlUrl url;
  /// Tables of the URL's database whose changes make one stream: shards of
  /// one table, with the same columns and key. Default: none; one of
  /// `tables` and `patterns` is required.
  std::vector<std::string> tables;
  /// Or: `db.table` patterns (match_tables()); the tables they match make a
  /// stream of several tables (StreamType::tables, named "db.table"), each
  /// with its own columns and key, read through one binlog connection.
  /// Default: none.
  std::vector<std::string> patterns;
  /// The id it reads the binlog under, unique among the server's replicas;
  /// 0 picks one from the job's and the operator's names. Default: 0.
  uint32_t server_id = 0;
  enum class Startup {
    kInitial,   ///< snapshot, then the binlog
    kSnapshot,  ///< the snapshot alone: the source ends after it
    kLatest,    ///< the binlog from where it ends now, no snapshot
    kPosition,  ///< the binlog from `position`, no snapshot
  };
  /// Where it starts. Default: kInitial.
  Startup startup = Startup::kInitial;
  /// Of kPosition: where in the binlog. Default: none.
  BinlogPosition position;
  /// Rows per snapshot query. Default: 1000.
  size_t chunk_rows = 1000;
  /// Records per second; 0 = as fast as possible. Default: 0.
  double rate = 0;

  /// Reads the `source.*` keys of mysql_cdc_option_specs().
  static MySqlCdcOptions from(const Config& config);
};

std::vector<OptionSpec> mysql_cdc_option_specs();

/// The source, as a graph node: the tables of `options.tables`, whose
/// columns (in the table's order, with its primary key) are its output's,
/// read from the server now. Throws ConfigError for a table that is
/// missing, has no primary key, a column of a type the source does not
/// take, or columns that differ from the first table's.
SourceDef mysql_cdc_source(const MySqlCdcOptions& options);

}  // namespace sluice
