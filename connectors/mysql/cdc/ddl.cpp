#include "sluice/connectors/mysql/cdc/ddl.hpp"

#include <algorithm>
#include <cctype>
#include <initializer_list>
#include <optional>

namespace sluice {
namespace {

struct Token {
  enum class Kind { kWord, kQuoted, kString, kSymbol };
  Kind kind;
  std::string text;   // as written, quotes taken off
  std::string upper;  // text upper-cased
  size_t begin = 0;   // where it stands in the statement, quotes included
  size_t end = 0;
};

std::string upper(std::string text) {
  for (char& c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return text;
}

bool is_word_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' ||
         static_cast<unsigned char>(c) >= 0x80;
}

// The statement's tokens, comments skipped and executable comments
// (`/*!50100 … */`, `/*M!100100 … */`) read as the server reads them.
std::vector<Token> tokenize(std::string_view sql) {
  std::vector<Token> tokens;
  const size_t n = sql.size();
  size_t i = 0;
  while (i < n) {
    const char c = sql[i];
    const std::string_view rest = sql.substr(i);
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (c == '#' || (rest.size() >= 3 && rest.substr(0, 2) == "--" &&
                            std::isspace(static_cast<unsigned char>(rest[2])))) {
      while (i < n && sql[i] != '\n') ++i;
    } else if (rest.starts_with("/*!") || rest.starts_with("/*M!")) {
      i += rest[2] == '!' ? 3 : 4;
      while (i < n && std::isdigit(static_cast<unsigned char>(sql[i]))) ++i;  // the version
    } else if (rest.starts_with("/*")) {
      const size_t end = sql.find("*/", i + 2);
      i = end == std::string_view::npos ? n : end + 2;
    } else if (rest.starts_with("*/")) {
      i += 2;  // the end of an executable comment
    } else if (c == '`' || c == '"' || c == '\'') {
      // A quoted name (`…`, or "…" under ANSI_QUOTES) or a string: a
      // doubled quote stands for itself, a backslash escapes in strings.
      const size_t begin = i;
      std::string text;
      for (++i; i < n; ++i) {
        if (sql[i] == c && i + 1 < n && sql[i + 1] == c) {
          text += c;
          ++i;
        } else if (sql[i] == c) {
          ++i;
          break;
        } else if (sql[i] == '\\' && c != '`' && i + 1 < n) {
          text += sql[++i];
        } else {
          text += sql[i];
        }
      }
      tokens.push_back(
          {c == '\'' ? Token::Kind::kString : Token::Kind::kQuoted, text, upper(text), begin, i});
    } else if (is_word_char(c)) {
      const size_t start = i;
      while (i < n && is_word_char(sql[i])) ++i;
      std::string text(sql.substr(start, i - start));
      tokens.push_back({Token::Kind::kWord, text, upper(text), start, i});
    } else {
      tokens.push_back({Token::Kind::kSymbol, std::string(1, c), std::string(1, c), i, i + 1});
      ++i;
    }
  }
  return tokens;
}

using Effect = DdlChange::Effect;
using Action = DdlChange::Action;

// Reads a statement's tokens front to back.
class Parser {
 public:
  Parser(std::vector<Token> tokens, std::string_view database)
      : tokens_(std::move(tokens)), database_(database) {}

  bool take_alter() { return take("ALTER"); }

  std::vector<DdlChange> changes() {
    if (take("CREATE")) return create();
    if (take("ALTER")) return alter();
    if (take("DROP")) return drop();
    if (take("RENAME")) return rename();
    if (take("TRUNCATE")) {
      take("TABLE");
      if (auto table = name()) {
        DdlChange truncated =
            acting(change(std::move(*table), Effect::kRowsChange), Action::kTruncate);
        truncated.rows_unlogged = true;
        return {truncated};
      }
    }
    return {};
  }

