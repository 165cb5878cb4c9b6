# Fails if a connector includes another's headers. A file may include the
# headers of its own folder and of the folders above it: mysql/cdc/ may use
# mysql/, never mysql/sink/ nor file/; file/ no MySQL piece.
# Run as: cmake -DCONNECTORS_DIR=<repo>/connectors -P check_connectors.cmake
set(problems "")
file(GLOB_RECURSE files RELATIVE ${CONNECTORS_DIR} "${CONNECTORS_DIR}/*.hpp" "${CONNECTORS_DIR}/*.cpp")
foreach(name IN LISTS files)
  get_filename_component(folder ${name} DIRECTORY)
  if(folder STREQUAL "")
    string(APPEND problems "\n  ${name}: not in a connector's folder")
    continue()
  endif()
  file(STRINGS ${CONNECTORS_DIR}/${name} includes REGEX "^#include \"sluice/connectors/")
  foreach(line IN LISTS includes)
    string(REGEX MATCH "sluice/connectors/(.+)/[^/]+\\.hpp" _ "${line}")
    set(included "${CMAKE_MATCH_1}")
    # Allowed: `included` is `folder` or one of its ancestors.
    string(FIND "${folder}/" "${included}/" at)
    if(NOT at EQUAL 0)
      string(APPEND problems "\n  ${name}: ${line}")
    endif()
  endforeach()
endforeach()
if(problems)
  message(FATAL_ERROR "a connector includes another's headers:${problems}")
endif()
