# Fails if the CLI library includes a connector's header: what any job's
# program gets depends on the engine alone; the connectors describe
# themselves (SourceDef::flink_sql, SinkDef::flink_sql).
# Run as: cmake -DCLI_DIR=<repo>/cli -P check_cli.cmake
set(problems "")
file(GLOB files RELATIVE ${CLI_DIR} "${CLI_DIR}/*.hpp" "${CLI_DIR}/*.cpp")
foreach(name IN LISTS files)
  file(STRINGS ${CLI_DIR}/${name} includes REGEX "^#include \"sluice/connectors/")
  foreach(line IN LISTS includes)
    string(APPEND problems "\n  ${name}: ${line}")
  endforeach()
endforeach()
if(problems)
  message(FATAL_ERROR "the CLI includes connectors:${problems}")
endif()
