// Which tables a DDL statement from the binlog changes, and how.
#include <catch2/catch.hpp>

#include "sluice/connectors/mysql/cdc/ddl.hpp"
#include "sluice/connectors/mysql/sink/tables_sink.hpp"

using namespace sluice;
using Effect = DdlChange::Effect;

namespace {

// The changes as "db.table:effect" strings.
std::vector<std::string> described(const std::string& statement,
                                   const std::string& database = "shop") {
  std::vector<std::string> out;
  for (const DdlChange& c : ddl_changes(statement, database)) {
    const char* effect = c.effect == Effect::kRowsAlike             ? "alike"
                         : c.effect == Effect::kNullableColumnAtEnd ? "nullable-at-end"
                                                                    : "changes";
    const char* action = c.action == DdlChange::Action::kCreate     ? "/create"
                         : c.action == DdlChange::Action::kRename   ? "/rename"
                         : c.action == DdlChange::Action::kDrop     ? "/drop"
                         : c.action == DdlChange::Action::kTruncate ? "/truncate"
                                                                    : "";
    out.push_back(c.database + "." + (c.table.empty() ? "*" : c.table) + ":" + effect +
                  (c.creates ? "+new" : "") + (c.rows_unlogged ? "+unlogged" : "") + action);
  }
  return out;
}

using Strings = std::vector<std::string>;

}  // namespace

TEST_CASE("DDL names the tables it creates, not those it copies", "[ddl]") {
  CHECK(described("CREATE TABLE acme_customers LIKE inventory.customers") ==
        Strings{"shop.acme_customers:changes+new/create"});
  CHECK(described("create table if not exists `a b`.`c``d` (id int) select * from customers") ==
        Strings{"a b.c`d:changes+new/create"});
  CHECK(described("CREATE OR REPLACE TABLE customers (id INT)") ==
        Strings{"shop.customers:changes/drop", "shop.customers:changes+new/create"});
  CHECK(described("CREATE TEMPORARY TABLE customers (id INT)").empty());
  CHECK(described("CREATE VIEW v AS SELECT * FROM customers").empty());
  CHECK(described(
            "CREATE DEFINER=`u`@`%` TRIGGER t BEFORE INSERT ON customers FOR EACH ROW SET @x = 1")
            .empty());
}

TEST_CASE("DDL resolves names against its default database", "[ddl]") {
  CHECK(described("ALTER TABLE customers ADD INDEX by_email (email)", "copy") ==
        Strings{"copy.customers:alike"});
  CHECK(described("ALTER TABLE inventory.customers DROP COLUMN email", "copy") ==
        Strings{"inventory.customers:changes"});
  CHECK(described("ALTER TABLE customers DROP COLUMN email", "") == Strings{".customers:changes"});
}

TEST_CASE("DDL that leaves a table's rows alike is told from DDL that changes them", "[ddl]") {
  const auto effect = [](const std::string& clauses) {
    const std::vector<DdlChange> changes = ddl_changes("ALTER TABLE t " + clauses, "db");
    REQUIRE(changes.size() == 1);
    return changes[0].effect;
  };
  for (const char* alike :
       {"ADD INDEX i (a)", "ADD KEY (a), ADD UNIQUE KEY u (b)", "ADD CONSTRAINT c UNIQUE (b)",
        "DROP INDEX i", "DROP KEY `i`, RENAME INDEX a TO b",
        "ADD FOREIGN KEY (a) REFERENCES p (id)", "ALTER INDEX i IGNORED",
        "ALTER COLUMN a SET DEFAULT 5", "ENGINE=InnoDB",
        "COMMENT 'x, y', ALGORITHM=INPLACE, LOCK=NONE", "DEFAULT CHARSET=utf8mb4", "FORCE",
        "ADD FULLTEXT f (note)", "DROP FOREIGN KEY fk", "ADD CHECK (a > 0)"}) {
    INFO(alike);
    CHECK(effect(alike) == Effect::kRowsAlike);
  }
  for (const char* changes :
       {"DROP COLUMN a", "ADD COLUMN b INT NOT NULL DEFAULT 0", "ADD COLUMN b INT FIRST",
        "ADD COLUMN b INT AFTER a", "ADD PRIMARY KEY (a)", "DROP PRIMARY KEY",
        "DROP INDEX `PRIMARY`", "ADD CONSTRAINT pk PRIMARY KEY (a)", "MODIFY a BIGINT",
        "CHANGE a b INT", "CONVERT TO CHARACTER SET latin1", "RENAME COLUMN a TO b",
        "ADD COLUMN (b INT, c INT)", "ADD COLUMN b INT, ADD COLUMN c INT",
        "ADD INDEX i (a), DROP COLUMN b", "TRUNCATE PARTITION p0", "ADD COLUMN b SERIAL",
        "ADD COLUMN b INT AUTO_INCREMENT UNIQUE"}) {
    INFO(changes);
    CHECK(effect(changes) == Effect::kRowsChange);
  }
  for (const char* nullable :
       {"ADD COLUMN note VARCHAR(10)", "ADD note TEXT DEFAULT 'x, y'",
        "ADD COLUMN IF NOT EXISTS n INT NULL", "ADD n INT, ALGORITHM=INSTANT"}) {
    INFO(nullable);
    CHECK(effect(nullable) == Effect::kNullableColumnAtEnd);
  }
}

