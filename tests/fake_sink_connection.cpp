#include "sluice/tests/fake_sink_connection.hpp"

#include <algorithm>
#include <utility>

namespace sluice::testing {

class FakeConnection final : public SinkConnection {
 public:
  FakeConnection(FakeServer& server, uint64_t id, int64_t started)
      : server_(server), id_(id), started_(started) {}
  ~FakeConnection() override { server_.live_.erase(id_); }

  void execute(std::string_view sql) override {
    call(std::string(sql));
    if (sql == "START TRANSACTION") {
      in_transaction_ = true;
      pending_.clear();
    } else if (sql == "COMMIT") {
      server_.apply(pending_);
      pending_.clear();
      in_transaction_ = false;
    }
  }

  // The server runs what send() sent when finish() asks for its end: a
  // failure comes there, as a real one's does.
  void send(std::string sql) override { sent_ = std::move(sql); }
  void finish() override { execute(*std::exchange(sent_, std::nullopt)); }
  bool shares_session() const override { return server_.shared_session; }

  uint64_t execute_bulk(const BulkSql& statement, const Batch& batch,
                        std::span<const uint32_t> numbers) override {
    const bool remove = statement.head.find("DELETE FROM") != std::string::npos;
    call(std::string(remove ? "DELETE " : "UPSERT ") + std::to_string(numbers.size()));
    std::vector<Row> rows;
    for (uint32_t i : numbers) rows.push_back(batch.row(i));
    for (const Row& row : rows) {
      if (server_.is_locked(row)) {
        ++server_.lock_conflicts;
        throw MySqlError(1205, "Lock wait timeout exceeded; try restarting transaction");
      }
    }
    if (xa_ && !server_.prepared.empty()) ++server_.writes_while_prepared;
    std::vector<FakeServer::Change> changes;
    for (Row& row : rows) changes.push_back({remove, std::move(row), std::nullopt});
    change(std::move(changes));
    return rows.size();
  }

  std::optional<TableInfo> find_table(const std::string& table) override {
    call("DESCRIBE " + table);
    if (server_.table_info.columns.empty()) return std::nullopt;
    return server_.table_info;
  }
  uint64_t max_allowed_packet() override { return server_.max_allowed_packet; }
  KeyImage text_image(const TableColumn&, uint32_t) override { return {}; }

  void xa(std::string_view command, const Xid& xid) override {
    call("XA " + std::string(command) + " " + xid.to_string());
    auto& prepared = server_.prepared;
    const auto found =
        std::find_if(prepared.begin(), prepared.end(), [&](const auto& p) { return p.xid == xid; });
    if (command == "START") {
      xa_ = xid;
      pending_.clear();
    } else if (command == "PREPARE") {
      prepared.push_back({xid, std::move(pending_)});
      pending_.clear();
      xa_.reset();
    } else if (command == "COMMIT" || command == "ROLLBACK") {
      if (found == prepared.end()) throw MySqlError(1397, "XAER_NOTA: Unknown XID");
      if (command == "COMMIT") server_.apply(found->changes);
      prepared.erase(found);
    }
  }

  std::vector<Xid> xa_recover() override {
    call("XA RECOVER");
    std::vector<Xid> xids;
    for (const auto& p : server_.prepared) xids.push_back(p.xid);
    return xids;
  }

  void create_marker_table() override { call("CREATE MARKERS"); }
  void insert_marker(const Xid& xid) override {
    call("INSERT MARKER " + xid.to_string());
    change({{false, std::nullopt, xid}});
  }
  bool has_marker(const Xid& xid) override {
    call("HAS MARKER " + xid.to_string());
    return std::find(server_.markers.begin(), server_.markers.end(), xid) != server_.markers.end();
  }
  void delete_marker(const Xid& xid) override {
    call("DELETE MARKER " + xid.to_string());
    std::erase(server_.markers, xid);
  }

  SessionId session() const override { return {id_, started_}; }
  void wait_until_gone(const SessionId& session) override {
    call("WAIT c" + std::to_string(session.connection));
    if (session.server_started == server_.started_ && server_.live_.contains(session.connection)) {
      throw Error("fake: c" + std::to_string(session.connection) + " would never leave");
    }
  }

 private:
  void call(const std::string& text) { server_.check(id_, text); }
  // In the open transaction, or at once under autocommit.
  void change(std::vector<FakeServer::Change>&& changes) {
    if (!in_transaction_ && !xa_) {
      server_.apply(changes);
      return;
    }
    std::move(changes.begin(), changes.end(), std::back_inserter(pending_));
  }

  FakeServer& server_;
  uint64_t id_;
  int64_t started_;
  bool in_transaction_ = false;
  std::optional<Xid> xa_;
  std::vector<FakeServer::Change> pending_;  // lost with the connection unless prepared
  std::optional<std::string> sent_;          // by send(), for finish()
};

std::unique_ptr<SinkConnection> FakeServer::connect() {
  const uint64_t id = next_id_++;
  check(id, "CONNECT");
  live_.insert(id);
  ++connections_made;
  return std::make_unique<FakeConnection>(*this, id, started_);
}

void FakeServer::commit_prepared() {
  for (const auto& p : prepared) apply(p.changes);
  prepared.clear();
}

void FakeServer::restart() {
  live_.clear();
  next_id_ = 1;
  started_ += 100;
}

std::vector<std::string> FakeServer::calls(const std::string& text) const {
  std::vector<std::string> found;
  for (const auto& line : log) {
    if (line.find(text) != std::string::npos) found.push_back(line);
  }
  return found;
}

std::string FakeServer::key_of(const Row& row) const {
  std::string key = row.fields.at(0).to_string();
  if (fold_case_) {
    std::transform(key.begin(), key.end(), key.begin(),
                   [](unsigned char c) { return std::tolower(c); });
  }
  return key;
}

bool FakeServer::is_locked(const Row& row) const {
  const std::string key = key_of(row);
  for (const auto& p : prepared) {
    for (const Change& c : p.changes) {
      if (c.row && key_of(*c.row) == key) return true;
    }
  }
  return false;
}

void FakeServer::apply(const std::vector<Change>& changes) {
  for (const Change& c : changes) {
    if (c.marker) {
      markers.push_back(*c.marker);
    } else if (c.remove) {
      table.erase(key_of(*c.row));
    } else {
      table.insert_or_assign(key_of(*c.row), *c.row);
    }
  }
}

void FakeServer::check(uint64_t id, const std::string& call) {
  std::string line = "c";
  line += std::to_string(id);
  line += ' ';
  line += call;
  log.push_back(std::move(line));
  if (call != "CONNECT" && !live_.contains(id))
    throw MySqlError(2013, "Lost connection to server during query");
  for (auto it = failures_.begin(); it != failures_.end(); ++it) {
    if (call.starts_with(it->prefix) && (!it->while_prepared || !prepared.empty())) {
      const MySqlError error(it->code, "fake failure of " + call + it->detail);
      failures_.erase(it);
      throw error;
    }
  }
}

}  // namespace sluice::testing
