# BATON_CUDA=EMU: baton's CUDA code built for the emulated GPU of tests/emu (no nvcc, no toolkit).
# baton_emu_rewrite_cuda_sources(<target> [<extra .cu>...]) replaces each .cu source of <target>
# (and the extra ones given) with C++ rewritten by baton_emu_rewrite into the build folder, and the
# .cuh files beside them with rewritten copies found first on the include path.
# The emulator (tests/emu, added by tests/CMakeLists.txt) exists to run baton's gpu tests.
if(NOT BATON_BUILD_TESTS)
  message(FATAL_ERROR "BATON_CUDA=EMU builds the emulated GPU to run the tests: it needs BATON_BUILD_TESTS=ON")
endif()
set(BATON_EMU_GENERATED_DIR "${PROJECT_BINARY_DIR}/emu-generated")

# The output's folder is made by the command itself: Ninja creates it, Unix Makefiles does not.
function(baton_emu_rewrite_one input output)
  get_filename_component(output_dir "${output}" DIRECTORY)
  add_custom_command(OUTPUT "${output}"
    COMMAND "${CMAKE_COMMAND}" -E make_directory "${output_dir}"
    COMMAND baton_emu_rewrite "${input}" "${output}"
    DEPENDS "${input}" baton_emu_rewrite
    COMMENT "Rewriting CUDA launches of ${input}" VERBATIM)
endfunction()

function(baton_emu_rewrite_cuda_sources target)
  get_target_property(target_dir ${target} SOURCE_DIR)
  get_target_property(sources ${target} SOURCES)
  list(APPEND sources ${ARGN})
  set(kept "")
  set(generated "")
  set(folders "")
  foreach(source IN LISTS sources)
    if(NOT source MATCHES "\\.cu$")
      list(APPEND kept "${source}")
      continue()
    endif()
    get_filename_component(absolute "${source}" ABSOLUTE BASE_DIR "${target_dir}")
    file(RELATIVE_PATH relative "${PROJECT_SOURCE_DIR}" "${absolute}")
    set(output "${BATON_EMU_GENERATED_DIR}/${relative}.cc")
    baton_emu_rewrite_one("${absolute}" "${output}")
    list(APPEND generated "${output}")
    get_filename_component(folder "${absolute}" DIRECTORY)
    list(APPEND folders "${folder}")
  endforeach()
  list(REMOVE_DUPLICATES folders)
  foreach(folder IN LISTS folders)
    file(GLOB headers CONFIGURE_DEPENDS "${folder}/*.cuh")
    foreach(header IN LISTS headers)
      file(RELATIVE_PATH relative "${PROJECT_SOURCE_DIR}" "${header}")
      set(output "${BATON_EMU_GENERATED_DIR}/${relative}")
      baton_emu_rewrite_one("${header}" "${output}")
      list(APPEND generated "${output}")
    endforeach()
  endforeach()
  set_property(TARGET ${target} PROPERTY SOURCES ${kept} ${generated})
  # The rewritten sources get the warnings nvcc's host compiler gets in a CUDA build (-Wall -Wextra,
  # cmake/BatonWarnings.cmake), not the stricter C++ set.
  set_source_files_properties(${generated} TARGET_DIRECTORY ${target} PROPERTIES
    COMPILE_OPTIONS "-Wno-pedantic;-Wno-shadow;-Wno-cast-align")
  target_include_directories(${target} BEFORE PRIVATE "${BATON_EMU_GENERATED_DIR}")
endfunction()