TEST_CASE("DDL renaming, dropping and truncating tables names every table it touches", "[ddl]") {
  CHECK(described("RENAME TABLE customers TO old_customers, new_customers TO customers") ==
        Strings{"shop.customers:changes/rename", "shop.old_customers:changes+new/rename",
                "shop.new_customers:changes/rename", "shop.customers:changes+new/rename"});
  CHECK(described("ALTER TABLE customers RENAME TO inventory.clients") ==
        Strings{"shop.customers:changes/rename", "inventory.clients:changes+new/rename"});
  CHECK(described("ALTER TABLE customers RENAME INDEX a TO b") == Strings{"shop.customers:alike"});
  CHECK(described("DROP TABLE IF EXISTS `customers`,orders /* generated by server */") ==
        Strings{"shop.customers:changes/drop", "shop.orders:changes/drop"});
  CHECK(described("DROP TEMPORARY TABLE IF EXISTS customers").empty());
  CHECK(described("TRUNCATE customers") == Strings{"shop.customers:changes+unlogged/truncate"});
  CHECK(described("truncate table inventory.customers") ==
        Strings{"inventory.customers:changes+unlogged/truncate"});
  CHECK(described("DROP DATABASE inventory") == Strings{"inventory.*:changes"});
  CHECK(described("CREATE UNIQUE INDEX u ON customers (email)") == Strings{"shop.customers:alike"});
  CHECK(described("DROP INDEX IF EXISTS u ON inventory.customers") ==
        Strings{"inventory.customers:alike"});
  CHECK(described("DROP INDEX `PRIMARY` ON customers") == Strings{"shop.customers:changes"});
}

TEST_CASE(
    "DDL that drops, truncates or swaps partitions, or drops repeated rows, changes rows unlogged",
    "[ddl]") {
  for (const char* unlogged :
       {"TRUNCATE PARTITION p0", "DROP PARTITION p1, p2", "DROP PARTITION IF EXISTS p1",
        "EXCHANGE PARTITION p1 WITH TABLE other", "CONVERT PARTITION p1 TO TABLE other",
        "CONVERT TABLE other TO PARTITION p3 VALUES LESS THAN (400)",
        "ADD INDEX i (a), TRUNCATE PARTITION ALL"}) {
    INFO(unlogged);
    CHECK(described(std::string("ALTER TABLE customers ") + unlogged) ==
          Strings{"shop.customers:changes+unlogged"});
  }
  CHECK(described("ALTER IGNORE TABLE customers ADD UNIQUE KEY u (email)") ==
        Strings{"shop.customers:alike+unlogged"});
  CHECK(described("ALTER ONLINE IGNORE TABLE customers ADD PRIMARY KEY (id)") ==
        Strings{"shop.customers:changes+unlogged"});
  CHECK(described("ALTER IGNORE TABLE customers ADD INDEX i (email)") ==
        Strings{"shop.customers:alike"});
  CHECK(described("ALTER TABLE customers ADD UNIQUE KEY u (email)") ==
        Strings{"shop.customers:alike"});
  // The rows stay, in other partitions or none.
  for (const char* kept :
       {"ADD PARTITION (PARTITION p9 VALUES LESS THAN (900))", "REMOVE PARTITIONING",
        "REORGANIZE PARTITION p0 INTO (PARTITION a VALUES LESS THAN (5), PARTITION b VALUES "
        "LESS THAN (10))",
        "COALESCE PARTITION 2", "PARTITION BY HASH (id) PARTITIONS 4", "REBUILD PARTITION p0",
        "CONVERT TO CHARACTER SET utf8mb4", "DROP COLUMN partition_key"}) {
    INFO(kept);
    const std::vector<DdlChange> changes = ddl_changes(std::string("ALTER TABLE t ") + kept, "db");
    REQUIRE(changes.size() == 1);
    CHECK_FALSE(changes[0].rows_unlogged);
  }
}

