# Every external dependency, found in one place. scripts/deps.sh installs
# them (Debian packages, Kokkos built from Debian's trilinos sources into
# deps/install/<flavour>); on a node without a package manager the header-only
# libraries and GoogleTest may come from deps/vendor (scripts/deps.sh --vendor).

set(DISCOUNT_VENDOR_DIR "${PROJECT_SOURCE_DIR}/deps/vendor" CACHE PATH "Vendored headers and sources")

find_package(Kokkos 3.4 REQUIRED)
if(NOT CMAKE_CXX_STANDARD)
  if(Kokkos_CXX_STANDARD)  # set by Kokkos 4 and 5 (3.4 leaves it to its target's cxx_std_17)
    set(CMAKE_CXX_STANDARD ${Kokkos_CXX_STANDARD})
  else()
    set(CMAKE_CXX_STANDARD 17)
  endif()
endif()
# Kokkos Kernels serves compute.kernel: blas only, so it is optional: AUTO uses
# it when found, ON requires it, OFF builds without it (blas is then refused
# with exit 78 and its tests are skipped).
set(DISCOUNT_ENABLE_KOKKOS_KERNELS AUTO CACHE STRING "Kokkos Kernels for compute.kernel: blas: AUTO, ON or OFF")
set_property(CACHE DISCOUNT_ENABLE_KOKKOS_KERNELS PROPERTY STRINGS AUTO ON OFF)
set(DISCOUNT_HAVE_KOKKOSKERNELS OFF)
if(DISCOUNT_ENABLE_KOKKOS_KERNELS STREQUAL "ON")
  find_package(KokkosKernels REQUIRED)
  set(DISCOUNT_HAVE_KOKKOSKERNELS ON)
elseif(DISCOUNT_ENABLE_KOKKOS_KERNELS STREQUAL "AUTO")
  find_package(KokkosKernels QUIET)
  if(KokkosKernels_FOUND)
    set(DISCOUNT_HAVE_KOKKOSKERNELS ON)
  endif()
elseif(NOT DISCOUNT_ENABLE_KOKKOS_KERNELS STREQUAL "OFF")
  message(FATAL_ERROR "DISCOUNT_ENABLE_KOKKOS_KERNELS must be AUTO, ON or OFF, not '${DISCOUNT_ENABLE_KOKKOS_KERNELS}'")
endif()
message(STATUS "discount_app: Kokkos ${Kokkos_VERSION} (C++${CMAKE_CXX_STANDARD}); Kokkos Kernels: "
               "${DISCOUNT_HAVE_KOKKOSKERNELS} (DISCOUNT_ENABLE_KOKKOS_KERNELS=${DISCOUNT_ENABLE_KOKKOS_KERNELS})")
if(DISCOUNT_ENABLE_MPI)
  find_package(MPI REQUIRED COMPONENTS C)
  # Debian installs serial and MPI flavours of HDF5 side by side: prefer the
  # parallel one for an MPI build; a serial HDF5 also works (positional writes).
  set(HDF5_PREFER_PARALLEL TRUE)
endif()
find_package(HDF5 REQUIRED COMPONENTS C HL)
find_package(yaml-cpp REQUIRED)
find_package(Threads REQUIRED)

# yaml-cpp 0.7 exports `yaml-cpp`, 0.8 `yaml-cpp::yaml-cpp`.
if(TARGET yaml-cpp::yaml-cpp)
  set(DISCOUNT_YAML_TARGET yaml-cpp::yaml-cpp)
else()
  set(DISCOUNT_YAML_TARGET yaml-cpp)
endif()

# HDF5 as one imported target whatever FindHDF5's version provides.
if(NOT TARGET discount_hdf5)
  add_library(discount_hdf5 INTERFACE)
  if(TARGET HDF5::HDF5)
    target_link_libraries(discount_hdf5 INTERFACE HDF5::HDF5)
  else()
    target_include_directories(discount_hdf5 INTERFACE ${HDF5_INCLUDE_DIRS})
    target_link_libraries(discount_hdf5 INTERFACE ${HDF5_C_LIBRARIES} ${HDF5_LIBRARIES})
    target_compile_definitions(discount_hdf5 INTERFACE ${HDF5_DEFINITIONS})
  endif()
  # The high-level library's dimension scales (H5DS*) label the output's axes.
  target_link_libraries(discount_hdf5 INTERFACE ${HDF5_HL_LIBRARIES})
endif()

# Compression libraries for the app's own filter pipelines (lib/codec):
# libdeflate (else zlib) for deflate, and zstd, LZ4 and Blosc each when
# found: a codec whose library is missing keeps HDF5's own path on read and
# is refused (78) for output.compression. Installed headers and libraries
# first, then deps/vendor (scripts/deps.sh --vendor copies Debian's static
# ones there for a node without them). A static library comes with the
# static libraries it needs (libblosc.a: Snappy, LZ4, zstd, zlib). One that
# a shared object cannot hold (Debian's libblosc.a and libzstd.a are built
# for executables, -fPIE rather than -fPIC: a probe linked into a shared
# object tells) is left out of a build that has the Python module (lib/codec
# is one library for both), and kept in one without it.
add_library(discount_codecs INTERFACE)
find_package(ZLIB REQUIRED)

