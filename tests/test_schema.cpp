#include <catch2/catch.hpp>

#include "sluice/engine/common/error.hpp"
#include "sluice/engine/common/text.hpp"
#include "sluice/engine/data/schema.hpp"

using namespace sluice;

namespace {

Schema orders() {
  return Schema({{"id", DataType::bigint()},
                 {"amount", DataType::decimal(10, 2)},
                 {"status", DataType::string()}},
                {"id"});
}

}  // namespace

TEST_CASE("a schema finds its columns and its primary key", "[schema]") {
  const Schema schema = orders();
  CHECK(schema.size() == 3);
  CHECK(schema.index_of("amount") == 1);
  CHECK_FALSE(schema.index_of("missing"));
  CHECK(schema.primary_key() == std::vector<size_t>{0});
  CHECK(schema.to_string() == "id BIGINT, amount DECIMAL(10,2), status STRING, PRIMARY KEY (id)");
  CHECK_THROWS_WITH(schema.require("amout"),
                    Catch::Contains("no column 'amout'") && Catch::Contains("id, amount, status"));
}

TEST_CASE("a schema rejects a key column it does not have and a repeated name", "[schema]") {
  CHECK_THROWS_WITH(Schema({{"id", DataType::bigint()}}, {"order_id"}),
                    Catch::Contains("primary key column 'order_id'"));
  CHECK_THROWS_AS(Schema({{"id", DataType::bigint()}, {"id", DataType::string()}}), ConfigError);
}

TEST_CASE("a schema checks a row's arity and field types", "[schema]") {
  const Schema schema = orders();
  CHECK_NOTHROW(schema.check(Row(RowKind::kInsert, {1, Decimal(1050, 2), "new"})));
  CHECK_NOTHROW(schema.check(Row(RowKind::kDelete, {1, Value(), Value()})));
  CHECK_THROWS_WITH(schema.check(Row(RowKind::kInsert, {1, "10.50", "new"})),
                    Catch::Contains("column 'amount' expects DECIMAL(10,2)"));
  CHECK_THROWS_WITH(schema.check(Row(RowKind::kInsert, {1, Decimal(123456789, 0), "new"})),
                    Catch::Contains("column 'amount'"));
  CHECK_THROWS_WITH(schema.check(Row(RowKind::kInsert, {1})), Catch::Contains("has 1 field;"));
}

TEST_CASE("decimal types are checked when declared", "[schema]") {
  CHECK(DataType::decimal(65, 30).to_string() == "DECIMAL(65,30)");  // as MySQL's widest
  CHECK_THROWS_AS(DataType::decimal(66, 0), ConfigError);
  CHECK_THROWS_AS(DataType::decimal(5, 6), ConfigError);
}

TEST_CASE("a schema reads back what it prints, with type synonyms", "[schema]") {
  const Schema schema = Schema::parse(
      "id BIGINT, amount DECIMAL(10, 2), status varchar, at DATETIME, ok bool, score FLOAT, "
      "PRIMARY KEY (id)");
  CHECK(schema.to_string() ==
        "id BIGINT, amount DECIMAL(10,2), status STRING, at TIMESTAMP, ok BOOLEAN, score DOUBLE, "
        "PRIMARY KEY (id)");
  CHECK(Schema::parse(schema.to_string()).to_string() == schema.to_string());
  CHECK_THROWS_WITH(Schema::parse("id BIGINT, price MONEY"),
                    Catch::Contains("column 'price': unknown type 'MONEY'"));
  CHECK_THROWS_WITH(Schema::parse("id"), Catch::Contains("'name TYPE'"));
  CHECK_THROWS_WITH(Schema::parse("id BIGINT, PRIMARY KEY (key)"),
                    Catch::Contains("primary key column 'key'"));
}

TEST_CASE("counts in messages take the singular for one", "[schema]") {
  CHECK(count_of(1, "column") == "1 column");
  CHECK(count_of(0, "column") == "0 columns");
  CHECK(count_of(2, "retry", "retries") == "2 retries");
  CHECK(count_of(1, "retry", "retries") == "1 retry");
  const Schema one({{"id", DataType::bigint()}}, {"id"});
  CHECK_THROWS_WITH(one.check(Row(RowKind::kInsert, {int64_t{1}, int64_t{2}})),
                    Catch::Contains("has 2 fields; the schema has 1 column"));
}