TEST_CASE("the tables a statement-logged INSERT, UPDATE, DELETE or LOAD may change", "[ddl]") {
  using Names = std::vector<std::pair<std::string, std::string>>;
  CHECK(written_tables("INSERT INTO orders VALUES (1)", "shop") == Names{{"shop", "orders"}});
  CHECK(written_tables("insert low_priority ignore `inv`.`items` (a) select * from orders",
                       "shop") == Names{{"inv", "items"}});
  CHECK(written_tables("REPLACE orders SET id = 1", "shop") == Names{{"shop", "orders"}});
  CHECK(written_tables("/* app */ UPDATE orders SET v = (SELECT 1 FROM items)", "shop") ==
        Names{{"shop", "orders"}});
  CHECK(written_tables("UPDATE orders o JOIN inv.items i ON o.id = i.id SET o.v = 1", "shop") ==
        Names{{"shop", "orders"},
              {"shop", "o"},
              {"shop", "JOIN"},
              {"inv", "items"},
              {"shop", "i"},
              {"shop", "ON"},
              {"o", "id"},
              {"i", "id"}});
  CHECK(written_tables("DELETE FROM orders WHERE id IN (SELECT id FROM items)", "shop") ==
        Names{{"shop", "FROM"}, {"shop", "orders"}});
  CHECK(written_tables("DELETE o FROM orders o USING items", "shop") == Names{{"shop", "o"},
                                                                              {"shop", "FROM"},
                                                                              {"shop", "orders"},
                                                                              {"shop", "o"},
                                                                              {"shop", "USING"},
                                                                              {"shop", "items"}});
  CHECK(written_tables("LOAD DATA LOCAL INFILE 'x.tsv' REPLACE INTO TABLE orders", "shop") ==
        Names{{"shop", "orders"}});
  CHECK(written_tables("WITH c AS (SELECT 1) UPDATE orders SET v = 1", "shop").size() > 1);
  for (const char* none : {"BEGIN", "COMMIT", "SAVEPOINT `s`", "ROLLBACK TO SAVEPOINT s",
                           "XA START 'x'", "ALTER TABLE orders ADD INDEX i (a)", "SELECT 1"}) {
    INFO(none);
    CHECK(written_tables(none, "shop").empty());
  }
}

TEST_CASE("DDL is read past comments and into executable comments", "[ddl]") {
  CHECK(described("/* a note */ ALTER /*!32312 IGNORE */ TABLE -- why\n customers # more\n ADD "
                  "INDEX i (a)") == Strings{"shop.customers:alike"});
  CHECK(described("/*!40000 ALTER TABLE `customers` DISABLE KEYS */") ==
        Strings{"shop.customers:alike"});
  CHECK(described("/*M!100100 TRUNCATE customers */") ==
        Strings{"shop.customers:changes+unlogged/truncate"});
  CHECK(described("ALTER TABLE \"customers\" DROP COLUMN a") == Strings{"shop.customers:changes"});
  CHECK(described("GRANT SELECT ON customers TO u").empty());
  CHECK(described("").empty());
}