  std::vector<std::pair<std::string, std::string>> written() {
    std::vector<Name> names;
    if (take("INSERT") || take("REPLACE")) {
      while (is_any({"LOW_PRIORITY", "DELAYED", "HIGH_PRIORITY", "IGNORE"})) ++at_;
      take("INTO");
      if (auto table = name()) names.push_back(std::move(*table));
    } else if (take("LOAD")) {
      while (at_ < tokens_.size() && !(is("INTO") && is("TABLE", 1))) ++at_;
      at_ += 2;
      if (auto table = name()) names.push_back(std::move(*table));
    } else if (is_any({"UPDATE", "DELETE", "WITH"})) {
      const bool update = take("UPDATE"), with = !update && take("WITH");
      if (!update && !with) take("DELETE");
      int depth = 0;
      while (at_ < tokens_.size()) {
        const Token& t = tokens_[at_];
        if (t.kind == Token::Kind::kSymbol) {
          depth += t.text == "(" ? 1 : t.text == ")" ? -1 : 0;
          if (t.text == ";" && depth == 0) break;
          ++at_;
          continue;
        }
        if (!with && depth == 0 && t.kind == Token::Kind::kWord &&
            (update ? t.upper == "SET" : is_any({"WHERE", "ORDER", "LIMIT", "RETURNING"}))) {
          break;
        }
        if (depth > 0 && !with) {
          ++at_;
          continue;
        }
        if (auto table = name()) {
          names.push_back(std::move(*table));
        } else {
          ++at_;
        }
      }
    }
    std::vector<std::pair<std::string, std::string>> out;
    for (Name& n : names) out.emplace_back(std::move(n.database), std::move(n.table));
    return out;
  }

 private:
  struct Name {
    std::string database, table;
  };

  const Token* peek(size_t ahead = 0) const {
    return at_ + ahead < tokens_.size() ? &tokens_[at_ + ahead] : nullptr;
  }
  bool is(const char* word, size_t ahead = 0) const {
    const Token* t = peek(ahead);
    return t != nullptr && t->kind == Token::Kind::kWord && t->upper == word;
  }
  bool is_any(std::initializer_list<const char*> words, size_t ahead = 0) const {
    return std::any_of(words.begin(), words.end(), [&](const char* w) { return is(w, ahead); });
  }
  bool take(const char* word) {
    if (!is(word)) return false;
    ++at_;
    return true;
  }
  bool is_symbol(char symbol) const {
    const Token* t = peek();
    return t != nullptr && t->kind == Token::Kind::kSymbol && t->text[0] == symbol;
  }
  // (`a`, `b`): the names, past the parentheses; empty if there are none.
  std::vector<std::string> column_list() {
    std::vector<std::string> out;
    if (!take_symbol('(')) return out;
    while (std::optional<std::string> column = identifier()) {
      out.push_back(std::move(*column));
      if (!take_symbol(',')) break;
    }
    if (!take_symbol(')')) out.clear();
    return out;
  }
  bool take_symbol(char symbol) {
    const Token* t = peek();
    if (t == nullptr || t->kind != Token::Kind::kSymbol || t->text[0] != symbol) return false;
    ++at_;
    return true;
  }
  void take_if_exists() {
    if (is("IF") && is("EXISTS", 1)) at_ += 2;
    if (is("IF") && is("NOT", 1) && is("EXISTS", 2)) at_ += 3;
  }
  std::optional<std::string> identifier() {
    const Token* t = peek();
    if (t == nullptr || (t->kind != Token::Kind::kWord && t->kind != Token::Kind::kQuoted)) {
      return std::nullopt;
    }
    ++at_;
    return t->text;
  }
  // `db`.`table` or `table`, the default database's.
  std::optional<Name> name() {
    std::optional<std::string> first = identifier();
    if (!first) return std::nullopt;
    if (!take_symbol('.')) return Name{std::string(database_), std::move(*first)};
    std::optional<std::string> second = identifier();
    if (!second) return std::nullopt;
    return Name{std::move(*first), std::move(*second)};
  }
  static DdlChange change(Name name, Effect effect) {
    return {std::move(name.database), std::move(name.table), effect};
  }
  static DdlChange acting(DdlChange change, Action action) {
    change.action = action;
    return change;
  }
  static DdlChange created(Name name) {
    DdlChange out = change(std::move(name), Effect::kRowsChange);
    out.creates = true;
    return out;
  }
  // The tokens up to the next comma outside parentheses (or the end), and
  // past that comma.
  std::vector<const Token*> clause() {
    std::vector<const Token*> out;
    int depth = 0;
    for (; at_ < tokens_.size(); ++at_) {
      const Token& t = tokens_[at_];
      if (t.kind == Token::Kind::kSymbol) {
        if (t.text == "(") ++depth;
        if (t.text == ")") --depth;
        if (t.text == ";" && depth == 0) break;
        if (t.text == "," && depth == 0) {
          ++at_;
          break;
        }
      }
      out.push_back(&t);
    }
    return out;
  }

