#include "io/output/memory_output.hpp"

#include "common/host_parallel.hpp"

namespace discount {

MemoryOutput::MemoryOutput(const ArrayRef& out, const InputShape& shape, const std::array<Axis, 3>& axes)
    : out_(out), shape_(shape), axes_(axes) {}

void MemoryOutput::write_slab(const Slab& slab, const double* buffer, const InputSums&) {
  const FileBox box = discount_box(shape_, axes_, slab.dates, slab.ids);
  copy_box(out_, box.start, box.count, const_cast<double*>(buffer), true);
}

namespace {

class MemoryPieces final : public SlabPieces {
 public:
  MemoryPieces(const ArrayRef& out, const FileBox& box) : out_(out), box_(box) {}
  void write(std::int64_t first, std::int64_t count, double* values) override {
    copy_box_range(out_, box_.start, box_.count, first, count, values, true);
  }
  double* in_place(std::int64_t first, std::int64_t count) override {
    return pinned_run(out_, box_.start, box_.count, first, count);
  }
  void finish(const InputSums&) override {}

 private:
  const ArrayRef& out_;
  FileBox box_;
};

}  // namespace

std::unique_ptr<SlabPieces> MemoryOutput::slab_pieces(const Slab& slab) {
  return std::make_unique<MemoryPieces>(out_, discount_box(shape_, axes_, slab.dates, slab.ids));
}

int MemoryOutput::piece_threads() const { return static_cast<int>(memory_threads()); }

std::string MemoryOutput::describe() const { return "array in memory: out " + shape_text(out_); }

}  // namespace discount
