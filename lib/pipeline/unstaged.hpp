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

template <class ExecSpace>
SlabPiecesAt Pipeline<ExecSpace>::pieces_at(const Slab& slab) const {
  SlabPiecesAt at;
  at.dates = absolute(slab.dates, spec_.dates);
  at.ids = absolute(slab.ids, spec_.ids);
  at.box = discount_box(job_.input->shape(), axes_, at.dates, at.ids);
  at.g = geometry(axes_, slab);
  at.shape = merged_piece_shape({at.g.extent, at.g.mult_stride});
  return at;
}

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
    const SlabPiecesAt at = pieces_at(slab);
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
      if (out)
        out->finish(input);
      else
        job_.sink->write_slab(slab, slab_buffer.data(), input);
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
  double* pinned = pinned_pieces_ + static_cast<std::size_t>(kDeviceSlots * w) * static_cast<std::size_t>(kPiece);
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
    send_piece(at, first, count, pinned + s * kPiece, pinned + s * kPiece, kDeviceSlots * w + s, instances, disc_sum,
               seconds);
    flight[s] = {first, count, true, Clock::now()};
  }
  for (int k = 0; k < kDeviceSlots; ++k, s = (s + 1) % kDeviceSlots)  // in the order they were sent
    if (flight[s].busy) land(s);
}

// Reads a piece into `values` (pinned) and queues it to the GPU and back
// into `to` (pinned: `values` itself, or the output's place for it) on stream
// `stream` (queue_piece); the read and the launches timed.
template <class ExecSpace>
void Pipeline<ExecSpace>::send_piece(const SlabPiecesAt& at, std::int64_t first, std::int64_t count, double* values,
                                     double* to, int stream, const ExecInstances<ExecSpace>& instances,
                                     std::uint64_t* disc_sum, PieceSeconds& seconds) {
  const auto a = Clock::now();
  read_piece(at, first, count, values, disc_sum);
  const auto b = Clock::now();
  queue_piece(at, first, count, values, to, stream, instances);
  seconds.read += std::chrono::duration<double>(b - a).count();
  seconds.kernel += seconds_since(b);
}

// A piece up from `from`, multiplied, and down into `to` (both pinned) on
// stream `stream`, each step's region around its launch (Kokkos Tools);
// returns once queued.
template <class ExecSpace>
void Pipeline<ExecSpace>::queue_piece(const SlabPiecesAt& at, std::int64_t first, std::int64_t count,
                                      const double* from, double* to, int stream,
                                      const ExecInstances<ExecSpace>& instances) {
  const ExecSpace& exec = instances.get(stream);
  const auto n = static_cast<std::size_t>(count);
  const DeviceBuffer& device = device_pieces_[static_cast<std::size_t>(stream)];
  {
    const Region region("discount::h2d");
    copy_prefix(exec, device, HostBuffer(const_cast<double*>(from), n), n);
  }
  {
    const Region region("discount::kernel");
    apply_piece(exec, device, resident_mult_device_, at.shape, first, count);
  }
  const Region region("discount::d2h");
  copy_prefix(exec, HostBuffer(to, n), device, n);
}

// The pending slabs cut into pieces that any thread may take, in order: piece
// g is piece g - first_piece[j] of slab j, where first_piece[j] <= g <
// first_piece[j + 1]. A slab is written when its last piece is.
struct SharedSlabs {
  std::vector<int> pending;
  std::vector<SlabPiecesAt> at;
  std::vector<std::unique_ptr<SlabPieces>> out;
  std::vector<std::int64_t> first_piece;              // pending.size() + 1 entries
  std::unique_ptr<std::atomic<std::int64_t>[]> left;  // pieces of slab j not yet written
  std::atomic<std::int64_t> next{0};                  // the next piece to take
  std::int64_t piece = 0;                             // elements per piece
  bool in_place = false;  // every piece goes from the input's and into the output's pinned memory
};

template <class ExecSpace>
void Pipeline<ExecSpace>::shared_slab_written(SharedSlabs& shared, std::size_t j) {
  if (--shared.left[j] != 0) return;
  {
    const Region region("discount::write");
    shared.out[j]->finish({});
  }
  const Slab& slab = plan_.slabs[static_cast<std::size_t>(shared.pending[j])];
  std::lock_guard<std::mutex> lock(write_mutex_);
  for (Stage stage : pipeline_stages(copies)) record_seconds(stage, slab, 0.0);  // seconds: as each thread ends
  slab_written_locked();
}