  std::vector<DdlChange> create() {
    const bool replaces = take("OR") && take("REPLACE");
    if (take("TEMPORARY")) return {};  // shadows a table in one session only
    if (take("TABLE")) {
      take_if_exists();
      // The new table, not the one of its LIKE or AS SELECT; OR REPLACE
      // drops the table of its name first, if there is one.
      auto table = name();
      if (!table) return {};
      std::vector<DdlChange> out;
      if (replaces) out.push_back(acting(change(*table, Effect::kRowsChange), Action::kDrop));
      out.push_back(acting(created(std::move(*table)), Action::kCreate));
      return out;
    }
    take("ONLINE") || take("OFFLINE");
    take("UNIQUE") || take("FULLTEXT") || take("SPATIAL");
    if (take("INDEX")) return index_on(false);
    return {};
  }

  // … [IF [NOT] EXISTS] index [USING type] ON table: an index of `table`
  // (the primary key, if `primary`).
  std::vector<DdlChange> index_on(bool primary) {
    take_if_exists();
    if (peek() != nullptr && peek()->upper == "PRIMARY") primary = true;
    identifier();
    if (take("USING")) identifier();
    if (!take("ON")) return {};
    if (auto table = name()) {
      return {change(std::move(*table), primary ? Effect::kRowsChange : Effect::kRowsAlike)};
    }
    return {};
  }

  std::vector<DdlChange> drop() {
    if (take("TEMPORARY")) return {};
    if (take("TABLE") || take("TABLES")) {
      take_if_exists();
      std::vector<DdlChange> out;
      do {
        if (auto table = name()) {
          out.push_back(acting(change(std::move(*table), Effect::kRowsChange), Action::kDrop));
        }
      } while (take_symbol(','));
      return out;
    }
    take("ONLINE") || take("OFFLINE");
    if (take("INDEX")) return index_on(false);
    if (take("DATABASE") || take("SCHEMA")) {
      take_if_exists();
      if (auto database = identifier()) return {{std::move(*database), "", Effect::kRowsChange}};
    }
    return {};
  }

  std::vector<DdlChange> rename() {
    if (!take("TABLE") && !take("TABLES")) return {};
    std::vector<DdlChange> out;
    do {
      take_if_exists();
      auto from = name();
      if (!from || !take("TO")) break;
      auto to = name();
      if (!to) break;
      // The one leaves, the other takes its place.
      out.push_back(acting(change(std::move(*from), Effect::kRowsChange), Action::kRename));
      out.push_back(acting(created(std::move(*to)), Action::kRename));
    } while (take_symbol(','));
    return out;
  }

