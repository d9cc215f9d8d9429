# packedfun_add_extension(): build, link and install a packedfun extension library in one call.
#
#   packedfun_add_extension(<name>
#     SOURCES <file>...                 # C, C++ or CUDA sources
#     [INSTALL_DIR <dir>]               # relative to the install prefix; default: the prefix
#     [LINK_LIBRARIES <target-or-lib>...])
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
include_guard(GLOBAL)

function(packedfun_add_extension name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "INSTALL_DIR" "SOURCES;LINK_LIBRARIES")
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
  install(TARGETS ${name} LIBRARY DESTINATION ${arg_INSTALL_DIR} RUNTIME DESTINATION ${arg_INSTALL_DIR})
endfunction()