# Whether `libraries` (static ones first) link into a shared object once
# `symbols` pull their objects in; cached per list of libraries.
function(discount_codec_shareable out name libraries symbols)
  if(DEFINED DISCOUNT_${name}_SHAREABLE AND "${DISCOUNT_${name}_SHAREABLE_FOR}" STREQUAL "${libraries}")
    set(${out} ${DISCOUNT_${name}_SHAREABLE} PARENT_SCOPE)
    return()
  endif()
  set(dir "${CMAKE_BINARY_DIR}/CMakeFiles/discount_shareable_${name}")
  set(source "")
  set(refs "")
  foreach(symbol IN LISTS symbols)
    string(APPEND source "extern void ${symbol}(void);\n")
    string(APPEND refs "(void *)&${symbol}, ")
  endforeach()
  file(WRITE "${dir}/probe.c" "${source}void *discount_probe[] = {${refs}0};\n")
  try_compile(ok "${dir}/build" "${dir}/probe.c"
    COMPILE_DEFINITIONS ${CMAKE_C_COMPILE_OPTIONS_PIC}
    LINK_OPTIONS ${CMAKE_SHARED_LIBRARY_CREATE_C_FLAGS}
    LINK_LIBRARIES ${libraries})
  set(DISCOUNT_${name}_SHAREABLE ${ok} CACHE INTERNAL "")
  set(DISCOUNT_${name}_SHAREABLE_FOR "${libraries}" CACHE INTERNAL "")
  set(${out} ${ok} PARENT_SCOPE)
endfunction()

# discount_codec_library(NAME header library [DEPENDS library...] PROBE symbol...)
# DEPENDS: what a static `library` needs linked after it (found like it).
# PROBE: the functions lib/codec calls, for the shared-object check.
function(discount_codec_library name header library)
  cmake_parse_arguments(PARSE_ARGV 3 arg "" "" "DEPENDS;PROBE")
  find_path(DISCOUNT_${name}_INCLUDE ${header} PATHS "${DISCOUNT_VENDOR_DIR}/include")
  find_library(DISCOUNT_${name}_LIBRARY NAMES ${library} PATHS "${DISCOUNT_VENDOR_DIR}/lib")
  set(lib "${DISCOUNT_${name}_LIBRARY}")
  set(have 0)
  set(found OFF)
  if(DISCOUNT_${name}_INCLUDE AND lib AND NOT lib MATCHES "${CMAKE_STATIC_LIBRARY_SUFFIX}$")
    set(have 1)
    set(found ON)
    target_link_libraries(discount_codecs INTERFACE ${lib})
  elseif(DISCOUNT_${name}_INCLUDE AND lib)
    set(static ${lib})
    set(missing)
    foreach(dep IN LISTS arg_DEPENDS)
      string(TOUPPER ${dep} DEP)
      find_library(DISCOUNT_${DEP}_LIBRARY NAMES ${dep} PATHS "${DISCOUNT_VENDOR_DIR}/lib")
      if(DISCOUNT_${DEP}_LIBRARY)
        list(APPEND static ${DISCOUNT_${DEP}_LIBRARY})
      else()
        list(APPEND missing ${dep})
      endif()
    endforeach()
    if(missing)
      string(REPLACE ";" ", " missing "${missing}")
      message(STATUS "discount_app: ${lib} needs ${missing}, not found: ${name} left out")
    else()
      set(have 1)
      set(found ON)
      set(target discount_codec_${library})
      add_library(${target}_static INTERFACE)
      target_link_libraries(${target}_static INTERFACE ${static} ZLIB::ZLIB Threads::Threads)
      discount_codec_shareable(shareable ${name} "${static}" "${arg_PROBE}")
      if(shareable)
        target_link_libraries(discount_codecs INTERFACE ${target}_static)
      else()
        set(have "$<IF:$<TARGET_EXISTS:discount_python_core>,0,1>")
        target_link_libraries(discount_codecs INTERFACE "$<$<NOT:$<TARGET_EXISTS:discount_python_core>>:${target}_static>")
        set(found "ON, OFF with the Python module (${lib} cannot go into a shared object)")
        string(REPLACE ";" "" found "${found}")
      endif()
    endif()
  endif()
  if(have)
    target_include_directories(discount_codecs SYSTEM INTERFACE ${DISCOUNT_${name}_INCLUDE})
  endif()
  target_compile_definitions(discount_codecs INTERFACE DISCOUNT_HAVE_${name}=${have})
  set(DISCOUNT_HAVE_${name} "${found}" PARENT_SCOPE)
endfunction()
discount_codec_library(LIBDEFLATE libdeflate.h deflate PROBE libdeflate_alloc_compressor
  libdeflate_alloc_decompressor libdeflate_zlib_compress libdeflate_zlib_compress_bound
  libdeflate_zlib_decompress libdeflate_free_compressor libdeflate_free_decompressor)