  std::vector<DdlChange> alter() {
    take("ONLINE");
    const bool ignore = take("IGNORE");
    if (!take("TABLE")) return {};
    take_if_exists();
    auto table = name();
    if (!table) return {};
    std::vector<DdlChange> out;
    bool renamed = false;
    int nullable_columns = 0;
    Effect effect = Effect::kRowsAlike;
    bool rows_unlogged = false, defaults = false;
    while (at_ < tokens_.size() && !take_symbol(';')) {
      const size_t start = at_;
      // RENAME [TO|AS] other: the table takes another name.
      if (take("RENAME") && !is_any({"INDEX", "KEY", "COLUMN"})) {
        take("TO") || take("AS");
        if (auto to = name()) out.push_back(acting(created(std::move(*to)), Action::kRename));
        renamed = true;
        clause();
        continue;
      }
      at_ = start;
      const std::vector<const Token*> c = clause();
      // Partitions whose rows go, come or change places unlogged; CONVERT
      // TABLE other TO PARTITION brings in another table's.
      if ((word_at(c, 0, {"DROP", "TRUNCATE", "EXCHANGE"}) && word_at(c, 1, {"PARTITION"})) ||
          (word_at(c, 0, {"CONVERT"}) && word_at(c, 1, {"PARTITION", "TABLE"}))) {
        rows_unlogged = true;
      }
      // ALTER IGNORE TABLE … ADD UNIQUE (or PRIMARY KEY) deletes the rows
      // whose values repeat.
      if (ignore && word_at(c, 0, {"ADD"}) && (has_word(c, "UNIQUE") || has_word(c, "PRIMARY"))) {
        rows_unlogged = true;
      }
      defaults = defaults || sets_default(c);
      if (adds_nullable_column_at_end(c)) {
        ++nullable_columns;
      } else {
        effect = std::max(effect, alter_effect(c));
      }
    }
    if (nullable_columns > 0) {
      effect = std::max(effect,
                        nullable_columns == 1 ? Effect::kNullableColumnAtEnd : Effect::kRowsChange);
    }
    DdlChange altered = change(std::move(*table), renamed ? Effect::kRowsChange : effect);
    altered.altered_in_place = !renamed;
    altered.rows_unlogged = rows_unlogged;
    altered.defaults = defaults;
    if (renamed) altered.action = Action::kRename;
    out.insert(out.begin(), std::move(altered));
    return out;
  }

  // ALTER TABLE's clauses, each a run of tokens; at_ past the table's name.
  std::vector<std::vector<const Token*>> alter_table_clauses() {
    std::vector<std::vector<const Token*>> out;
    take("ONLINE");
    take("IGNORE");
    if (!take("TABLE")) return out;
    take_if_exists();
    if (!name()) return out;
    while (at_ < tokens_.size() && !take_symbol(';')) out.push_back(clause());
    return out;
  }

  // ALTER [COLUMN] c SET DEFAULT …, DROP DEFAULT.
  static bool sets_default(const std::vector<const Token*>& c) {
    return word_at(c, 0, {"ALTER"}) && !word_at(c, 1, {"INDEX", "KEY"}) && has_word(c, "DEFAULT");
  }

  // What alter_clauses() keeps of a clause: it changes the rows' columns,
  // their defaults, or the charset of columns added later.
  static bool replayed(const std::vector<const Token*>& c) {
    if (has_word(c, "FOREIGN") || has_word(c, "PARTITION") || has_word(c, "PARTITIONS") ||
        has_word(c, "PARTITIONING")) {
      return false;
    }
    if (sets_default(c)) return true;
    if (word_at(c, 0, {"DEFAULT", "CHARACTER", "CHARSET", "COLLATE", "CONVERT"})) return true;
    // RENAME [TO|AS] other: the table's name, not its columns.
    if (word_at(c, 0, {"RENAME"}) && !word_at(c, 1, {"COLUMN", "INDEX", "KEY"})) return false;
    return alter_effect(c) != Effect::kRowsAlike;
  }

 public:
  std::string alter_clauses(std::string_view statement, std::string_view table) {
    std::string out;
    for (const auto& c : alter_table_clauses()) {
      if (c.empty() || !replayed(c)) continue;
      out += (out.empty() ? "" : ", ");
      out += statement.substr(c.front()->begin, c.back()->end - c.front()->begin);
    }
    return out.empty() ? out : "ALTER TABLE " + std::string(table) + " " + out;
  }

