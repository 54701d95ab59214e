// The staging ring's stage threads, members of StagedPipeline<ExecSpace>
// (pipeline/staged_pipeline.hpp): the reader (and the non-finite scan and
// input checksums), the uploader, the compute stage, the downloader and the
// writers. Each takes tickets from one queue and hands them to the next.
// Included by pipeline.cpp only.
#pragma once

#include "pipeline/staged_pipeline.hpp"

#include <atomic>
#include <mutex>

#include "common/startup.hpp"
#include "io/input/finite.hpp"
#include "io/records/checksum.hpp"

namespace discount::pipeline_detail {

// The non-finite scan, the input checksum and the fused kernel take each
// piece of the slab's discount as it lands (InputSource::read_discount_visited):
// no pass of their own.
template <class ExecSpace>
void StagedPipeline<ExecSpace>::read_visited(const Slab& slab, Range dates, Range ids, double* buffer, Ticket& t) {
  const bool sums = job_.sink->wants_input_sums();
  const FileBox box = discount_box(job_.input->shape(), axes_, dates, ids);
  std::atomic<std::int64_t> first_bad{-1};
  std::atomic<std::uint64_t> disc_sum{0};
  LandedMultiply multiplied;
  const Geometry g = geometry(axes_, slab);
  const PieceShape shape = merged_piece_shape({g.extent, g.mult_stride});
  const double* mult = plan_.mult_per_slab ? ring_.host_mult(t.host).data() : multiplier_.host();
  job_.input->read_discount_visited(dates, ids, buffer, [&](std::int64_t first, std::int64_t count) {
    // With the checksum, its pass also tells whether the piece holds a
    // NaN or Inf; only then does the scan look for the first one.
    bool suspect = scan_.on();
    if (sums)
      disc_sum.fetch_add(box_piece_sum(buffer + first, box.dims, box.start, box.count, first, first + count,
                                       SumKey::discount, scan_.on() ? &suspect : nullptr),
                         std::memory_order_relaxed);
    if (suspect) {
      const std::int64_t bad = find_nonfinite_here(buffer + first, count);
      if (bad >= 0) keep_lowest(first_bad, first + bad);
    }
    // after the checks, which look at the input's values
    kernel_->multiply_landed(buffer + first, mult, shape, first, count, multiplied);
  });
  t.fused_seconds = multiplied.seconds();
  if (const std::int64_t bad = first_bad.load(); bad >= 0)
    nonfinite_error("input.discount", spec_.discount, buffer[bad], slab_coordinates(bad, axes_, g.extent, box.start));
  if (sums) t.sums = {disc_sum.load(), slab_mult_sum(slab, ids, t.host), true};
}

template <class ExecSpace>
void StagedPipeline<ExecSpace>::reader(const std::vector<int>& pending) {
  const bool sums = job_.sink->wants_input_sums();
  for (int index : pending) {
    Ticket t;
    if (!ring_.free_host().pop(t.host) || state_.stop_requested()) break;
    startup::first_read();
    const Region region("discount::read");
    t.slab = index;
    const Slab& slab = plan_.slabs[index];
    const auto t0 = Clock::now();
    const Range dates = absolute(slab.dates, spec_.dates), ids = absolute(slab.ids, spec_.ids);
    if (plan_.mult_per_slab) scan_.read_multiplier(*job_.input, ids, ring_.host_mult(t.host).data());
    double* buffer = ring_.host_slab(t.host).data();
    if (scan_.on() || sums || kernel_->multiplies_as_read())
      read_visited(slab, dates, ids, buffer, t);
    else
      job_.input->read_discount(dates, ids, buffer);
    state_.figures().record(Stage::read, slab, t0, t.fused_seconds);
    queues_.loaded.push(t);
  }
}

// The checksum of the multBy rows a slab uses (pipeline/input_sums.hpp):
// its own, or those of the resident multBy (date slabs all use the whole,
// summed once).
template <class ExecSpace>
std::uint64_t StagedPipeline<ExecSpace>::slab_mult_sum(const Slab& slab, Range ids, int host) const {
  if (!plan_.mult_per_slab) return multiplier_.slab_sum(slab, ids);
  const Region region("discount::input_sums");
  return multiplier_sum(ring_.host_mult(host).data(), ids, plan_.request.nums);
}

template <class ExecSpace>
void StagedPipeline<ExecSpace>::uploader(const ExecSpace& exec) {
  Ticket t;
  while (queues_.loaded.pop(t) && !state_.aborted()) {
    if (!ring_.free_device().pop(t.device)) break;
    const auto t0 = Clock::now();
    const Region region("discount::h2d");
    if (state_.stats(Stage::h2d).slabs == 0) first_upload_ = t0;
    const Slab& slab = plan_.slabs[t.slab];
    const auto n = static_cast<std::size_t>(slab.elements());
    copy_prefix(exec, ring_.device_slab(t.device), ring_.host_slab(t.host), n);
    if (plan_.mult_per_slab)
      copy_prefix(exec, ring_.device_mult(t.device), ring_.host_mult(t.host),
                  static_cast<std::size_t>(slab.ids.size() * slab.nums));
    exec.fence();
    state_.figures().record(Stage::h2d, slab, t0);
    queues_.uploaded.push(t);
  }
}

// The kernel (slab_kernel.hpp) on each slab where the compute space sees it:
// the device buffers with a GPU, else the staging buffer in place.
template <class ExecSpace>
void StagedPipeline<ExecSpace>::compute(const ExecSpace& exec) {
  auto& input = copies ? queues_.uploaded : queues_.loaded;
  auto& output = copies ? queues_.kernel_done : queues_.computed;
  Ticket t;
  while (input.pop(t) && !state_.aborted()) {
    const Slab& slab = plan_.slabs[t.slab];
    double* data = copies ? ring_.device_slab(t.device).data() : ring_.host_slab(t.host).data();
    const double* mult = plan_.mult_per_slab
                             ? (copies ? ring_.device_mult(t.device).data() : ring_.host_mult(t.host).data())
                             : (copies ? multiplier_.device().data() : multiplier_.host());
    kernel_->compute(exec, slab, t, data, mult, state_.figures());
    output.push(t);
  }
}

template <class ExecSpace>
void StagedPipeline<ExecSpace>::downloader(const ExecSpace& exec) {
  Ticket t;
  while (queues_.kernel_done.pop(t) && !state_.aborted()) {
    const auto t0 = Clock::now();
    const Region region("discount::d2h");
    const Slab& slab = plan_.slabs[t.slab];
    copy_prefix(exec, ring_.host_slab(t.host), ring_.device_slab(t.device), static_cast<std::size_t>(slab.elements()));
    exec.fence();
    state_.figures().record(Stage::d2h, slab, t0);
    last_download_ = Clock::now();
    ring_.free_device().push(t.device);
    queues_.computed.push(t);
  }
}

// One of the writer threads: each takes the next computed slab; a split
// output's slabs in flight go to different parts (OutputSink::write_order).
// What follows a write (the counts, the progress line, the test hold) runs
// under the write lock, one writer at a time.
template <class ExecSpace>
void StagedPipeline<ExecSpace>::writer() {
  Ticket t;
  while (queues_.computed.pop(t) && !state_.aborted()) {
    const auto t0 = Clock::now();
    const Slab& slab = plan_.slabs[t.slab];
    {
      const Region region("discount::write");
      job_.sink->write_slab(slab, ring_.host_slab(t.host).data(), t.sums);
    }
    std::lock_guard<std::mutex> lock(state_.write_mutex());
    write_intervals_.emplace_back(t0, Clock::now());
    state_.figures().record(Stage::write, slab, t0);
    ring_.free_host().push(t.host);
    state_.slab_written_locked();
  }
  state_.writer_done();
}

}  // namespace discount::pipeline_detail