discount_codec_library(ZSTD zstd.h zstd PROBE ZSTD_createCCtx ZSTD_compressCCtx ZSTD_compressBound
  ZSTD_freeCCtx ZSTD_createDCtx ZSTD_decompressDCtx ZSTD_freeDCtx ZSTD_getFrameContentSize
  ZSTD_getErrorName ZSTD_isError)
discount_codec_library(LZ4 lz4.h lz4 PROBE LZ4_compress_default LZ4_compressBound LZ4_decompress_safe)
discount_codec_library(BLOSC blosc.h blosc DEPENDS snappy lz4 zstd
  PROBE blosc_compress_ctx blosc_decompress_ctx blosc_cbuffer_validate)
target_link_libraries(discount_codecs INTERFACE ZLIB::ZLIB Threads::Threads)
message(STATUS "discount_app: codecs: libdeflate ${DISCOUNT_HAVE_LIBDEFLATE}, zstd ${DISCOUNT_HAVE_ZSTD}, "
               "LZ4 ${DISCOUNT_HAVE_LZ4}, Blosc ${DISCOUNT_HAVE_BLOSC}")

# discount_mpi: MPI and, when the HDF5 found is parallel, its MPI-IO driver.
add_library(discount_mpi INTERFACE)
if(DISCOUNT_ENABLE_MPI)
  target_link_libraries(discount_mpi INTERFACE MPI::MPI_C)
  # The C API only: no deprecated C++ bindings pulled in by mpi.h.
  target_compile_definitions(discount_mpi INTERFACE DISCOUNT_HAVE_MPI OMPI_SKIP_MPICXX MPICH_SKIP_MPICXX)
  if(HDF5_IS_PARALLEL)
    target_compile_definitions(discount_mpi INTERFACE DISCOUNT_HDF5_PARALLEL)
  endif()
  message(STATUS "discount_app: MPI build (MPI ${MPI_C_VERSION}); HDF5 parallel: ${HDF5_IS_PARALLEL}")
elseif(HDF5_IS_PARALLEL)
  # A parallel HDF5 drags mpi.h into hdf5.h: the serial build needs its include path.
  find_package(MPI REQUIRED COMPONENTS C)
  target_link_libraries(discount_mpi INTERFACE MPI::MPI_C)
  target_compile_definitions(discount_mpi INTERFACE OMPI_SKIP_MPICXX MPICH_SKIP_MPICXX)
endif()

# Header-only: a package config when installed, else the vendored copy.
function(discount_header_only package target header)
  find_package(${package} QUIET CONFIG)
  if(NOT TARGET ${target})
    find_path(_discount_include_${package} ${header} HINTS "${DISCOUNT_VENDOR_DIR}/include" REQUIRED)
    add_library(${target} INTERFACE IMPORTED GLOBAL)
    set_target_properties(${target} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${_discount_include_${package}}")
  endif()
endfunction()
discount_header_only(CLI11 CLI11::CLI11 CLI/CLI.hpp)
discount_header_only(nlohmann_json nlohmann_json::nlohmann_json nlohmann/json.hpp)

if(DISCOUNT_ENABLE_TESTS)
  find_package(GTest QUIET)
  if(NOT TARGET GTest::gtest_main AND EXISTS "${DISCOUNT_VENDOR_DIR}/googletest/CMakeLists.txt")
    set(INSTALL_GTEST OFF CACHE BOOL "" FORCE)
    add_subdirectory("${DISCOUNT_VENDOR_DIR}/googletest" "${CMAKE_BINARY_DIR}/googletest" EXCLUDE_FROM_ALL)
    add_library(GTest::gtest_main ALIAS gtest_main)
    add_library(GTest::gtest ALIAS gtest)
  endif()
  if(NOT TARGET GTest::gtest_main)
    message(FATAL_ERROR "GoogleTest not found: install libgtest-dev or run scripts/deps.sh --vendor")
  endif()
  include(GoogleTest)
  # The end-to-end tests compare against an independent h5py/NumPy reader:
  # take the first python3 that can import both (Debian's /usr/bin/python3 on
  # the development machine; a virtual environment's on other nodes).
  if(NOT DISCOUNT_PYTHON)
    find_program(_discount_path_python NAMES python3)
    foreach(candidate /usr/bin/python3 ${_discount_path_python})
      if(EXISTS "${candidate}")
        execute_process(COMMAND "${candidate}" -c "import h5py, numpy" RESULT_VARIABLE _rc OUTPUT_QUIET ERROR_QUIET)
        if(_rc EQUAL 0)
          set(DISCOUNT_PYTHON "${candidate}" CACHE FILEPATH "python3 with h5py and numpy for end-to-end tests")
          break()
        endif()
      endif()
    endforeach()
  endif()
  if(NOT DISCOUNT_PYTHON)
    message(FATAL_ERROR "no python3 with h5py and numpy found (install python3-h5py python3-numpy)")
  endif()
endif()