  std::vector<std::pair<std::string, std::string>> column_renames() {
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& c : alter_table_clauses()) {
      const auto name_at = [&](size_t i) -> std::optional<std::string> {
        if (i >= c.size() ||
            (c[i]->kind != Token::Kind::kWord && c[i]->kind != Token::Kind::kQuoted))
          return std::nullopt;
        return c[i]->text;
      };
      if (word_at(c, 0, {"CHANGE"})) {
        size_t i = word_at(c, 1, {"COLUMN"}) ? 2 : 1;
        if (word_at(c, i, {"IF"}) && word_at(c, i + 1, {"EXISTS"})) i += 2;
        const auto from = name_at(i), to = name_at(i + 1);
        if (from && to && *from != *to) out.emplace_back(*from, *to);
      } else if (word_at(c, 0, {"RENAME"}) && word_at(c, 1, {"COLUMN"})) {
        size_t i = 2;
        if (word_at(c, i, {"IF"}) && word_at(c, i + 1, {"EXISTS"})) i += 2;
        const auto from = name_at(i);
        const auto to = name_at(i + 2);
        if (from && to && word_at(c, i + 1, {"TO"})) out.emplace_back(*from, *to);
      }
    }
    return out;
  }

  // The DEFAULT and the generation expression (AS (…)) of each column of
  // CREATE TABLE `definition`, as written there.
  std::map<std::string, ColumnExpressions> column_expressions(std::string_view definition) {
    std::map<std::string, ColumnExpressions> out;
    if (!take("CREATE") || !take("TABLE")) return out;
    take_if_exists();
    name();
    if (!take_symbol('(')) return out;
    const auto text = [&](const std::vector<const Token*>& item, size_t first, size_t end) {
      return std::string(
          definition.substr(item[first]->begin, item[end - 1]->end - item[first]->begin));
    };
    for (bool last = false; !last && at_ < tokens_.size();) {
      std::vector<const Token*> item = clause();
      // The last item runs on past the parenthesis that ends the list, into
      // the table's options (DEFAULT CHARSET=…): it ends there.
      int open = 0;
      for (size_t i = 0; i < item.size(); ++i) {
        if (item[i]->kind == Token::Kind::kSymbol && item[i]->text == "(") ++open;
        if (item[i]->kind == Token::Kind::kSymbol && item[i]->text == ")" && --open < 0) {
          item.resize(i);
          last = true;
        }
      }
      if (item.empty() || item.front()->kind != Token::Kind::kQuoted) continue;  // a key
      ColumnExpressions& column = out[item.front()->text];
      column.auto_increment = has_word(item, "AUTO_INCREMENT");
      for (size_t i = 1; i < item.size(); ++i) {
        // AS (…): the parenthesis and what it holds.
        if (word_at(item, i, {"AS"}) && i + 1 < item.size() && item[i + 1]->text == "(") {
          size_t end = i + 1;
          for (int depth = 0; end < item.size(); ++end) {
            if (item[end]->kind != Token::Kind::kSymbol) continue;
            if (item[end]->text == "(") ++depth;
            if (item[end]->text == ")" && --depth == 0) break;
          }
          if (end < item.size()) column.generated = text(item, i + 1, end + 1);
          i = end;
          continue;
        }
        // DEFAULT …, up to the attribute after it: SHOW CREATE TABLE writes
        // them in this order.
        if (!word_at(item, i, {"DEFAULT"})) continue;
        size_t end = i + 1;
        for (int depth = 0; end < item.size(); ++end) {
          const Token& t = *item[end];
          if (t.kind == Token::Kind::kSymbol && t.text == "(") ++depth;
          if (t.kind == Token::Kind::kSymbol && t.text == ")" && --depth < 0) break;
          if (depth == 0 && word_at(item, end,
                                    {"ON", "AUTO_INCREMENT", "INVISIBLE", "WITHOUT", "COMMENT",
                                     "CHECK", "REFERENCES"})) {
            break;
          }
        }
        if (end > i + 1) column.default_sql = text(item, i + 1, end);
        break;
      }
      if (column == ColumnExpressions{}) out.erase(item.front()->text);
    }
    return out;
  }

