// Arrays already in memory as a slab source and a slab sink, so the in-process
// multiply (lib/embed/embed.hpp, the Python module's multiply) streams through
// the same pipeline as a file job: slabs cut by the budgets, staging buffers,
// overlap, the same kernels. The arrays are described, not owned: any strides
// (a NumPy view, an np.memmap), float64 or float32 elements (float32 is
// widened exactly, slab by slab, as it is copied into the staging buffer).
// The sink is io/output/memory_output.hpp.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "io/input/input.hpp"

namespace discount {

enum class ElementType { f64, f32 };

// A strided array of `rank` dimensions; strides in elements, any sign.
struct ArrayRef {
  void* data = nullptr;
  ElementType type = ElementType::f64;
  int rank = 0;
  std::array<std::int64_t, 3> shape{0, 0, 0};
  std::array<std::int64_t, 3> strides{0, 0, 0};
  std::string name;  // for messages: "mult", "disc", "out"
  // Its memory is page-locked for the GPU's copy engines (embed/pinned_arrays.hpp):
  // contiguous pieces travel from and to it directly.
  bool pinned = false;
  std::int64_t elements() const;
  bool c_contiguous() const;
};

// multBy [ids][nums] and discount in the order `axes` names, read into the
// pipeline's packed buffers.
class MemoryInput final : public InputSource {
 public:
  MemoryInput(const ArrayRef& mult, const ArrayRef& disc, const std::array<Axis, 3>& axes);
  void read_discount(Range dates, Range ids, double* buffer) override;
  // Each thread's rows are visited as they are copied, a piece at a time.
  void read_discount_visited(Range dates, Range ids, double* buffer, const PieceVisitor& visit) override;
  bool visits_as_read() const override { return true; }
  // memory.staging: none: a piece of a slab, on the calling thread.
  bool reads_ranges() const override { return true; }
  void read_discount_range(Range dates, Range ids, std::int64_t first, std::int64_t count, double* buffer) override;
  const double* discount_in_place(Range dates, Range ids, std::int64_t first, std::int64_t count) const override;
  void read_multiplier(Range ids, double* buffer) override;
  std::string describe() const override;
  std::string identity() const override;

 private:
  ArrayRef mult_, disc_;
};

// Copies the box [start, start+count) of a strided array into (or, with
// to_array, out of) a packed row-major buffer, spread over the I/O threads
// when large.
void copy_box(const ArrayRef& array, const std::array<std::int64_t, 3>& start, const std::array<std::int64_t, 3>& count,
              double* packed, bool to_array);
// The same for elements [first, first + n) of the packed box only (`packed`
// holds just those), on the calling thread.
void copy_box_range(const ArrayRef& array, const std::array<std::int64_t, 3>& start,
                    const std::array<std::int64_t, 3>& count, std::int64_t first, std::int64_t n, double* packed,
                    bool to_array);
// Where elements [first, first + n) of the packed box lie in a pinned float64
// array when they are one contiguous run there; null otherwise.
double* pinned_run(const ArrayRef& array, const std::array<std::int64_t, 3>& start,
                   const std::array<std::int64_t, 3>& count, std::int64_t first, std::int64_t n);
// "200x1000x5 float64": an array's shape and element type, for messages.
std::string shape_text(const ArrayRef& array);

}  // namespace discount
