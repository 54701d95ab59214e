// memory.staging: none (docs/config.md), a member of Pipeline<ExecSpace>
// (pipeline/pipeline_engine.hpp). In host memory, each of these threads
// takes whole slabs in the sink's write order (a split output's threads meet
// different part files) and moves each in pieces of about 1 MiB through a
// buffer of its own that stays in cache: the positional read, the non-finite
// scan and input checksum, the multiply, the write and its checksum. No slab
// crosses memory in a staging ring: each byte is read from the input's pages
// and written to the output's, once. Included by pipeline.cpp only.
#pragma once

#include "common/host_parallel.hpp"
#include "pipeline/stage_threads.hpp"

namespace discount::pipeline_detail {

template <class ExecSpace>
void Pipeline<ExecSpace>::streamer(const std::vector<int>& pending, std::atomic<std::size_t>& next) {
  const bool sums = job_.sink->wants_input_sums();
  constexpr auto kPiece = static_cast<std::int64_t>(kCachePieceBytes / sizeof(double));
  std::vector<double> piece(static_cast<std::size_t>(kPiece));
  const double* mult = resident_mult_host_.data();  // date slabs only (resolve)
  for (std::size_t n = next++; n < pending.size() && !stop_requested(); n = next++) {
    const Slab& slab = plan_.slabs[pending[n]];
    startup::first_read();
    const auto t0 = Clock::now();
    const Range dates = absolute(slab.dates, spec_.dates), ids = absolute(slab.ids, spec_.ids);
    const FileBox box = discount_box(job_.input->shape(), axes_, dates, ids);
    const Geometry g = geometry(axes_, slab);
    const PieceShape shape = merged_piece_shape({g.extent, g.mult_stride});
    // A slab the sink takes only whole (one across a part's edge, after a
    // resume that cut slabs differently) is gathered in a slab buffer, one
    // such slab at a time, and written whole.
    std::unique_ptr<SlabPieces> out = job_.sink->slab_pieces(slab);
    std::unique_lock<std::mutex> whole;
    std::vector<double> slab_buffer;
    if (!out) {
      whole = std::unique_lock<std::mutex>(whole_slab_mutex_);
      slab_buffer.resize(static_cast<std::size_t>(slab.elements()));
    }
    double read_s = 0.0, kernel_s = 0.0, write_s = 0.0;
    std::uint64_t disc_sum = 0;
    const std::int64_t total = slab.elements();
    for (std::int64_t first = 0; first < total; first += kPiece) {
      const std::int64_t count = std::min(kPiece, total - first);
      double* values = out ? piece.data() : slab_buffer.data() + first;
      const auto a = Clock::now();
      {
        const Region region("discount::read");
        job_.input->read_discount_range(dates, ids, first, count, values);
        bool suspect = scan_;
        if (sums)
          disc_sum += box_piece_sum(values, box.dims, box.start, box.count, first, first + count, SumKey::discount,
                                    scan_ ? &suspect : nullptr);
        // Pieces go in order on this thread: the first bad value found is the slab's first.
        if (suspect)
          if (const std::int64_t bad = find_nonfinite_here(values, count); bad >= 0)
            nonfinite_error("input.discount", spec_.discount, values[bad],
                            slab_coordinates(first + bad, axes_, g.extent, box.start));
      }
      const auto b = Clock::now();
      {
        const Region region("discount::kernel");
        multiply_piece(values, mult, shape, first, count);
      }
      const auto c = Clock::now();
      if (out) {
        const Region region("discount::write");
        out->write(first, count, values);
      }
      read_s += std::chrono::duration<double>(b - a).count();
      kernel_s += std::chrono::duration<double>(c - b).count();
      write_s += seconds_since(c);
    }
    const InputSums input = sums ? InputSums{disc_sum, slab_mult_sum(slab, ids, -1), true} : InputSums{};
    const auto w0 = Clock::now();
    {
      const Region region("discount::write");
      if (out) out->finish(input);
      else job_.sink->write_slab(slab, slab_buffer.data(), input);
    }
    write_s += seconds_since(w0);
    if (whole) whole.unlock();
    // Each stage's figure: this thread's seconds over the threads that share
    // the stages, as if the stage had the whole machine's threads to itself.
    std::lock_guard<std::mutex> lock(write_mutex_);
    const double share = 1.0 / std::max(1, writers_);
    record_seconds(Stage::read, slab, read_s * share);
    record_seconds(Stage::kernel, slab, kernel_s * share);
    record_seconds(Stage::write, slab, write_s * share);
    {
      std::lock_guard<std::mutex> busy(busy_mutex_);
      busy_intervals_.emplace_back(t0, Clock::now());
    }
    slab_written_locked();
  }
  writer_done();
}

}  // namespace discount::pipeline_detail
