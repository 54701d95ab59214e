# Warnings for our own targets only; nvcc_wrapper forwards -W flags to the
# host compiler through -Xcompiler.
add_library(discount_warnings INTERFACE)
if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
  target_compile_options(discount_warnings INTERFACE -Wall -Wextra -Wno-unused-parameter)
endif()

add_library(discount_sanitize INTERFACE)
if(DISCOUNT_SANITIZE)
  target_compile_options(discount_sanitize INTERFACE -fsanitize=address,undefined -fno-omit-frame-pointer
                                                     -fno-sanitize-recover=undefined)
  target_link_options(discount_sanitize INTERFACE -fsanitize=address,undefined)
endif()
