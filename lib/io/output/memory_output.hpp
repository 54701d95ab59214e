// The in-process multiply's result array as a slab sink (the source and
// the array description: io/input/memory_arrays.hpp).
#pragma once

#include <array>
#include <memory>
#include <string>

#include "io/input/memory_arrays.hpp"
#include "io/output/output.hpp"

namespace discount {

// The result, slab by slab, into `out` (float64, disc's shape and axes).
class MemoryOutput final : public OutputSink {
 public:
  MemoryOutput(const ArrayRef& out, const InputShape& shape, const std::array<Axis, 3>& axes);
  bool slab_done(const Slab&) const override { return false; }
  void write_slab(const Slab& slab, const double* buffer, const InputSums& input = {}) override;
  // Pieces of a slab straight into `out`, from any thread (they are disjoint).
  std::unique_ptr<SlabPieces> slab_pieces(const Slab& slab) override;
  // memory.staging: none: every CPU's thread takes pieces of the same slabs.
  int piece_threads() const override;
  std::string describe() const override;

 private:
  ArrayRef out_;
  InputShape shape_;
  std::array<Axis, 3> axes_;
};

}  // namespace discount
