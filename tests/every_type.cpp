#include "sluice/tests/every_type.hpp"

namespace sluice::testing {

const char kEveryType[] =
    "id INT PRIMARY KEY, "
    "c_tinyint TINYINT, c_tinyint_u TINYINT UNSIGNED, c_bool BOOLEAN, c_smallint SMALLINT, "
    "c_smallint_u SMALLINT UNSIGNED, c_mediumint MEDIUMINT, c_mediumint_u MEDIUMINT UNSIGNED, "
    "c_int INT, c_int_u INT UNSIGNED, c_int_zerofill INT(8) ZEROFILL, c_bigint BIGINT, "
    "c_bigint_u BIGINT UNSIGNED, "
    "c_bit1 BIT(1), c_bit13 BIT(13), c_bit64 BIT(64), "
    "c_decimal DECIMAL(10,2), c_decimal38 DECIMAL(38,0), c_decimal65 DECIMAL(65,30), "
    "c_float FLOAT, c_double DOUBLE, "
    "c_date DATE, c_time TIME, c_time3 TIME(3), c_time6 TIME(6), c_datetime DATETIME, "
    "c_datetime2 DATETIME(2), c_datetime6 DATETIME(6), c_timestamp TIMESTAMP NULL, "
    "c_timestamp4 TIMESTAMP(4) NULL, c_year YEAR, "
    "c_char CHAR(10), c_varchar VARCHAR(200), c_tinytext TINYTEXT, c_text TEXT, "
    "c_mediumtext MEDIUMTEXT, c_longtext LONGTEXT, "
    "c_latin1 VARCHAR(20) CHARACTER SET latin1, c_latin1_char CHAR(5) CHARACTER SET latin1, "
    "c_utf8mb3 VARCHAR(20) CHARACTER SET utf8mb3, c_ucs2 VARCHAR(20) CHARACTER SET ucs2, "
    "c_utf16 VARCHAR(20) CHARACTER SET utf16, c_utf16le VARCHAR(20) CHARACTER SET utf16le, "
    "c_utf32 VARCHAR(20) CHARACTER SET utf32, c_cp1251 VARCHAR(20) CHARACTER SET cp1251, "
    "c_latin2 TEXT CHARACTER SET latin2, c_gbk VARCHAR(20) CHARACTER SET gbk, "
    "c_sjis VARCHAR(20) CHARACTER SET sjis, c_euckr VARCHAR(20) CHARACTER SET euckr, "
    "c_binary BINARY(16), c_varbinary VARBINARY(100), c_tinyblob TINYBLOB, c_blob BLOB, "
    "c_mediumblob MEDIUMBLOB, c_longblob LONGBLOB, "
    "c_enum ENUM('a', 'b', 'c d', 'it''s', 'back\\\\slash'), c_set SET('x', 'y', 'z', "
    "'new\\nline'), "
    "c_json JSON, "
    "c_geometry GEOMETRY, c_point POINT, c_linestring LINESTRING, c_polygon POLYGON, "
    "c_multipoint MULTIPOINT, c_geometrycollection GEOMETRYCOLLECTION, "
    "c_uuid UUID, c_inet6 INET6, c_inet4 INET4";

const std::vector<std::string> kEveryTypeRows = {
    "(1, -128, 0, -128, -32768, 0, -8388608, 0, -2147483648, 0, 0, -9223372036854775808, 0, "
    "b'0', b'0', b'0', -99999999.99, -99999999999999999999999999999999999999, "
    "-99999999999999999999999999999999999.999999999999999999999999999999, -3.40282e38, "
    "-1.7976931348623157e308, '1000-01-01', '-838:59:59', '-838:59:59.999', "
    "'-838:59:59.000001', '1000-01-01 00:00:00', '1000-01-01 00:00:00.01', "
    "'1000-01-01 00:00:00.000001', '1970-01-01 00:00:01', '1970-01-01 00:00:01.0001', 1901, "
    "'a', 'a', 'a', 'a', 'a', 'a', 'é€‚', 'é', 'é€', 'é€', 'é😀', 'é😀', 'é😀', 'Привет', "
    "'Żółć', '中文', 'ｱｲｳ日本', '한국어', x'01000000000000000000000000000000', x'00', x'00', "
    "x'00', x'00', x'00', 'a', 'x', '[]', ST_GeomFromText('POINT(1 2)', 4326), "
    "ST_GeomFromText('POINT(-180 -90)'), ST_GeomFromText('LINESTRING(0 0, 1 1, 2 0)'), "
    "ST_GeomFromText('POLYGON((0 0, 4 0, 4 4, 0 4, 0 0), (1 1, 2 1, 2 2, 1 1))'), "
    "ST_GeomFromText('MULTIPOINT(1 1, 2 2)'), "
    "ST_GeomFromText('GEOMETRYCOLLECTION(POINT(1 1), LINESTRING(0 0, 1 1))'), "
    "'00000000-0000-0000-0000-000000000000', '::', '0.0.0.0')",
    "(2, 127, 255, 127, 32767, 65535, 8388607, 16777215, 2147483647, 4294967295, 12345, "
    "9223372036854775807, 18446744073709551615, b'1', b'1111111111111', "
    "b'1111111111111111111111111111111111111111111111111111111111111111', 99999999.99, "
    "99999999999999999999999999999999999999, "
    "99999999999999999999999999999999999.999999999999999999999999999999, 3.40282e38, "
    "1.7976931348623157e308, '9999-12-31', '838:59:59', '838:59:59.999', '838:59:59.000000', "
    "'9999-12-31 23:59:59', '9999-12-31 23:59:59.99', '9999-12-31 23:59:59.999999', "
    "'2038-01-19 03:14:07', '2038-01-19 03:14:07.9999', 2155, 'ab  ', "
    "CONCAT('quote '' back \\\\ nul ', CHAR(0), ' tab \t end 😀'), REPEAT('é', 100), "
    "REPEAT('x', 1000), REPEAT('€', 10000), REPEAT('y', 100000), 'ÿþ', 'abc  ', "
    "'ÀÿĀ', 'Āÿ', 'ÿ', 'ÿ', '😀', 'Ёё', 'ĄŁŻ', '汉字', 'カタカナ', '가나', "
    "x'0102030405060708090a0b0c0d0e0f00', x'ff00ff00', REPEAT(x'ff', 255), REPEAT(x'00ff', 1000), "
    "REPEAT(x'ab', 100000), REPEAT(x'cd', 200000), 'it''s', 'x,y,z,new\\nline', "
    "'{\"a\": [1, 2.5, \"x\"], \"b\": null, \"c\": {\"d\": true}}', "
    "ST_GeomFromText('MULTIPOLYGON(((0 0, 1 0, 1 1, 0 0)))'), ST_GeomFromText('POINT(180 90)'), "
    "ST_GeomFromText('LINESTRING(-1.5 2.25, 3 4)'), "
    "ST_GeomFromText('POLYGON((0 0, 1 0, 1 1, 0 0))', 3857), "
    "ST_GeomFromText('MULTIPOINT(0 0)'), ST_GeomFromText('GEOMETRYCOLLECTION EMPTY'), "
    "'123e4567-e89b-12d3-a456-426614174000', '::ffff:1.2.3.4', '255.255.255.255')",
    "(3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, "
    "NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, "
    "NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, "
    "NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, "
    "NULL, NULL, NULL, NULL, NULL, NULL, NULL)",
    "(4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, b'0', b'0', b'0', 0, 0, 0, 0, 0, '0000-00-00', "
    "'00:00:00', '00:00:00', '00:00:00', '0000-00-00 00:00:00', '0000-00-00 00:00:00', "
    "'0000-00-00 00:00:00', '0000-00-00 00:00:00', '0000-00-00 00:00:00', 0, '', '', '', '', "
    "'', '', '', '', '', '', '', '', '', '', '', '', '', '', x'00000000000000000000000000000000', "
    "'', '', '', '', '', 'back\\\\slash', '', '{}', ST_GeomFromText('POINT(0 0)'), "
    "ST_GeomFromText('POINT(0 0)'), "
    "ST_GeomFromText('LINESTRING(0 0, 0 1)'), ST_GeomFromText('POLYGON((0 0, 1 0, 0 1, 0 0))'), "
    "ST_GeomFromText('MULTIPOINT(0 0)'), ST_GeomFromText('GEOMETRYCOLLECTION(POINT(0 0))'), "
    "'ffffffff-ffff-ffff-ffff-ffffffffffff', '2001:db8::1', '10.0.0.1')",
};

const std::vector<std::string> kEveryTypeUpdates = {
    "UPDATE {} SET c_tinyint = -1, c_tinyint_u = 200, c_bool = 5, c_smallint = -300, "
    "c_smallint_u = 60000, c_mediumint = -70000, c_mediumint_u = 70000, c_int = -5, "
    "c_int_u = 3000000000, c_int_zerofill = 7, c_bigint = -1, "
    "c_bigint_u = 9223372036854775808 WHERE id = 1",
    "UPDATE {} SET c_bit1 = b'1', c_bit13 = b'1010101010101', "
    "c_bit64 = b'1000000000000000000000000000000000000000000000000000000000000001' WHERE id = 1",
    "UPDATE {} SET c_decimal = -0.01, c_decimal38 = 12345678901234567890123456789012345678, "
    "c_decimal65 = -0.000000000000000000000000000001, c_float = 0.1, c_double = -0.1 "
    "WHERE id = 1",
    "UPDATE {} SET c_date = '2026-12-01', c_time = '-00:00:01', c_time3 = '-00:00:00.001', "
    "c_time6 = '123:45:56.789012', c_datetime = '2026-12-01 19:43:22', "
    "c_datetime2 = '2026-12-01 19:43:22.5', c_datetime6 = '2026-12-01 19:43:22.123456', "
    "c_timestamp = '2026-12-01 19:43:22', c_timestamp4 = '2026-12-01 19:43:22.1234', "
    "c_year = 2026 WHERE id = 1",
    "UPDATE {} SET c_char = 'Ωmega', c_varchar = 'changed ✓', c_tinytext = 'tiny', "
    "c_text = 'text', c_mediumtext = 'medium', c_longtext = 'long', c_latin1 = 'Ü½', "
    "c_latin1_char = 'ñ', c_utf8mb3 = 'ĉ', c_ucs2 = 'Ω', c_utf16 = '𝄞', c_utf16le = '𝄞', "
    "c_utf32 = '𝄞', c_cp1251 = 'Щ', c_latin2 = 'ő', c_gbk = '你好', c_sjis = '日本語', "
    "c_euckr = '안녕' WHERE id = 1",
    "UPDATE {} SET c_binary = x'ffffffffffffffffffffffffffff0000', c_varbinary = x'0000', "
    "c_tinyblob = x'ff', c_blob = 'blob', c_mediumblob = x'00', c_longblob = x'0001' "
    "WHERE id = 1",
    "UPDATE {} SET c_enum = 'c d', c_set = 'y', c_json = '\"just a string\"', "
    "c_geometry = ST_GeomFromText('LINESTRING(1 1, 2 2)'), c_point = ST_GeomFromText('POINT(5 "
    "5)'), "
    "c_uuid = '00000000-0000-0000-0000-000000000001', c_inet6 = 'fe80::1:0:0:0', "
    "c_inet4 = '1.2.3.4' WHERE id = 1",
    "UPDATE {} SET c_date = NULL, c_varchar = NULL, c_blob = NULL, c_json = NULL WHERE id = 2",
    "UPDATE {} SET c_date = '2000-02-29', c_datetime6 = '2000-02-29 00:00:00.000001', "
    "c_text = 'was zero' WHERE id = 4",
    "UPDATE {} SET id = 40 WHERE id = 4",
    "INSERT INTO {} SELECT 5, c_tinyint, c_tinyint_u, c_bool, c_smallint, c_smallint_u, "
    "c_mediumint, c_mediumint_u, c_int, c_int_u, c_int_zerofill, c_bigint, c_bigint_u, c_bit1, "
    "c_bit13, c_bit64, c_decimal, c_decimal38, c_decimal65, c_float, c_double, c_date, c_time, "
    "c_time3, c_time6, c_datetime, c_datetime2, c_datetime6, c_timestamp, c_timestamp4, c_year, "
    "c_char, c_varchar, c_tinytext, c_text, c_mediumtext, c_longtext, c_latin1, c_latin1_char, "
    "c_utf8mb3, c_ucs2, c_utf16, c_utf16le, c_utf32, c_cp1251, c_latin2, c_gbk, c_sjis, c_euckr, "
    "c_binary, c_varbinary, c_tinyblob, c_blob, c_mediumblob, c_longblob, c_enum, c_set, c_json, "
    "c_geometry, c_point, c_linestring, c_polygon, c_multipoint, c_geometrycollection, c_uuid, "
    "c_inet6, c_inet4 FROM {} WHERE id = 2",
    "DELETE FROM {} WHERE id = 3",
};

std::string with_table(std::string statement, const std::string& table) {
  for (size_t at = statement.find("{}"); at != std::string::npos; at = statement.find("{}")) {
    statement.replace(at, 2, table);
  }
  return statement;
}

const std::vector<KeyCase> kKeyCases = {
    {"k DECIMAL(20,0)", "k", "1000000000000000000 + seq * 3"},  // beyond a double's 2^53
    {"k DECIMAL(10,3)", "k", "(CAST(seq AS SIGNED) - 150) * 1.001"},
    {"k BIGINT UNSIGNED", "k", "18446744073709551615 - seq * 7"},
    {"k TINYINT", "k", "CAST(seq AS SIGNED) - 128", 255},
    {"k DOUBLE", "k", "1 + seq * POW(2, -52)"},  // neighbouring doubles
    {"k FLOAT", "k", "(CAST(seq AS SIGNED) - 150) / 7"},
    {"k DATETIME(6)", "k", "TIMESTAMP'2026-01-01 00:00:00' + INTERVAL seq MICROSECOND"},
    {"k TIMESTAMP(3)", "k", "TIMESTAMP'2026-01-01 00:00:00' + INTERVAL seq * 1000 MICROSECOND"},
    {"k DATE", "k", "DATE'1999-12-01' + INTERVAL seq DAY"},
    {"k TIME(6)", "k",
     "SEC_TO_TIME(CAST(seq AS SIGNED) * 1000 - 150000) + INTERVAL seq MICROSECOND"},
    {"k YEAR", "k", "1900 + seq", 255},
    {"k BINARY(16)", "k", "CONCAT(CHAR(seq % 256), CHAR(seq DIV 256), REPEAT(x'00', 14))"},
    {"k VARBINARY(20)", "k", "IF(seq % 2, CHAR(seq DIV 2), CONCAT(CHAR(seq DIV 2), x'00'))"},
    {"k VARCHAR(20) COLLATE utf8mb4_unicode_ci", "k",
     "CONCAT(ELT(seq % 5 + 1, 'a', 'B', 'á', 'C', 'ß'), seq)"},
    {"k VARCHAR(20) COLLATE utf8mb4_bin", "k", "CONCAT(ELT(seq % 3 + 1, 'b', 'A', 'é'), seq)"},
    {"k CHAR(10) CHARACTER SET latin1", "k", "CONCAT(CHAR(192 + seq % 30 USING latin1), seq)"},
    {"k ENUM('z', 'a', 'm'), n INT", "k, n", "ELT(seq % 3 + 1, 'z', 'a', 'm'), seq"},
    {"k BIT(16)", "k", "seq * 211"},
    {"k UUID", "k", "UUID()"},  // time-based: the server orders them by their time
    {"k INET6", "k", "INET6_NTOA(UNHEX(LPAD(HEX(seq * 65537), 32, '0')))"},
    {"a INT, b BIGINT", "a, b", "seq % 7, seq"},
    {"a VARCHAR(10) COLLATE utf8mb4_unicode_ci, b DATETIME(3)", "a, b",
     "ELT(seq % 3 + 1, 'x', 'Y', 'z'), "
     "TIMESTAMP'2026-01-01 00:00:00' + INTERVAL seq * 1000 MICROSECOND"},
    {"a DECIMAL(10,2), b BINARY(4)", "a, b", "-(seq % 5) * 1.5, CHAR(seq DIV 256, seq % 256)"},
};

}  // namespace sluice::testing