TEST_CASE("the schema history replays an ALTER's column clauses on its copy, nothing else",
          "[ddl]") {
  CHECK(alter_clauses("ALTER TABLE shop.orders ADD COLUMN note TEXT AFTER id, ADD INDEX i (a), "
                      "DROP FOREIGN KEY fk, ALGORITHM=INPLACE",
                      "`copy`") == "ALTER TABLE `copy` ADD COLUMN note TEXT AFTER id");
  CHECK(alter_clauses("/* why */ alter table `orders` modify `v` decimal(12, 2) not null "
                      "default 1.50 comment 'a, b', drop column w, convert to character set "
                      "latin1",
                      "`c`") ==
        "ALTER TABLE `c` modify `v` decimal(12, 2) not null default 1.50 comment 'a, b', drop "
        "column w, convert to character set latin1");
  CHECK(alter_clauses("ALTER TABLE t DEFAULT CHARSET = latin1, ADD CONSTRAINT fk FOREIGN KEY (a) "
                      "REFERENCES p (id)",
                      "`c`") == "ALTER TABLE `c` DEFAULT CHARSET = latin1");
  CHECK(alter_clauses("ALTER TABLE t ADD INDEX (a), ENGINE=InnoDB", "`c`").empty());
  CHECK(alter_clauses("ALTER TABLE t ADD PRIMARY KEY (a), DROP PRIMARY KEY", "`c`") ==
        "ALTER TABLE `c` ADD PRIMARY KEY (a), DROP PRIMARY KEY");
}

TEST_CASE("the column renames of an ALTER: CHANGE and RENAME COLUMN", "[ddl]") {
  using Renames = std::vector<std::pair<std::string, std::string>>;
  CHECK(column_renames("ALTER TABLE t CHANGE COLUMN a b INT, CHANGE c c BIGINT, RENAME COLUMN "
                       "`d e` TO f, CHANGE IF EXISTS g h TEXT, ADD x INT") ==
        Renames{{"a", "b"}, {"d e", "f"}, {"g", "h"}});
  CHECK(column_renames("ALTER TABLE t RENAME TO u").empty());
  CHECK(column_renames("ALTER TABLE t RENAME INDEX a TO b").empty());
}

TEST_CASE("a table's definition as a temporary copy: no foreign keys, FULLTEXT indexes, partitions",
          "[ddl]") {
  CHECK(temporary_copy("CREATE TABLE `orders` (\n  `id` int(11) NOT NULL,\n  `c` int(11) "
                       "DEFAULT NULL,\n  `note` varchar(10) DEFAULT 'a,(b)',\n  PRIMARY KEY "
                       "(`id`),\n  KEY `c` (`c`),\n  FULLTEXT KEY `n` (`note`),\n  CONSTRAINT "
                       "`fk` FOREIGN KEY (`c`) REFERENCES `customers` (`id`)\n) ENGINE=InnoDB "
                       "DEFAULT CHARSET=latin1 COLLATE=latin1_swedish_ci\n PARTITION BY HASH "
                       "(`id`)\nPARTITIONS 4",
                       "`db`.`copy`") ==
        "CREATE TEMPORARY TABLE `db`.`copy` (`id` int(11) NOT NULL, `c` int(11) DEFAULT NULL, "
        "`note` varchar(10) DEFAULT 'a,(b)', PRIMARY KEY (`id`), KEY `c` (`c`)) "
        "DEFAULT CHARSET=latin1 COLLATE=latin1_swedish_ci");
  // The last item kept too; of the options, only the charset and collation,
  // however written.
  CHECK(temporary_copy("CREATE TABLE `t` (\n  `id` int(11) NOT NULL,\n  `g` point NOT NULL,\n  "
                       "PRIMARY KEY (`id`),\n  SPATIAL KEY `g` (`g`)\n) ENGINE=InnoDB "
                       "ROW_FORMAT=COMPRESSED `ENCRYPTED`=YES DATA DIRECTORY='/data' CHARACTER "
                       "SET = utf8mb4 COMMENT 'charset=x'",
                       "`c`") ==
        "CREATE TEMPORARY TABLE `c` (`id` int(11) NOT NULL, `g` point NOT NULL, PRIMARY KEY "
        "(`id`)) DEFAULT CHARSET=utf8mb4");
}

