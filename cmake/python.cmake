# DISCOUNT_ENABLE_PYTHON=AUTO|ON|OFF, like DISCOUNT_ENABLE_KOKKOS_KERNELS:
# AUTO builds the `discount_app` Python module when Python 3 (interpreter and
# headers) and pybind11 are found, ON requires them, OFF skips the module.
set(DISCOUNT_ENABLE_PYTHON AUTO CACHE STRING "The discount_app Python module: AUTO, ON or OFF")
set_property(CACHE DISCOUNT_ENABLE_PYTHON PROPERTY STRINGS AUTO ON OFF)
set(DISCOUNT_HAVE_PYTHON OFF)
if(NOT DISCOUNT_ENABLE_PYTHON MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "DISCOUNT_ENABLE_PYTHON must be AUTO, ON or OFF, not '${DISCOUNT_ENABLE_PYTHON}'")
endif()
if(NOT DISCOUNT_ENABLE_PYTHON STREQUAL "OFF" AND NOT DISCOUNT_ENABLE_MPI AND NOT DISCOUNT_SANITIZE)
  # The system's interpreter (/usr/bin/python3) when it has NumPy, unless
  # Python3_EXECUTABLE says otherwise: a pyenv shim on PATH may lack the
  # headers and NumPy. Else the first python3 on PATH (a GPU node's venv).
  if(NOT Python3_EXECUTABLE AND EXISTS /usr/bin/python3)
    execute_process(COMMAND /usr/bin/python3 -c "import numpy" RESULT_VARIABLE _discount_no_numpy
                    OUTPUT_QUIET ERROR_QUIET)
    if(_discount_no_numpy EQUAL 0)
      set(Python3_EXECUTABLE /usr/bin/python3)
    endif()
  endif()
  find_package(Python3 COMPONENTS Interpreter Development.Module QUIET)
  if(Python3_FOUND)
    set(pybind11_FIND_QUIETLY ON)
    find_package(pybind11 CONFIG QUIET)
    if(NOT pybind11_FOUND)
      # pybind11 installed with pip into that interpreter (no Debian package).
      execute_process(COMMAND ${Python3_EXECUTABLE} -c "import pybind11; print(pybind11.get_cmake_dir())"
                      OUTPUT_VARIABLE _discount_pybind11_dir OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
      if(_discount_pybind11_dir)
        find_package(pybind11 CONFIG QUIET PATHS ${_discount_pybind11_dir} NO_DEFAULT_PATH)
      endif()
    endif()
  endif()
  if(Python3_FOUND AND pybind11_FOUND)
    set(DISCOUNT_HAVE_PYTHON ON)
  elseif(DISCOUNT_ENABLE_PYTHON STREQUAL "ON")
    message(FATAL_ERROR "DISCOUNT_ENABLE_PYTHON=ON but Python 3 (with its development files) or pybind11 was not "
                        "found: install python3-dev and pybind11-dev, or set Python3_EXECUTABLE / pybind11_DIR")
  endif()
elseif(DISCOUNT_ENABLE_PYTHON STREQUAL "ON")
  message(FATAL_ERROR "DISCOUNT_ENABLE_PYTHON=ON cannot be combined with DISCOUNT_ENABLE_MPI or DISCOUNT_SANITIZE")
endif()
if(DISCOUNT_HAVE_PYTHON)
  set(CMAKE_POSITION_INDEPENDENT_CODE ON)
endif()
message(STATUS "discount_app: Python module ${DISCOUNT_HAVE_PYTHON} (DISCOUNT_ENABLE_PYTHON=${DISCOUNT_ENABLE_PYTHON})")
