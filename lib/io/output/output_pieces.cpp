// memory.staging: none on the file output: a slab that lies in one data file
// is written piece by piece, with positional page-cache writes on the calling
// thread, its checksum taken from each piece while it is in cache. What a
// finished slab records is what write_slab records (io/output/output.cpp).
#include <memory>

#include "io/hdf5/stored_type.hpp"
#include "io/records/checksum.hpp"
#include "io/output/output.hpp"
#include "io/posix/posix_io.hpp"

namespace discount {

std::unique_ptr<SlabPieces> FileOutput::slab_pieces(const Slab& slab) {
  if (state_ == State::already_complete) return nullptr;
  const auto [b, e] = units_of(slab);
  const std::size_t f = parts_.file_of(b);
  if (f != parts_.file_of(e - 1)) return nullptr;
  DataFile& file = parts_.file(f);
  if (!file.page_cache()) return nullptr;  // O_DIRECT wants large aligned writes; MPI-IO writes boxes

  class Pieces final : public SlabPieces {
   public:
    Pieces(FileOutput& out, DataFile& file, const Slab& slab, std::int64_t b, std::int64_t e, int k)
        : out_(out),
          file_(file),
          slab_(slab),
          box_(output_box(out.spec_, slab.dates, slab.ids)),
          b_(b),
          e_(e),
          start_(box_.start),
          what_("writing '" + file.path + "'") {
      start_[k] = b - file.units.begin;  // the slab's place in its data file
    }
    void write(std::int64_t first, std::int64_t count, double* values) override {
      const std::int64_t last = first + count;
      const void* data = values;
      if (out_.spec_.dtype == OutputType::float32) {
        Overflow overflow;
        const float* narrow =
            narrow_in_place(values, static_cast<std::size_t>(count), out_.spec_.check_finite ? &overflow : nullptr);
        if (overflow.index >= 0)
          throw_overflow(out_.spec_, slab_.dates, slab_.ids, first + overflow.index, overflow.value);
        sum_ += box_piece_sum(narrow, box_.dims, box_.start, box_.count, first, last, SumKey::output);
        data = narrow;
      } else {
        sum_ += box_piece_sum(values, box_.dims, box_.start, box_.count, first, last, SumKey::output);
      }
      pwrite_runs_here(file_.fd.get(), file_.offset, box_range_runs(file_.dims, start_, box_.count, first, last), data,
                       stored_bytes(out_.spec_.dtype), what_);
      file_.dirty = true;
    }
    void finish(const InputSums& input) override { out_.record_written(b_, e_, sum_, input); }

   private:
    FileOutput& out_;
    DataFile& file_;
    const Slab slab_;
    const FileBox box_;  // the slab in the whole output (the checksum's indices)
    const std::int64_t b_, e_;
    std::array<std::int64_t, 3> start_;  // and in its data file
    const std::string what_;
    std::uint64_t sum_ = 0;
  };
  return std::make_unique<Pieces>(*this, file, slab, b, e, parts_.chunk_position());
}

}  // namespace discount
