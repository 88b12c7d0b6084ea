# Helpers for the optional dependencies (BatonMpi, BatonCpu): finding a package as its AUTO|ON|OFF
# option says, and the 0/1 form of a BATON_HAVE_* flag that build_config.h.in reads.

# Finds `package` (its CXX component) unless ${option} is OFF: REQUIRED when ON, QUIET when AUTO.
macro(baton_find_cxx_package option package)
  if(${option} STREQUAL "ON")
    find_package(${package} REQUIRED COMPONENTS CXX)
  elseif(NOT ${option} STREQUAL "OFF")
    find_package(${package} QUIET COMPONENTS CXX)
  endif()
endmacro()

# Sets BATON_HAVE_<name>_01 to 1 or 0 as BATON_HAVE_<name> is on or off.
macro(baton_have_01 name)
  if(BATON_HAVE_${name})
    set(BATON_HAVE_${name}_01 1)
  else()
    set(BATON_HAVE_${name}_01 0)
  endif()
endmacro()
