// memory.staging: none for a sink that takes any piece from any thread
// (OutputSink::piece_threads: arrays in memory), members of
// PieceStreamer<ExecSpace> (pipeline/piece_streamer.hpp): the threads share
// out the pieces of every slab instead of taking whole slabs. Included by
// pipeline.cpp only.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "pipeline/unstaged.hpp"

namespace discount::pipeline_detail {

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

  // A piece: elements [first, first + count) of slab j.
  struct Piece {
    std::size_t j = 0;
    std::int64_t first = 0, count = 0;
  };
  // Takes the next piece; false when none is left.
  bool claim(Piece& p) {
    const std::int64_t g = next++;
    if (g >= first_piece.back()) return false;
    p.j =
        static_cast<std::size_t>(std::upper_bound(first_piece.begin(), first_piece.end(), g) - first_piece.begin() - 1);
    p.first = (g - first_piece[p.j]) * piece;
    p.count = std::min(piece, at[p.j].g.elements() - p.first);
    return true;
  }
};

template <class ExecSpace>
void PieceStreamer<ExecSpace>::run_shared(const std::vector<int>& pending, int sharing) {
  SharedSlabs shared;
  share_slabs(pending, sharing, shared);
  state_.set_writers(static_cast<int>(std::clamp<std::int64_t>(shared.first_piece.back(), 1, sharing)));
  ExecInstances<ExecSpace> instances(copies ? kDeviceSlots * state_.writers() : 0);
  if constexpr (copies) make_pieces(shared.piece, !shared.in_place);
  on_threads([&](int w) { piece_sharer(shared, w, instances); });
}

// The pending slabs' pieces, numbered across slabs, for `sharing` threads.
template <class ExecSpace>
void PieceStreamer<ExecSpace>::share_slabs(const std::vector<int>& pending, int sharing, SharedSlabs& shared) {
  shared.pending = pending;
  // Arrays pinned in place for every slab, both ways: nothing is staged
  // on the host, and the GPU copies larger pieces straight from and into
  // them (in_place_piece_elements; piece_sharer).
  shared.in_place = copies && !pending.empty();
  for (int index : pending) {
    const Slab& slab = plan_.slabs[static_cast<std::size_t>(index)];
    const SlabPiecesAt at = pieces_at(slab);
    shared.at.push_back(at);
    shared.out.push_back(job_.sink->slab_pieces(slab));
    if (!shared.out.back()) throw internal_error("a sink that shares pieces took a slab only whole");
    shared.in_place = shared.in_place && job_.input->discount_in_place(at.dates, at.ids, 0, at.g.elements()) &&
                      shared.out.back()->in_place(0, at.g.elements());
  }
  shared.piece = !copies           ? static_cast<std::int64_t>(kCachePieceBytes / sizeof(double))
                 : shared.in_place ? in_place_piece_elements(sharing)
                                   : device_piece_elements();
  shared.first_piece.push_back(0);
  for (const SlabPiecesAt& at : shared.at)
    shared.first_piece.push_back(shared.first_piece.back() + (at.g.elements() + shared.piece - 1) / shared.piece);
  shared.left = std::make_unique<std::atomic<std::int64_t>[]>(pending.size());
  for (std::size_t j = 0; j < pending.size(); ++j) shared.left[j] = shared.first_piece[j + 1] - shared.first_piece[j];
}

template <class ExecSpace>
void PieceStreamer<ExecSpace>::shared_slab_written(SharedSlabs& shared, std::size_t j) {
  if (--shared.left[j] != 0) return;
  {
    const Region region("discount::write");
    shared.out[j]->finish({});
  }
  const Slab& slab = plan_.slabs[static_cast<std::size_t>(shared.pending[j])];
  std::lock_guard<std::mutex> lock(state_.write_mutex());
  for (Stage stage : pipeline_stages(copies))
    state_.figures().record_seconds(stage, slab, 0.0);  // seconds: as each thread ends
  state_.slab_written_locked();
}

// Takes the next piece of any slab until none is left (or a stop): read on
// this thread, multiplied here or sent to the GPU and back on a stream of its
// own (kDeviceSlots in turn, as pieces_through_device does), and written.
// No non-finite scan or input checksum: the pieces of a slab land on many
// threads in no order (resolve takes this path for arrays in memory only).
template <class ExecSpace>
void PieceStreamer<ExecSpace>::piece_sharer(SharedSlabs& shared, int w, const ExecInstances<ExecSpace>& instances) {
  if (scan_.on() || job_.sink->wants_input_sums())
    throw internal_error("shared pieces carry no scan or input checksums");
  const auto t0 = Clock::now();
  PieceSeconds seconds;
  if constexpr (copies)
    share_through_device(shared, w, instances, seconds);
  else
    share_on_host(shared, seconds);
  add_sharer_seconds(seconds, t0);
  state_.writer_done();
}

template <class ExecSpace>
void PieceStreamer<ExecSpace>::share_on_host(SharedSlabs& shared, PieceSeconds& seconds) {
  std::vector<double> host_piece(static_cast<std::size_t>(shared.piece));
  for (SharedSlabs::Piece p; !state_.stop_requested() && shared.claim(p);) {
    const auto [j, first, count] = p;
    const SlabPiecesAt& at = shared.at[j];
    startup::first_read();
    const auto a = Clock::now();
    read_piece(at, first, count, host_piece.data(), nullptr);
    const auto b = Clock::now();
    {
      const Region region("discount::kernel");
      multiply_piece(host_piece.data(), multiplier_.host(), at.shape, first, count);
    }
    seconds.read += std::chrono::duration<double>(b - a).count();
    seconds.kernel += seconds_since(b);
    sharer_write(shared, j, first, count, host_piece.data(), seconds);
  }
}

// With a GPU: arrays pinned in place skip the reads and writes: the GPU
// copies a piece from `disc` and into `out` where they lie
// (InputSource::discount_in_place, SlabPieces::in_place), so the host's
// memory sees only the GPU's traffic.
template <class ExecSpace>
void PieceStreamer<ExecSpace>::share_through_device(SharedSlabs& shared, int w,
                                                    const ExecInstances<ExecSpace>& instances, PieceSeconds& seconds) {
  const std::int64_t kPiece = shared.piece;
  double* pinned = pinned_pieces_
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
  for (SharedSlabs::Piece p; !state_.stop_requested() && shared.claim(p);) {
    const auto [j, first, count] = p;
    const SlabPiecesAt& at = shared.at[j];
    startup::first_read();
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
  }
  for (int k = 0; k < kDeviceSlots; ++k, s = (s + 1) % kDeviceSlots)  // in the order they were sent
    if (flight[s].busy) land(s);
}

// A shared piece into the sink, and its slab counted down.
template <class ExecSpace>
void PieceStreamer<ExecSpace>::sharer_write(SharedSlabs& shared, std::size_t j, std::int64_t first, std::int64_t count,
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
void PieceStreamer<ExecSpace>::add_sharer_seconds(const PieceSeconds& seconds, Clock::time_point t0) {
  {
    std::lock_guard<std::mutex> lock(state_.write_mutex());
    const double share = 1.0 / std::max(1, state_.writers());
    state_.stats(Stage::read).seconds += seconds.read * share;
    state_.stats(Stage::kernel).seconds += seconds.kernel * share;
    state_.stats(Stage::write).seconds += seconds.write * share;
    if (copies) {
      state_.stats(Stage::h2d).seconds += seconds.travel * share / 2;
      state_.stats(Stage::d2h).seconds += seconds.travel * share / 2;
    }
  }
  state_.figures().busy_since(t0);
}

}  // namespace discount::pipeline_detail
