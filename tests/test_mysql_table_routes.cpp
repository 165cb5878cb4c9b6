// Option `route`: which target each captured table goes into.
#include <catch2/catch.hpp>

#include "sluice/connectors/mysql/sink/table_routes.hpp"
#include "sluice/engine/common/error.hpp"
#include "sluice/engine/common/text.hpp"

using namespace sluice;

namespace {

// Where "db.table" goes, as "target" or "target (column)".
std::string routed(const std::vector<TableRoute>& routes, const std::string& database,
                   const std::string& table) {
  const RoutedTable r = route_table(routes, {database, table});
  return r.table_column.empty() ? r.target : r.target + " (" + r.table_column + ")";
}

}  // namespace

TEST_CASE("routes send each table to the first rule's target, <> its own name", "[routes]") {
  const std::vector<TableRoute> routes = parse_routes(
      " shop.orders_[0-9]+ -> orders_all (source_table) ;shop.orders_.* -> other;"
      "shop\\.east|west.customers -> clients; inv.* -> inv_<>_copy_<>;");
  REQUIRE(routes.size() == 4);
  CHECK(routes[0].pattern == "shop.orders_[0-9]+");
  CHECK(routed(routes, "shop", "orders_1") == "orders_all (source_table)");
  CHECK(routed(routes, "shop", "orders_22") == "orders_all (source_table)");
  CHECK(routed(routes, "shop", "orders_x") == "other");  // the first match wins
  CHECK(routed(routes, "shopXeast", "customers") == "clients");
  CHECK(routed(routes, "west", "customers") == "clients");
  CHECK(routed(routes, "inv", "items") == "inv_items_copy_items");
  CHECK(routed(routes, "shop", "customers") == "customers");  // no rule: its own name
  CHECK(routed(routes, "mysql", "user") == "user");           // never the server's own
  CHECK(parse_routes("").empty());
  CHECK(parse_routes(" ; ").empty());
}

TEST_CASE("a route that cannot be read is refused, naming it", "[routes]") {
  for (const char* bad : {"shop.orders", "shop.a -> ", " -> t", "shop.a -> t (", "shop.a -> t ()",
                          "shop.a -> other.t", "shop.a -> t u", "shop -> t", "shop.[ -> t"}) {
    INFO(bad);
    try {
      parse_routes(std::string("shop.x -> y; ") + bad);
      FAIL("accepted");
    } catch (const ConfigError& e) {
      CHECK_THAT(e.what(), Catch::Contains("option 'route'"));
      // The rule, or the pattern of it at fault.
      CHECK_THAT(e.what(), Catch::Contains(std::string(trim(bad))) || Catch::Contains("'shop.['") ||
                               Catch::Contains("'shop'"));
    }
  }
}

TEST_CASE("a merged table's target has the table column last in its columns and key", "[routes]") {
  TableInfo like;
  like.columns.push_back({.name = "id", .column_type = "bigint(20)", .nullable = false});
  like.columns.push_back({.name = "v", .column_type = "int(11)"});
  like.primary_key = {"id"};
  const TableInfo merged = with_table_column(like, "source_table");
  REQUIRE(merged.columns.size() == 3);
  CHECK(merged.columns[2].name == "source_table");
  CHECK_FALSE(merged.columns[2].nullable);
  CHECK(merged.columns[2].collation == "utf8mb4_bin");
  CHECK(merged.primary_key == std::vector<std::string>{"id", "source_table"});
  // Long enough for the longest db.table.
  CHECK(column_sql(merged.columns[2]).find("varchar(129)") != std::string::npos);
}
