// A half-open index range along one axis: an input selection, a slab, a done range.
#pragma once

#include <cstdint>

namespace discount {

struct Range {  // half-open [begin, end)
  std::int64_t begin = 0;
  std::int64_t end = 0;
  std::int64_t size() const { return end - begin; }
};

}  // namespace discount
