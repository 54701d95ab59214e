// Limits of a GPU kernel launch that the app's own rules must respect. Pure.
#pragma once

#include <cstdint>

namespace discount {

// CUDA's limit on blockDim.z, which a rank-3 MDRange tile's last entry
// becomes on a GPU (kernels/detail/mdrange.hpp); resolve() refuses a user tile above it.
constexpr std::int64_t kMaxBlockZ = 64;

}  // namespace discount