  std::vector<ForeignKey> foreign_keys() {
    std::vector<ForeignKey> out;
    if (!take("CREATE") || !take("TABLE")) return out;
    take_if_exists();
    name();
    if (!take_symbol('(')) return out;
    while (at_ < tokens_.size()) {
      // [CONSTRAINT [name]] FOREIGN KEY [name] (columns) REFERENCES parent
      // (columns) [ON DELETE action] [ON UPDATE action]
      if (take("CONSTRAINT") && !is("FOREIGN")) identifier();
      if (!take("FOREIGN") || !take("KEY")) {
        clause();
        continue;
      }
      if (!is_symbol('(')) identifier();
      ForeignKey key;
      key.columns = column_list();
      if (!take("REFERENCES")) break;
      std::optional<Name> parent = name();
      if (!parent) break;
      key.parent_database = std::move(parent->database);
      key.parent_table = std::move(parent->table);
      key.parent_columns = column_list();
      while (take("ON")) {
        ForeignKey::Action& action = take("DELETE") ? key.on_delete : key.on_update;
        if (is("UPDATE")) ++at_;
        if (take("CASCADE")) {
          action = ForeignKey::Action::kCascade;
        } else if (take("SET") && take("NULL")) {
          action = ForeignKey::Action::kSetNull;
        }
        // RESTRICT, NO ACTION, SET DEFAULT (which InnoDB refuses): none.
      }
      if (!key.columns.empty() && key.columns.size() == key.parent_columns.size())
        out.push_back(std::move(key));
      clause();
    }
    return out;
  }

  std::string temporary_copy(std::string_view definition, std::string_view table) {
    // CREATE TABLE name ( item, … ) options [PARTITION BY …]
    if (!take("CREATE") || !take("TABLE")) return std::string(definition);
    take_if_exists();
    name();
    if (!take_symbol('(')) return std::string(definition);
    return copy_after_parenthesis(definition, table);
  }

  std::optional<std::pair<std::string, std::string>> created_like() {
    if (!take("CREATE")) return std::nullopt;
    if (take("OR")) take("REPLACE");
    if (!take("TABLE")) return std::nullopt;
    take_if_exists();
    if (!name() || !take("LIKE")) return std::nullopt;
    std::optional<Name> other = name();
    if (!other) return std::nullopt;
    return std::pair{std::move(other->database), std::move(other->table)};
  }

  std::string created_copy(std::string_view statement, std::string_view table) {
    if (!take("CREATE")) return "";
    if (take("OR")) take("REPLACE");
    if (!take("TABLE")) return "";
    take_if_exists();
    if (!name()) return "";
    if (take("LIKE")) {
      const std::optional<Name> other = name();
      if (!other) return "";
      const auto quoted = [](const std::string& id) {
        std::string out = "`";
        for (char c : id) out += c == '`' ? std::string("``") : std::string(1, c);
        return out + "`";
      };
      return "CREATE TEMPORARY TABLE " + std::string(table) + " LIKE " + quoted(other->database) +
             "." + quoted(other->table);
    }
    if (!take_symbol('(')) return "";
    return copy_after_parenthesis(statement, table);
  }

 private:
  // temporary_copy() from its column list's '(' on: the columns and keys
  // but those a temporary table cannot have (foreign keys, FULLTEXT and
  // SPATIAL indexes), and of the table options only its default charset
  // and collation, which columns added later take: ENCRYPTED, DATA
  // DIRECTORY, ROW_FORMAT=COMPRESSED or another engine may not be a
  // temporary table's.
  std::string copy_after_parenthesis(std::string_view definition, std::string_view table) {
    std::string out = "CREATE TEMPORARY TABLE " + std::string(table) + " (";
    bool first = true;
    std::vector<const Token*> item;
    const auto add = [&] {
      if (!item.empty() && !has_word(item, "FOREIGN") &&
          !word_at(item, 0, {"FULLTEXT", "SPATIAL"})) {
        out += (first ? "" : ", ");
        out += definition.substr(item.front()->begin, item.back()->end - item.front()->begin);
        first = false;
      }
      item.clear();
    };
    for (int depth = 0; at_ < tokens_.size(); ++at_) {
      const Token& t = tokens_[at_];
      const bool symbol = t.kind == Token::Kind::kSymbol;
      if (symbol && t.text == "(") ++depth;
      if (symbol && t.text == ")" && depth-- == 0) break;
      if (symbol && t.text == "," && depth == 0) {
        add();
      } else {
        item.push_back(&t);
      }
    }
    add();
    out += ")";
    // Of the table options up to its partitions: [DEFAULT] CHARSET [=] c
    // (or CHARACTER SET), [DEFAULT] COLLATE [=] c.
    for (++at_; at_ < tokens_.size() && !is("PARTITION"); ++at_) {
      const char* option = nullptr;
      if (take("CHARSET") || (take("CHARACTER") && take("SET"))) {
        option = " DEFAULT CHARSET=";
      } else if (take("COLLATE")) {
        option = " COLLATE=";
      } else {
        continue;
      }
      if (peek() != nullptr && peek()->text == "=") ++at_;
      if (peek() != nullptr) out += option + peek()->text;
    }
    return out;
  }