// Takes the next piece of any slab until none is left (or a stop): read on
// this thread, multiplied here or sent to the GPU and back on a stream of its
// own (kDeviceSlots in turn, as pieces_through_device does), and written.
// Arrays pinned in place skip the reads and writes: the GPU copies a piece
// from `disc` and into `out` where they lie (InputSource::discount_in_place,
// SlabPieces::in_place), so the host's memory sees only the GPU's traffic.
// No non-finite scan or input checksum: the pieces of a slab land on many
// threads in no order (resolve takes this path for arrays in memory only).
template <class ExecSpace>
void Pipeline<ExecSpace>::piece_sharer(SharedSlabs& shared, int w, const ExecInstances<ExecSpace>& instances) {
  if (scan_ || job_.sink->wants_input_sums()) throw internal_error("shared pieces carry no scan or input checksums");
  const auto t0 = Clock::now();
  const std::int64_t kPiece = shared.piece;
  PieceSeconds seconds;
  std::vector<double> host_piece(copies ? 0 : static_cast<std::size_t>(kPiece));
  double* pinned = copies && pinned_pieces_
                       ? pinned_pieces_ + static_cast<std::size_t>(kDeviceSlots * w) * static_cast<std::size_t>(kPiece)
                       : nullptr;
  PieceInFlight flight[kDeviceSlots];
  const auto land = [&](int s) {  // piece s back from the GPU, then written
    instances.get(kDeviceSlots * w + s).fence();
    check_device_errors("discount::apply_piece");
    seconds.travel += seconds_since(flight[s].sent);
    flight[s].busy = false;
    if (flight[s].landed_in_place)
      shared_slab_written(shared, flight[s].slab);
    else
      sharer_write(shared, flight[s].slab, flight[s].first, flight[s].count, pinned + s * kPiece, seconds);
  };
  int s = 0;
  const std::int64_t pieces = shared.first_piece.back();
  for (std::int64_t g = shared.next++; g < pieces && !stop_requested(); g = shared.next++) {
    const auto j = static_cast<std::size_t>(std::upper_bound(shared.first_piece.begin(), shared.first_piece.end(), g) -
                                            shared.first_piece.begin() - 1);
    const SlabPiecesAt& at = shared.at[j];
    const std::int64_t first = (g - shared.first_piece[j]) * kPiece;
    const std::int64_t count = std::min(kPiece, at.g.elements() - first);
    startup::first_read();
    if constexpr (copies) {
      if (flight[s].busy) land(s);
      double* staged = pinned ? pinned + s * kPiece : nullptr;
      double* to = shared.out[j]->in_place(first, count);
      const double* from = job_.input->discount_in_place(at.dates, at.ids, first, count);
      if (!staged && !(from && to)) throw internal_error("a piece not in place without a staging piece");
      if (from) {
        const auto b = Clock::now();
        queue_piece(at, first, count, from, to ? to : staged, kDeviceSlots * w + s, instances);
        seconds.kernel += seconds_since(b);
      } else {
        send_piece(at, first, count, staged, to ? to : staged, kDeviceSlots * w + s, instances, nullptr, seconds);
      }
      flight[s] = {j, first, count, true, Clock::now(), to != nullptr};
      s = (s + 1) % kDeviceSlots;
    } else {
      const auto a = Clock::now();
      read_piece(at, first, count, host_piece.data(), nullptr);
      const auto b = Clock::now();
      {
        const Region region("discount::kernel");
        multiply_piece(host_piece.data(), resident_mult_host_.data(), at.shape, first, count);
      }
      seconds.read += std::chrono::duration<double>(b - a).count();
      seconds.kernel += seconds_since(b);
      sharer_write(shared, j, first, count, host_piece.data(), seconds);
    }
  }
  for (int k = 0; k < kDeviceSlots; ++k, s = (s + 1) % kDeviceSlots)  // in the order they were sent
    if (flight[s].busy) land(s);
  add_sharer_seconds(seconds, t0);
  writer_done();
}

// A shared piece into the sink, and its slab counted down.
template <class ExecSpace>
void Pipeline<ExecSpace>::sharer_write(SharedSlabs& shared, std::size_t j, std::int64_t first, std::int64_t count,
                                       double* values, PieceSeconds& seconds) {
  const auto b = Clock::now();
  {
    const Region region("discount::write");
    shared.out[j]->write(first, count, values);
  }
  seconds.write += seconds_since(b);
  shared_slab_written(shared, j);
}

// Each stage's figure as the streamers give it: the threads' seconds over
// their count; with a GPU the copies share the pieces' travel.
template <class ExecSpace>
void Pipeline<ExecSpace>::add_sharer_seconds(const PieceSeconds& seconds, Clock::time_point t0) {
  {
    std::lock_guard<std::mutex> lock(write_mutex_);
    const double share = 1.0 / std::max(1, writers_);
    stats(Stage::read).seconds += seconds.read * share;
    stats(Stage::kernel).seconds += seconds.kernel * share;
    stats(Stage::write).seconds += seconds.write * share;
    if (copies) {
      stats(Stage::h2d).seconds += seconds.travel * share / 2;
      stats(Stage::d2h).seconds += seconds.travel * share / 2;
    }
  }
  std::lock_guard<std::mutex> busy(busy_mutex_);
  busy_intervals_.emplace_back(t0, Clock::now());
}

}  // namespace discount::pipeline_detail
