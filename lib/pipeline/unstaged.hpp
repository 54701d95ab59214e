// memory.staging: none (docs/config.md), members of Pipeline<ExecSpace>
// (pipeline/pipeline_engine.hpp). Each of these threads takes whole slabs in
// the sink's write order (a split output's threads meet different part files)
// and moves each in pieces of about 1 MiB through buffers of its own that stay
// in cache: the positional read, the non-finite scan and input checksum, the
// multiply, the write and its checksum. No slab crosses memory in a staging
// ring: each byte is read from the input's pages and written to the output's
// once. In host memory the thread multiplies each piece itself; with a GPU it
// sends the piece there and back on a stream of its own (kDeviceSlots pieces in
// turn, so the next pieces are read while others travel). Included by
// pipeline.cpp only.
#pragma once

#include "common/host_parallel.hpp"
#include "kernels/device_piece.hpp"
#include "pipeline/stage_threads.hpp"

namespace discount::pipeline_detail {

// One slab's geometry for its pieces.
struct SlabPiecesAt {
  Range dates, ids;  // absolute in the source
  FileBox box;       // the slab in the input (the input checksum's indices)
  Geometry g;
  PieceShape shape;  // for the multiply
};

// Reads elements [first, first + count) of the slab into `values`, with the
// input checksum and the non-finite scan while the piece is in cache. Pieces
// go in order on one thread: the first bad value found is the slab's first.
template <class ExecSpace>
void Pipeline<ExecSpace>::read_piece(const SlabPiecesAt& at, std::int64_t first, std::int64_t count, double* values,
                                     std::uint64_t* disc_sum) {
  const Region region("discount::read");
  job_.input->read_discount_range(at.dates, at.ids, first, count, values);
  bool suspect = scan_;
  if (disc_sum)
    *disc_sum += box_piece_sum(values, at.box.dims, at.box.start, at.box.count, first, first + count, SumKey::discount,
                               scan_ ? &suspect : nullptr);
  if (suspect)
    if (const std::int64_t bad = find_nonfinite_here(values, count); bad >= 0)
      nonfinite_error("input.discount", spec_.discount, values[bad],
                      slab_coordinates(first + bad, axes_, at.g.extent, at.box.start));
}

template <class ExecSpace>
void Pipeline<ExecSpace>::streamer(const std::vector<int>& pending, std::atomic<std::size_t>& next, int w,
                                   const ExecInstances<ExecSpace>& instances) {
  const bool sums = job_.sink->wants_input_sums();
  constexpr auto kPiece = static_cast<std::int64_t>(kCachePieceBytes / sizeof(double));
  std::vector<double> host_piece(copies ? 0 : static_cast<std::size_t>(kPiece));
  const double* mult = resident_mult_host_.data();  // date slabs only (resolve)
  for (std::size_t n = next++; n < pending.size() && !stop_requested(); n = next++) {
    const Slab& slab = plan_.slabs[pending[n]];
    startup::first_read();
    const auto t0 = Clock::now();
    SlabPiecesAt at;
    at.dates = absolute(slab.dates, spec_.dates);
    at.ids = absolute(slab.ids, spec_.ids);
    at.box = discount_box(job_.input->shape(), axes_, at.dates, at.ids);
    at.g = geometry(axes_, slab);
    at.shape = merged_piece_shape({at.g.extent, at.g.mult_stride});
    // A slab the sink takes only whole (one across a part's edge, after a
    // resume that cut slabs differently) is gathered in a slab buffer, one
    // such slab at a time, multiplied here on the host (the same bits), and
    // written whole.
    std::unique_ptr<SlabPieces> out = job_.sink->slab_pieces(slab);
    std::unique_lock<std::mutex> whole;
    std::vector<double> slab_buffer;
    if (!out) {
      whole = std::unique_lock<std::mutex>(whole_slab_mutex_);
      slab_buffer.resize(static_cast<std::size_t>(slab.elements()));
    }
    PieceSeconds seconds;
    std::uint64_t disc_sum = 0;
    std::uint64_t* sum = sums ? &disc_sum : nullptr;
    const std::int64_t total = slab.elements();
    if (copies && out) {
      pieces_through_device(at, total, *out, w, instances, sum, seconds);
    } else {
      for (std::int64_t first = 0; first < total; first += kPiece) {
        const std::int64_t count = std::min(kPiece, total - first);
        double* values = out ? host_piece.data() : slab_buffer.data() + first;
        const auto a = Clock::now();
        read_piece(at, first, count, values, sum);
        const auto b = Clock::now();
        {
          const Region region("discount::kernel");
          multiply_piece(values, mult, at.shape, first, count);
        }
        const auto c = Clock::now();
        if (out) {
          const Region region("discount::write");
          out->write(first, count, values);
        }
        seconds.read += std::chrono::duration<double>(b - a).count();
        seconds.kernel += std::chrono::duration<double>(c - b).count();
        seconds.write += seconds_since(c);
      }
    }
    const InputSums input = sums ? InputSums{disc_sum, slab_mult_sum(slab, at.ids, -1), true} : InputSums{};
    const auto w0 = Clock::now();
    {
      const Region region("discount::write");
      if (out) out->finish(input);
      else job_.sink->write_slab(slab, slab_buffer.data(), input);
    }
    seconds.write += seconds_since(w0);
    if (whole) whole.unlock();
    // Each stage's figure: this thread's seconds over the threads that share
    // the stages, as if the stage had the whole machine's threads to itself.
    // With a GPU, the copies share the time its pieces spent travelling
    // (queued to back, while the thread read the next one); the kernel line
    // shows the launches.
    std::lock_guard<std::mutex> lock(write_mutex_);
    const double share = 1.0 / std::max(1, writers_);
    record_seconds(Stage::read, slab, seconds.read * share);
    record_seconds(Stage::kernel, slab, seconds.kernel * share);
    if (copies) {
      record_seconds(Stage::h2d, slab, seconds.travel * share / 2);
      record_seconds(Stage::d2h, slab, seconds.travel * share / 2);
    }
    record_seconds(Stage::write, slab, seconds.write * share);
    {
      std::lock_guard<std::mutex> busy(busy_mutex_);
      busy_intervals_.emplace_back(t0, Clock::now());
    }
    slab_written_locked();
  }
  writer_done();
}

// The pieces of one slab through the GPU: read into pinned piece s, then up,
// multiplied and down on stream s while the next pieces are read into the
// others (kDeviceSlots in turn); a piece back from the GPU is written before
// its buffer is reused (plan/plan.hpp says why two slots).
template <class ExecSpace>
void Pipeline<ExecSpace>::pieces_through_device(const SlabPiecesAt& at, std::int64_t total, SlabPieces& out, int w,
                                                const ExecInstances<ExecSpace>& instances, std::uint64_t* disc_sum,
                                                PieceSeconds& seconds) {
  const std::int64_t kPiece = device_piece_elements();
  struct InFlight {
    std::int64_t first = 0, count = 0;
    bool busy = false;
    Clock::time_point sent{};  // its copies and kernel queued
  } flight[kDeviceSlots];
  auto* pinned = static_cast<double*>(piece_pins_[static_cast<std::size_t>(w)]->data());
  auto land = [&](int s) {  // piece s back from the GPU, then written
    instances.get(kDeviceSlots * w + s).fence();
    check_device_errors("discount::apply_piece");
    const auto b = Clock::now();
    {
      const Region region("discount::write");
      out.write(flight[s].first, flight[s].count, pinned + s * kPiece);
    }
    seconds.travel += std::chrono::duration<double>(b - flight[s].sent).count();
    seconds.write += seconds_since(b);
    flight[s].busy = false;
  };
  int s = 0;
  for (std::int64_t first = 0; first < total; first += kPiece, s = (s + 1) % kDeviceSlots) {
    if (flight[s].busy) land(s);
    const std::int64_t count = std::min(kPiece, total - first);
    double* values = pinned + s * kPiece;
    const auto a = Clock::now();
    read_piece(at, first, count, values, disc_sum);
    const auto b = Clock::now();
    {  // queued on the slot's stream; each region covers its launch (Kokkos Tools)
      const ExecSpace& exec = instances.get(kDeviceSlots * w + s);
      const HostBuffer host(values, static_cast<std::size_t>(kPiece));
      const DeviceBuffer& device = device_pieces_[static_cast<std::size_t>(kDeviceSlots * w + s)];
      const auto n = static_cast<std::size_t>(count);
      {
        const Region region("discount::h2d");
        copy_prefix(exec, device, host, n);
      }
      {
        const Region region("discount::kernel");
        apply_piece(exec, device, resident_mult_device_, at.shape, first, count);
      }
      const Region region("discount::d2h");
      copy_prefix(exec, host, device, n);
    }
    seconds.read += std::chrono::duration<double>(b - a).count();
    seconds.kernel += seconds_since(b);
    flight[s] = {first, count, true, Clock::now()};
  }
  for (int k = 0; k < kDeviceSlots; ++k, s = (s + 1) % kDeviceSlots)  // in the order they were sent
    if (flight[s].busy) land(s);
}

}  // namespace discount::pipeline_detail