  static bool word_at(const std::vector<const Token*>& c, size_t i,
                      std::initializer_list<const char*> words) {
    return i < c.size() && c[i]->kind == Token::Kind::kWord &&
           std::any_of(words.begin(), words.end(), [&](const char* w) { return c[i]->upper == w; });
  }
  // Whether clause `c` has `word`, bare or quoted (an index `PRIMARY`).
  static bool has_word(const std::vector<const Token*>& c, const char* word) {
    return std::any_of(c.begin(), c.end(), [&](const Token* t) {
      return (t->kind == Token::Kind::kWord || t->kind == Token::Kind::kQuoted) && t->upper == word;
    });
  }

  // What one clause of ALTER TABLE does to the table's rows.
  static Effect alter_effect(const std::vector<const Token*>& c) {
    if (c.empty()) return Effect::kRowsAlike;
    // Indexes and constraints other than the primary key.
    const auto index_like = [&](size_t i) {
      if (word_at(c, i, {"CONSTRAINT"})) {
        ++i;
        if (!word_at(c, i, {"PRIMARY", "UNIQUE", "FOREIGN", "CHECK"})) ++i;  // its name
      }
      return word_at(c, i, {"INDEX", "KEY", "UNIQUE", "FULLTEXT", "SPATIAL", "FOREIGN", "CHECK"}) &&
             !has_word(c, "PRIMARY");
    };
    if (word_at(c, 0, {"ADD"})) return index_like(1) ? Effect::kRowsAlike : Effect::kRowsChange;
    if (word_at(c, 0, {"DROP"})) {
      return index_like(1) || word_at(c, 1, {"CONSTRAINT"}) ? Effect::kRowsAlike
                                                            : Effect::kRowsChange;
    }
    if (word_at(c, 0, {"RENAME"})) {
      return word_at(c, 1, {"INDEX", "KEY"}) ? Effect::kRowsAlike : Effect::kRowsChange;
    }
    if (word_at(c, 0, {"ALTER"})) {
      // ALTER INDEX i [NOT] IGNORED; ALTER [COLUMN] c SET DEFAULT / DROP DEFAULT.
      if (word_at(c, 1, {"INDEX", "KEY"})) return Effect::kRowsAlike;
      return has_word(c, "DEFAULT") && !has_word(c, "TYPE") ? Effect::kRowsAlike
                                                            : Effect::kRowsChange;
    }
    // Table options, how the server runs the statement, and index upkeep
    // (DISABLE KEYS).
    if (word_at(c, 0,
                {"ENGINE",
                 "COMMENT",
                 "AUTO_INCREMENT",
                 "ROW_FORMAT",
                 "KEY_BLOCK_SIZE",
                 "STATS_PERSISTENT",
                 "STATS_AUTO_RECALC",
                 "STATS_SAMPLE_PAGES",
                 "PAGE_COMPRESSED",
                 "PAGE_COMPRESSION_LEVEL",
                 "CHECKSUM",
                 "DELAY_KEY_WRITE",
                 "PACK_KEYS",
                 "ENCRYPTED",
                 "ENCRYPTION_KEY_ID",
                 "TRANSACTIONAL",
                 "ALGORITHM",
                 "LOCK",
                 "FORCE",
                 "WAIT",
                 "NOWAIT",
                 "ORDER",
                 "MIN_ROWS",
                 "MAX_ROWS",
                 "AVG_ROW_LENGTH",
                 "DISABLE",
                 "ENABLE"})) {
      return Effect::kRowsAlike;
    }
    // The default charset or collation of columns added later.
    if (word_at(c, 0, {"DEFAULT", "CHARACTER", "CHARSET", "COLLATE"})) return Effect::kRowsAlike;
    return Effect::kRowsChange;  // MODIFY, CHANGE, CONVERT TO, partitions, …
  }

