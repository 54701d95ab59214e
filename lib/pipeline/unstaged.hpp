// memory.staging: none (docs/config.md), members of PieceStreamer<ExecSpace>
// (pipeline/piece_streamer.hpp). Each of these threads takes whole slabs in
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

#include <chrono>
#include <memory>

#include "common/startup.hpp"
#include "io/input/finite.hpp"
#include "io/records/checksum.hpp"
#include "kernels/apply.hpp"
#include "kernels/device_piece.hpp"
#include "kernels/piece_multiply.hpp"
#include "pipeline/piece_streamer.hpp"

namespace discount::pipeline_detail {

// One slab's geometry for its pieces.
struct SlabPiecesAt {
  Range dates, ids;  // absolute in the source
  FileBox box;       // the slab in the input (the input checksum's indices)
  Geometry g;
  PieceShape shape;  // for the multiply
};

template <class ExecSpace>
SlabPiecesAt PieceStreamer<ExecSpace>::pieces_at(const Slab& slab) const {
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
void PieceStreamer<ExecSpace>::read_piece(const SlabPiecesAt& at, std::int64_t first, std::int64_t count,
                                          double* values, std::uint64_t* disc_sum) {
  const Region region("discount::read");
  job_.input->read_discount_range(at.dates, at.ids, first, count, values);
  bool suspect = scan_.on();
  if (disc_sum)
    *disc_sum += box_piece_sum(values, at.box.dims, at.box.start, at.box.count, first, first + count, SumKey::discount,
                               scan_.on() ? &suspect : nullptr);
  if (suspect)
    if (const std::int64_t bad = find_nonfinite_here(values, count); bad >= 0)
      nonfinite_error("input.discount", spec_.discount, values[bad],
                      slab_coordinates(first + bad, axes_, at.g.extent, at.box.start));
}

template <class ExecSpace>
void PieceStreamer<ExecSpace>::streamer(const std::vector<int>& pending, std::atomic<std::size_t>& next, int w,
                                        const ExecInstances<ExecSpace>& instances) {
  constexpr auto kPiece = static_cast<std::int64_t>(kCachePieceBytes / sizeof(double));
  std::vector<double> host_piece(copies ? 0 : static_cast<std::size_t>(kPiece));
  for (std::size_t n = next++; n < pending.size() && !state_.stop_requested(); n = next++)
    stream_slab(plan_.slabs[pending[n]], w, instances, host_piece);
  state_.writer_done();
}

// One slab, read, multiplied and written piece by piece, then finished.
template <class ExecSpace>
void PieceStreamer<ExecSpace>::stream_slab(const Slab& slab, int w, const ExecInstances<ExecSpace>& instances,
                                           std::vector<double>& piece) {
  const bool sums = job_.sink->wants_input_sums();
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
  if (copies && out)
    pieces_through_device(at, total, *out, w, instances, sum, seconds);
  else
    pieces_on_host(at, total, out.get(), piece.data(), slab_buffer.data(), sum, seconds);
  const InputSums input = sums ? InputSums{disc_sum, multiplier_.slab_sum(slab, at.ids), true} : InputSums{};
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
  book_slab(slab, seconds, t0);
}

// A slab's pieces on this thread: read into `piece` (or into the slab
// buffer, for a slab the sink takes only whole: `out` null), multiplied, and
// written.
template <class ExecSpace>
void PieceStreamer<ExecSpace>::pieces_on_host(const SlabPiecesAt& at, std::int64_t total, SlabPieces* out,
                                              double* piece, double* slab_buffer, std::uint64_t* disc_sum,
                                              PieceSeconds& seconds) {
  constexpr auto kPiece = static_cast<std::int64_t>(kCachePieceBytes / sizeof(double));
  const double* mult = multiplier_.host();  // date slabs only (resolve)
  for (std::int64_t first = 0; first < total; first += kPiece) {
    const std::int64_t count = std::min(kPiece, total - first);
    double* values = out ? piece : slab_buffer + first;
    const auto a = Clock::now();
    read_piece(at, first, count, values, disc_sum);
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

// Each stage's figure: this thread's seconds over the threads that share
// the stages, as if the stage had the whole machine's threads to itself.
// With a GPU, the copies share the time its pieces spent travelling
// (queued to back, while the thread read the next one); the kernel line
// shows the launches.
template <class ExecSpace>
void PieceStreamer<ExecSpace>::book_slab(const Slab& slab, const PieceSeconds& seconds, Clock::time_point t0) {
  std::lock_guard<std::mutex> lock(state_.write_mutex());
  StageFigures& figures = state_.figures();
  const double share = 1.0 / std::max(1, state_.writers());
  figures.record_seconds(Stage::read, slab, seconds.read * share);
  figures.record_seconds(Stage::kernel, slab, seconds.kernel * share);
  if (copies) {
    figures.record_seconds(Stage::h2d, slab, seconds.travel * share / 2);
    figures.record_seconds(Stage::d2h, slab, seconds.travel * share / 2);
  }
  figures.record_seconds(Stage::write, slab, seconds.write * share);
  figures.busy_since(t0);
  state_.slab_written_locked();
}

// The pieces of one slab through the GPU: read into pinned piece s, then up,
// multiplied and down on stream s while the next pieces are read into the
// others (kDeviceSlots in turn); a piece back from the GPU is written before
// its buffer is reused (plan/plan.hpp says why two slots).
template <class ExecSpace>
void PieceStreamer<ExecSpace>::pieces_through_device(const SlabPiecesAt& at, std::int64_t total, SlabPieces& out, int w,
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
void PieceStreamer<ExecSpace>::send_piece(const SlabPiecesAt& at, std::int64_t first, std::int64_t count,
                                          double* values, double* to, int stream,
                                          const ExecInstances<ExecSpace>& instances, std::uint64_t* disc_sum,
                                          PieceSeconds& seconds) {
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
void PieceStreamer<ExecSpace>::queue_piece(const SlabPiecesAt& at, std::int64_t first, std::int64_t count,
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
    apply_piece(exec, device, multiplier_.device(), at.shape, first, count);
  }
  const Region region("discount::d2h");
  copy_prefix(exec, HostBuffer(to, n), device, n);
}

}  // namespace discount::pipeline_detail
