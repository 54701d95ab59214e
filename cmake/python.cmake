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
  # Debian's interpreter (/usr/bin/python3) unless Python3_EXECUTABLE says
  # otherwise: a pyenv shim on PATH may lack the headers and NumPy.
  if(NOT Python3_EXECUTABLE AND EXISTS /usr/bin/python3)
    set(Python3_EXECUTABLE /usr/bin/python3)
  endif()
  find_package(Python3 COMPONENTS Interpreter Development.Module QUIET)
  if(Python3_FOUND)
    set(pybind11_FIND_QUIETLY ON)
    find_package(pybind11 CONFIG QUIET)
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
