# baton_library(<part> SOURCES <files...> [PUBLIC <targets...>] [PRIVATE <targets...>]): the library
# baton_<part> of the given sources, also named baton::<part> (as installed), linking PUBLIC and
# PRIVATE, with baton's warnings on.
function(baton_library part)
  cmake_parse_arguments(ARG "" "" "SOURCES;PUBLIC;PRIVATE" ${ARGN})
  add_library(baton_${part} ${ARG_SOURCES})
  add_library(baton::${part} ALIAS baton_${part})
  set_target_properties(baton_${part} PROPERTIES EXPORT_NAME ${part} OUTPUT_NAME baton_${part})
  target_link_libraries(baton_${part} PUBLIC ${ARG_PUBLIC} PRIVATE ${ARG_PRIVATE} $<BUILD_INTERFACE:baton_warnings>)
endfunction()