  // ADD [COLUMN] [IF NOT EXISTS] name type, nullable, at the end.
  static bool adds_nullable_column_at_end(const std::vector<const Token*>& c) {
    if (!word_at(c, 0, {"ADD"})) return false;
    size_t i = word_at(c, 1, {"COLUMN"}) ? 2 : 1;
    if (i < c.size() && c[i]->kind == Token::Kind::kSymbol) return false;  // ADD (a, b)
    for (; i < c.size(); ++i) {
      if (word_at(c, i,
                  {"FIRST", "AFTER", "PRIMARY", "UNIQUE", "KEY", "AUTO_INCREMENT", "GENERATED",
                   "AS", "INDEX", "CONSTRAINT", "FOREIGN", "CHECK", "FULLTEXT", "SPATIAL", "PERIOD",
                   "SYSTEM", "SERIAL"})) {
        return false;
      }
      if (word_at(c, i, {"NOT"}) && word_at(c, i + 1, {"NULL"})) return false;
    }
    return true;
  }

  std::vector<Token> tokens_;
  std::string_view database_;
  size_t at_ = 0;
};

}  // namespace

std::vector<DdlChange> ddl_changes(std::string_view statement, std::string_view database) {
  return Parser(tokenize(statement), database).changes();
}

std::vector<std::pair<std::string, std::string>> written_tables(std::string_view statement,
                                                                std::string_view database) {
  return Parser(tokenize(statement), database).written();
}

std::string alter_clauses(std::string_view statement, std::string_view table) {
  Parser parser(tokenize(statement), "");
  return parser.take_alter() ? parser.alter_clauses(statement, table) : std::string();
}

std::vector<std::pair<std::string, std::string>> column_renames(std::string_view statement) {
  Parser parser(tokenize(statement), "");
  if (!parser.take_alter()) return {};
  return parser.column_renames();
}

std::map<std::string, ColumnExpressions> column_expressions(std::string_view definition) {
  return Parser(tokenize(definition), "").column_expressions(definition);
}

std::vector<ForeignKey> foreign_keys(std::string_view definition, std::string_view database) {
  return Parser(tokenize(definition), database).foreign_keys();
}

std::string table_option(std::string_view definition, std::string_view option) {
  const std::vector<Token> tokens = tokenize(definition);
  // After the columns' parentheses: OPTION [=] value.
  int depth = 0;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const Token& t = tokens[i];
    if (t.kind == Token::Kind::kSymbol && t.text == "(") ++depth;
    if (t.kind == Token::Kind::kSymbol && t.text == ")") --depth;
    if (depth != 0 || t.kind != Token::Kind::kWord || t.upper != option) continue;
    size_t at = i + 1;
    if (at < tokens.size() && tokens[at].text == "=") ++at;
    if (at < tokens.size()) return tokens[at].text;
  }
  return "";
}

std::string temporary_copy(std::string_view definition, std::string_view table) {
  return Parser(tokenize(definition), "").temporary_copy(definition, table);
}

std::string created_copy(std::string_view statement, std::string_view database,
                         std::string_view table) {
  return Parser(tokenize(statement), database).created_copy(statement, table);
}

std::optional<std::pair<std::string, std::string>> created_like(std::string_view statement,
                                                                std::string_view database) {
  return Parser(tokenize(statement), database).created_like();
}

}  // namespace sluice