TEST_CASE("a table's column defaults and generation expressions, as SHOW CREATE TABLE writes them",
          "[ddl]") {
  using Expressions = std::map<std::string, ColumnExpressions>;
  CHECK(
      column_expressions(
          "CREATE TABLE `t` (\n  `id` int(11) NOT NULL,\n  `a` decimal(6,2) DEFAULT 1.50,\n  "
          "`b` varchar(5) DEFAULT 'x''y' COMMENT 'c',\n  `c` datetime DEFAULT current_timestamp() "
          "ON UPDATE current_timestamp(),\n  `d` int(11) DEFAULT (`id` + 1) INVISIBLE,\n  `e` "
          "double DEFAULT -1e-5,\n  `f` bit(3) DEFAULT b'101',\n  `g` int(11) DEFAULT NULL,\n  "
          "`h` char(3) GENERATED ALWAYS AS (cast(`id` + (1) as char(3) charset utf8mb4)) "
          "VIRTUAL,\n  `i` int(11) GENERATED ALWAYS AS (`id` * 2) STORED COMMENT 'AS (1)',\n  "
          "`j` int(11) NOT NULL,\n  `k` bigint(20) NOT NULL AUTO_INCREMENT,\n  PRIMARY KEY "
          "(`id`)\n) ENGINE=InnoDB") ==
      Expressions{{"a", {"1.50", ""}},
                  {"b", {"'x''y'", ""}},
                  {"c", {"current_timestamp()", ""}},
                  {"d", {"(`id` + 1)", ""}},
                  {"e", {"-1e-5", ""}},
                  {"f", {"b'101'", ""}},
                  {"g", {"NULL", ""}},
                  {"h", {"", "(cast(`id` + (1) as char(3) charset utf8mb4))"}},
                  {"i", {"", "(`id` * 2)"}},
                  {"k", {"", "", true}}});
  // A table without a key: its last column is the list's last item, and
  // the table's DEFAULT CHARSET after it is none of its.
  CHECK(column_expressions("CREATE TABLE `t` (\n  `a` int(11) DEFAULT 7,\n  `b` date NOT NULL\n) "
                           "ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci") ==
        Expressions{{"a", {"7", ""}}});
  CHECK(column_expressions("CREATE TABLE `t` (\n  `a` int(11) DEFAULT 7\n) ENGINE=InnoDB DEFAULT "
                           "CHARSET=latin1") == Expressions{{"a", {"7", ""}}});
}

TEST_CASE("the foreign keys of a CREATE TABLE, with what a parent's change does", "[ddl]") {
  using Action = ForeignKey::Action;
  const auto keys = foreign_keys(
      "CREATE TABLE `c` (\n  `id` int(11) NOT NULL,\n  `foreign` int(11) DEFAULT NULL,\n"
      "  `a` int(11) DEFAULT NULL,\n  `b` varchar(5) DEFAULT NULL,\n  PRIMARY KEY (`id`),\n"
      "  KEY `a` (`a`,`b`),\n"
      "  CONSTRAINT `c_ibfk_1` FOREIGN KEY (`foreign`) REFERENCES `p` (`id`) ON DELETE CASCADE "
      "ON UPDATE SET NULL,\n"
      "  CONSTRAINT `two, columns` FOREIGN KEY (`a`, `b`) REFERENCES `other`.`q` (`x`, `y`),\n"
      "  CONSTRAINT `c_ibfk_3` FOREIGN KEY (`a`) REFERENCES `c` (`id`) ON DELETE SET NULL ON "
      "UPDATE CASCADE\n) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci",
      "shop");
  REQUIRE(keys.size() == 3);
  CHECK(keys[0] == ForeignKey{.columns = {"foreign"},
                              .parent_database = "shop",
                              .parent_table = "p",
                              .parent_columns = {"id"},
                              .on_delete = Action::kCascade,
                              .on_update = Action::kSetNull});
  CHECK(keys[1] == ForeignKey{.columns = {"a", "b"},
                              .parent_database = "other",
                              .parent_table = "q",
                              .parent_columns = {"x", "y"}});
  CHECK(keys[2] == ForeignKey{.columns = {"a"},
                              .parent_database = "shop",
                              .parent_table = "c",
                              .parent_columns = {"id"},
                              .on_delete = Action::kSetNull,
                              .on_update = Action::kCascade});
  CHECK(foreign_keys("CREATE TABLE `t` (\n  `a` int(11) DEFAULT NULL\n) ENGINE=InnoDB", "shop")
            .empty());
}

TEST_CASE("a table option of a CREATE TABLE, not a column's", "[ddl]") {
  const std::string definition =
      "CREATE TABLE `t` (\n  `a` varchar(5) COLLATE latin1_bin DEFAULT NULL\n) ENGINE=InnoDB "
      "DEFAULT CHARSET=latin1 COLLATE=latin1_german1_ci";
  CHECK(table_option(definition, "COLLATE") == "latin1_german1_ci");
  CHECK(table_option(definition, "CHARSET") == "latin1");
  CHECK(table_option(definition, "COMMENT").empty());
}

