# packedfun_add_extension(): build, link and install a packedfun extension library in one call.
#
#   packedfun_add_extension(<name>
#     SOURCES <file>...                 # C, C++ or CUDA sources
#     [INSTALL_DIR <dir>]               # relative to the install prefix; default: the prefix
#     [LINK_LIBRARIES <target-or-lib>...]
#     [NO_DEBUG_INFO])                  # no -g1: tracebacks then name functions, without lines
#
# Creates the shared library target <name> (file lib<name>.so) linked to packedfun::packedfun,
# with hidden visibility (the exported __packedfun_* symbols stay visible), installs it into
# INSTALL_DIR and sets its install rpath so the installed library finds libpackedfun.so:
#   - inside a wheel built by scikit-build-core (SKBUILD set): relative to $ORIGIN, pointing at
#     <site-packages>/packedfun/lib, where the packedfun wheel puts the runtime; the rpath stays
#     right wherever the environment is later installed or moved;
#   - otherwise: the absolute directory of the libpackedfun.so that find_package(packedfun) found.
# In the build tree CMake's own build rpath finds the runtime. Set INSTALL_RPATH on the target
# after the call to override.
#
# Native frames in error tracebacks need the library's debug information (file and line) and its
# symbol table (names of hidden functions): the C and C++ sources are compiled with -g1 (line tables
# and function entries, what a traceback reads; a third of -g's size) whatever the build type, the
# linker compresses the debug sections where it can, and the installed file is never stripped, not
# even by `cmake --install --strip`, which scikit-build-core runs for Release wheels. NO_DEBUG_INFO
# leaves -g1 out; the symbol table is kept all the same.
include_guard(GLOBAL)

function(packedfun_add_extension name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "NO_DEBUG_INFO" "INSTALL_DIR" "SOURCES;LINK_LIBRARIES")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "packedfun_add_extension(${name}): unknown arguments ${arg_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT arg_SOURCES)
    message(FATAL_ERROR "packedfun_add_extension(${name}): SOURCES is required")
  endif()
  if(NOT DEFINED arg_INSTALL_DIR OR arg_INSTALL_DIR STREQUAL "")
    set(arg_INSTALL_DIR .)
  endif()

  add_library(${name} SHARED ${arg_SOURCES})
  target_link_libraries(${name} PRIVATE packedfun::packedfun ${arg_LINK_LIBRARIES})
  target_compile_features(${name} PRIVATE cxx_std_17)
  set_target_properties(${name} PROPERTIES
    C_VISIBILITY_PRESET hidden CXX_VISIBILITY_PRESET hidden CUDA_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  if(NOT arg_NO_DEBUG_INFO AND NOT MSVC)
    target_compile_options(${name} PRIVATE $<$<COMPILE_LANGUAGE:C,CXX>:-g1>)
    _packedfun_compress_debug_sections(${name})
  endif()

  if(DEFINED SKBUILD_PLATLIB_DIR)
    # Both paths lie inside the wheel being built: the relation survives installation.
    file(RELATIVE_PATH _rel "${CMAKE_INSTALL_PREFIX}/${arg_INSTALL_DIR}"
      "${SKBUILD_PLATLIB_DIR}/packedfun/lib")
    set(_rpath "$ORIGIN/${_rel}")
  elseif(DEFINED packedfun_LIBRARY_DIR)
    set(_rpath "${packedfun_LIBRARY_DIR}")  # set by find_package(packedfun)
  else()
    get_target_property(_runtime packedfun::packedfun LOCATION)
    get_filename_component(_rpath "${_runtime}" DIRECTORY)
  endif()
  set_target_properties(${name} PROPERTIES INSTALL_RPATH "${_rpath}")
  # cmake_install.cmake runs these in order: strip is off for this target alone.
  install(CODE "set(_packedfun_do_strip \"\${CMAKE_INSTALL_DO_STRIP}\")\nset(CMAKE_INSTALL_DO_STRIP OFF)")
  install(TARGETS ${name} LIBRARY DESTINATION ${arg_INSTALL_DIR} RUNTIME DESTINATION ${arg_INSTALL_DIR})
  install(CODE "set(CMAKE_INSTALL_DO_STRIP \"\${_packedfun_do_strip}\")")
endfunction()

# Compressed line tables are about half the size; pyelftools (the traceback's reader) reads them.
function(_packedfun_compress_debug_sections name)
  if(NOT DEFINED CACHE{PACKEDFUN_LINKER_COMPRESSES_DEBUG})
    get_property(_languages GLOBAL PROPERTY ENABLED_LANGUAGES)
    set(_lang C)
    if(CXX IN_LIST _languages)
      set(_lang CXX)
    endif()
    include(CheckLinkerFlag)
    check_linker_flag(${_lang} "-Wl,--compress-debug-sections=zlib" PACKEDFUN_LINKER_COMPRESSES_DEBUG)
  endif()
  if(PACKEDFUN_LINKER_COMPRESSES_DEBUG)
    target_link_options(${name} PRIVATE "-Wl,--compress-debug-sections=zlib")
  endif()
endfunction()
