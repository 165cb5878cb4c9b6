#include "sluice/tests/unique_changes.hpp"

#include <cctype>

namespace sluice::testing {
namespace {

std::string lowered(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

UniqueEmailChanges::UniqueEmailChanges(Options options, uint64_t seed)
    : options_(std::move(options)), random_(seed) {}

Schema UniqueEmailChanges::schema(bool text_keys) {
  return Schema::parse(text_keys ? "id STRING, email STRING, v BIGINT"
                                 : "id BIGINT, email STRING, v BIGINT");
}

bool UniqueEmailChanges::same(const std::string& a, const std::string& b) const {
  return options_.case_insensitive ? lowered(a) == lowered(b) : a == b;
}

bool UniqueEmailChanges::free(const Table& table, const std::string& email,
                              const std::string& except) const {
  for (const auto& [id, person] : table) {
    if (id != except && same(person.email, email)) return false;
  }
  return true;
}

Value UniqueEmailChanges::key(int id) const {
  if (!options_.text_keys) return Value(id);
  std::string name = std::to_string(id);
  name.insert(name.begin(), 'k');
  return Value(std::move(name));
}

Row UniqueEmailChanges::row(RowKind kind, const Value& id, const Person& person) const {
  return Row(kind, {id, person.email, person.v});
}

std::vector<Row> UniqueEmailChanges::next() {
  const auto pick = [&](size_t n) { return static_cast<size_t>(random_() % n); };
  const int64_t step = ++step_;
  std::vector<Row> changes;
  const Value id = key(static_cast<int>(pick(static_cast<size_t>(options_.keys))));
  const std::string k = id.to_string();
  const std::string email = options_.emails[pick(options_.emails.size())];
  const auto found = table_.find(k);
  const auto update = [&](const Value& which, const Person& from, const Person& to) {
    changes.push_back(row(RowKind::kUpdateBefore, which, from));
    changes.push_back(row(RowKind::kUpdateAfter, which, to));
  };
  switch (pick(5)) {
    case 0:  // an insert, or a delete
      if (found == table_.end()) {
        if (!free(table_, email)) break;
        table_[k] = {email, step};
        changes.push_back(row(RowKind::kInsert, id, table_[k]));
      } else {
        changes.push_back(row(RowKind::kDelete, id, found->second));
        table_.erase(found);
      }
      break;
    case 1:  // an update, of the email as often as not
    case 2: {
      if (found == table_.end() || !free(table_, email, k)) break;
      const Person before = found->second;
      found->second = {pick(2) == 0 ? before.email : email, step};
      if (options_.lone_updates && pick(2) == 0) {
        changes.push_back(row(RowKind::kUpdateAfter, id, found->second));
      } else {
        update(id, before, found->second);
      }
      break;
    }
    case 3: {  // a key-changing update, its email kept or changed
      const Value to = key(static_cast<int>(pick(static_cast<size_t>(options_.keys))));
      if (found == table_.end() || table_.contains(to.to_string())) break;
      const Person before = found->second;
      const Person after{pick(2) == 0 ? before.email : email, step};
      if (!free(table_, after.email, k)) break;
      table_.erase(found);
      table_[to.to_string()] = after;
      changes.push_back(row(RowKind::kUpdateBefore, id, before));
      changes.push_back(row(RowKind::kUpdateAfter, to, after));
      break;
    }
    case 4: {  // two rows swap their emails, through a third
      const Value other = key(static_cast<int>(pick(static_cast<size_t>(options_.keys))));
      const auto second = table_.find(other.to_string());
      if (found == table_.end() || second == table_.end() || found == second) break;
      const Person a = found->second, b = second->second;
      const Person parked{"parked " + std::to_string(step), a.v};
      update(id, a, parked);
      update(other, b, {a.email, b.v});
      update(id, parked, {b.email, a.v});
      found->second.email = b.email;
      second->second.email = a.email;
      break;
    }
  }
  return changes;
}

}  // namespace sluice::testing
