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
# ones there for a node without them).
add_library(discount_codecs INTERFACE)
find_package(ZLIB REQUIRED)
function(discount_codec_library name header library)
  find_path(DISCOUNT_${name}_INCLUDE ${header} HINTS "${DISCOUNT_VENDOR_DIR}/include")
  find_library(DISCOUNT_${name}_LIBRARY NAMES ${library} HINTS "${DISCOUNT_VENDOR_DIR}/lib")
  if(DISCOUNT_${name}_INCLUDE AND DISCOUNT_${name}_LIBRARY)
    target_include_directories(discount_codecs SYSTEM INTERFACE ${DISCOUNT_${name}_INCLUDE})
    target_link_libraries(discount_codecs INTERFACE ${DISCOUNT_${name}_LIBRARY} ${ARGN})
    target_compile_definitions(discount_codecs INTERFACE DISCOUNT_HAVE_${name}=1)
    set(_found ON)
  else()
    target_compile_definitions(discount_codecs INTERFACE DISCOUNT_HAVE_${name}=0)
    set(_found OFF)
  endif()
  set(DISCOUNT_HAVE_${name} ${_found} PARENT_SCOPE)
endfunction()
discount_codec_library(LIBDEFLATE libdeflate.h deflate)
discount_codec_library(ZSTD zstd.h zstd)
discount_codec_library(LZ4 lz4.h lz4)
discount_codec_library(BLOSC blosc.h blosc)
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
