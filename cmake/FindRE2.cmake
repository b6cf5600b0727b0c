# RE2 (Debian's libre2-dev), the linear-time regular-expression engine that matches RabbitMQ policy
# patterns. Debian 12 ships RE2 with a pkg-config file but no CMake package, so this module finds
# the header and the library itself and provides the imported target RE2::RE2.
find_path(RE2_INCLUDE_DIR re2/re2.h)
find_library(RE2_LIBRARY re2)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(RE2 REQUIRED_VARS RE2_LIBRARY RE2_INCLUDE_DIR)
if(RE2_FOUND AND NOT TARGET RE2::RE2)
  add_library(RE2::RE2 UNKNOWN IMPORTED)
  set_target_properties(RE2::RE2 PROPERTIES IMPORTED_LOCATION "${RE2_LIBRARY}" INTERFACE_INCLUDE_DIRECTORIES "${RE2_INCLUDE_DIR}")
  # As re2.pc says: -pthread to compile and link against it.
  find_package(Threads REQUIRED)
  set_property(TARGET RE2::RE2 APPEND PROPERTY INTERFACE_LINK_LIBRARIES Threads::Threads)
endif()
mark_as_advanced(RE2_INCLUDE_DIR RE2_LIBRARY)