TEST_CASE("a CREATE TABLE from the binlog as a temporary copy: columns, or LIKE another", "[ddl]") {
  CHECK(created_copy("CREATE TABLE `t` (`id` int NOT NULL, v TEXT, PRIMARY KEY (`id`), "
                     "FOREIGN KEY (v) REFERENCES p (id)) ENGINE=InnoDB PARTITION BY HASH (id)",
                     "shop", "`c`") ==
        "CREATE TEMPORARY TABLE `c` (`id` int NOT NULL, v TEXT, PRIMARY KEY (`id`))");
  CHECK(created_copy("create or replace table if not exists inv.t (id int)", "shop", "`c`") ==
        "CREATE TEMPORARY TABLE `c` (id int)");
  CHECK(created_copy("CREATE TABLE t2 LIKE `t``1`", "shop", "`c`") ==
        "CREATE TEMPORARY TABLE `c` LIKE `shop`.`t``1`");
  CHECK(created_copy("CREATE TABLE t2 LIKE inv.t1", "shop", "`c`") ==
        "CREATE TEMPORARY TABLE `c` LIKE `inv`.`t1`");
  using Name = std::pair<std::string, std::string>;
  CHECK(created_like("CREATE TABLE t2 LIKE `t``1`", "shop") == Name{"shop", "t`1"});
  CHECK(created_like("create table if not exists t2 like inv.t1", "shop") == Name{"inv", "t1"});
  CHECK_FALSE(created_like("CREATE TABLE t2 (id INT)", "shop"));
  // Never the statement itself: nothing else is run.
  CHECK(created_copy("CREATE TABLE t2 SELECT 1 AS a", "shop", "`c`").empty());
  CHECK(created_copy("CREATE VIEW v AS SELECT 1", "shop", "`c`").empty());
}

TEST_CASE("target_alterations changes a target's primary key as its source's changed", "[ddl]") {
  const auto column = [](const std::string& name, bool nullable) {
    return TableColumn{.name = name, .column_type = "int(11)", .nullable = nullable};
  };
  // A target of merged shards: its table column last in its key.
  TableInfo target;
  target.columns = {column("id", false), column("v", false),
                    TableColumn{.name = "src", .column_type = "varchar(129)", .nullable = false}};
  target.primary_key = {"id", "v", "src"};
  MySqlSchemaChange change;
  change.before = {column("id", false), column("v", false)};
  SECTION("a key of other columns keeps the table column last") {
    change.after = {column("id", false), column("v", false), column("w", false)};
    change.key = {"w", "ID"};
    CHECK(target_alterations(target, change, SchemaChangeBehavior::kEvolve) ==
          std::vector<std::string>{"ADD COLUMN `w` int(11) NOT NULL AFTER `v`",
                                   "DROP PRIMARY KEY, ADD PRIMARY KEY (`w`, `ID`, `src`)"});
  }
  SECTION("a key column dropped: lenient keeps it, nullable once it is out of the key") {
    change.after = {column("id", false)};
    change.key = {"id"};
    CHECK(target_alterations(target, change, SchemaChangeBehavior::kLenient) ==
          std::vector<std::string>{"DROP PRIMARY KEY, ADD PRIMARY KEY (`id`, `src`)",
                                   "MODIFY COLUMN `v` int(11) NULL"});
    // The server takes a dropped column out of the key.
    CHECK(target_alterations(target, change, SchemaChangeBehavior::kEvolve) ==
          std::vector<std::string>{"DROP COLUMN `v`"});
  }
  SECTION("a renamed key column keeps its place in the key; a replayed change is left out") {
    change.after = {column("id", false), column("v2", false)};
    change.renames = {{"v", "v2"}};
    change.key = {"id", "v2"};
    CHECK(target_alterations(target, change, SchemaChangeBehavior::kEvolve) ==
          std::vector<std::string>{"RENAME COLUMN `v` TO `v2`"});
    target.columns[1].name = "v2";
    target.primary_key = {"id", "v2", "src"};
    CHECK(target_alterations(target, change, SchemaChangeBehavior::kEvolve).empty());
  }
  SECTION("a key dropped: the target's goes, the table column's part of it too") {
    change.after = change.before;
    CHECK(target_alterations(target, change, SchemaChangeBehavior::kLenient) ==
          std::vector<std::string>{"DROP PRIMARY KEY"});
  }
}
