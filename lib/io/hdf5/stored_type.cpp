#include "io/hdf5/stored_type.hpp"

#include <cmath>
#include <cstring>

namespace discount {

hid_t stored_hdf5_type(OutputType type) { return type == OutputType::float32 ? H5T_IEEE_F32LE : H5T_IEEE_F64LE; }

const char* stored_type_name(OutputType type) { return type == OutputType::float32 ? "float32" : "float64"; }

float* narrow_in_place(double* values, std::size_t n, Overflow* overflow) {
  // Front to back: float i lands in bytes [4i, 4i + 4), at or below double
  // i's bytes [8i, 8i + 8), which were read already; one thread, since a
  // later element's float lands on an earlier element's double.
  auto* bytes = reinterpret_cast<unsigned char*>(values);
  for (std::size_t i = 0; i < n; ++i) {
    double wide;
    std::memcpy(&wide, bytes + 8 * i, sizeof wide);
    const auto narrow = static_cast<float>(wide);
    std::memcpy(bytes + 4 * i, &narrow, sizeof narrow);
    if (overflow && overflow->index < 0 && std::isinf(narrow) && std::isfinite(wide))
      *overflow = {static_cast<std::int64_t>(i), wide};
  }
  return reinterpret_cast<float*>(values);
}

}  // namespace discount
