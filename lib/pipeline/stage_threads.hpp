// The pipeline's stage threads, members of Pipeline<ExecSpace>
// (pipeline/pipeline_engine.hpp): the reader (and the non-finite scan and
// input checksums), the uploader, the compute stage, the downloader and the
// writers. Each takes tickets from one queue and hands them to the next.
// Included by pipeline.cpp only.
#pragma once

#include "pipeline/pipeline_engine.hpp"

namespace discount::pipeline_detail {

template <class ExecSpace>
void Pipeline<ExecSpace>::read_multiplier(Range ids, double* buffer) {
  job_.input->read_multiplier(ids, buffer);
  if (!scan_) return;
  const std::int64_t n = ids.size() * plan_.request.nums;
  const std::int64_t bad = find_nonfinite(buffer, n);
  if (bad >= 0)
    nonfinite_error("input.multiplier", spec_.multiplier, buffer[bad],
                    "id " + std::to_string(ids.begin + bad / plan_.request.nums) + ", num " +
                        std::to_string(bad % plan_.request.nums));
}

// The non-finite scan, the input checksum and the fused kernel take each
// piece of the slab's discount as it lands (InputSource::read_discount_visited):
// no pass of their own.
template <class ExecSpace>
void Pipeline<ExecSpace>::read_visited(const Slab& slab, Range dates, Range ids, double* buffer, Ticket& t) {
  const bool sums = job_.sink->wants_input_sums();
  const FileBox box = discount_box(job_.input->shape(), axes_, dates, ids);
  std::atomic<std::int64_t> first_bad{-1};
  std::atomic<std::uint64_t> disc_sum{0};
  std::atomic<std::int64_t> multiply_ns{0};
  std::atomic<int> multiplying{0}, most_at_once{1};  // threads in multiply_piece: now, and the most seen
  const Geometry g = geometry(axes_, slab);
  const PieceShape shape = merged_piece_shape({g.extent, g.mult_stride});
  const double* mult = plan_.mult_per_slab ? host_mult_[t.host].data() : resident_mult_host_.data();
  job_.input->read_discount_visited(dates, ids, buffer, [&](std::int64_t first, std::int64_t count) {
    // With the checksum, its pass also tells whether the piece holds a
    // NaN or Inf; only then does the scan look for the first one.
    bool suspect = scan_;
    if (sums)
      disc_sum.fetch_add(box_piece_sum(buffer + first, box.dims, box.start, box.count, first, first + count,
                                       SumKey::discount, scan_ ? &suspect : nullptr),
                         std::memory_order_relaxed);
    if (suspect) {
      const std::int64_t bad = find_nonfinite_here(buffer + first, count);
      if (bad >= 0) keep_lowest(first_bad, first + bad);
    }
    if (fused_) {  // after the checks, which look at the input's values
      const auto m0 = Clock::now();
      const int now = multiplying.fetch_add(1) + 1;
      for (int seen = most_at_once.load(); now > seen && !most_at_once.compare_exchange_weak(seen, now);) {}
      {
        const Region kernel("discount::kernel");
        multiply_piece(buffer + first, mult, shape, first, count);
      }
      multiplying.fetch_sub(1);
      multiply_ns.fetch_add(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - m0).count(),
                            std::memory_order_relaxed);
    }
  });
  // The multiply's thread-seconds over the most threads seen in it at
  // once: its share of the read's wall time, booked on the kernel stage,
  // not the read.
  t.fused_seconds = static_cast<double>(multiply_ns.load()) * 1e-9 / most_at_once.load();
  if (const std::int64_t bad = first_bad.load(); bad >= 0)
    nonfinite_error("input.discount", spec_.discount, buffer[bad], slab_coordinates(bad, axes_, g.extent, box.start));
  if (sums) t.sums = {disc_sum.load(), slab_mult_sum(slab, ids, t.host), true};
}

template <class ExecSpace>
void Pipeline<ExecSpace>::reader(const std::vector<int>& pending) {
  const bool sums = job_.sink->wants_input_sums();
  for (int index : pending) {
    Ticket t;
    if (!free_host_.pop(t.host) || stop_requested()) break;
    startup::first_read();
    const Region region("discount::read");
    t.slab = index;
    const Slab& slab = plan_.slabs[index];
    const auto t0 = Clock::now();
    const Range dates = absolute(slab.dates, spec_.dates), ids = absolute(slab.ids, spec_.ids);
    if (plan_.mult_per_slab) read_multiplier(ids, host_mult_[t.host].data());
    double* buffer = host_slab_[t.host].data();
    if (scan_ || sums || fused_)
      read_visited(slab, dates, ids, buffer, t);
    else
      job_.input->read_discount(dates, ids, buffer);
    record(Stage::read, slab, t0, t.fused_seconds);
    loaded_.push(t);
  }
}

// The checksum of the multBy rows a slab uses (pipeline/input_sums.hpp):
// date slabs all use the whole resident multBy, summed once.
template <class ExecSpace>
std::uint64_t Pipeline<ExecSpace>::slab_mult_sum(const Slab& slab, Range ids, int host) const {
  const std::int64_t nums = plan_.request.nums;
  if (!plan_.mult_per_slab && ids.begin == spec_.ids.begin && ids.end == spec_.ids.end) return whole_mult_sum_;
  const Region region("discount::input_sums");
  if (plan_.mult_per_slab) return multiplier_sum(host_mult_[host].data(), ids, nums);
  return multiplier_sum(resident_mult_host_.data() + slab.ids.begin * nums, ids, nums);
}

template <class ExecSpace>
void Pipeline<ExecSpace>::uploader(const ExecSpace& exec) {
  Ticket t;
  while (loaded_.pop(t) && !aborted_) {
    if (!free_device_.pop(t.device)) break;
    const auto t0 = Clock::now();
    const Region region("discount::h2d");
    if (stats(Stage::h2d).slabs == 0) first_upload_ = t0;
    const Slab& slab = plan_.slabs[t.slab];
    const auto n = static_cast<std::size_t>(slab.elements());
    copy_prefix(exec, device_slab_[t.device], host_slab_[t.host], n);
    if (plan_.mult_per_slab)
      copy_prefix(exec, device_mult_[t.device], host_mult_[t.host],
                  static_cast<std::size_t>(slab.ids.size() * slab.nums));
    exec.fence();
    record(Stage::h2d, slab, t0);
    uploaded_.push(t);
  }
}

template <class ExecSpace>
void Pipeline<ExecSpace>::compute(const ExecSpace& exec) {
  auto& input = copies ? uploaded_ : loaded_;
  auto& output = copies ? kernel_done_ : computed_;
  Ticket t;
  while (input.pop(t) && !aborted_) {
    const Slab& slab = plan_.slabs[t.slab];
    if (fused_) {  // multiplied as it was read (reader())
      record_seconds(Stage::kernel, slab, t.fused_seconds);
      output.push(t);
      continue;
    }
    const auto t0 = Clock::now();
    const Region region("discount::kernel");
    const Geometry g = geometry(axes_, slab);
    double* data = copies ? device_slab_[t.device].data() : host_slab_[t.host].data();
    const double* mult = plan_.mult_per_slab ? (copies ? device_mult_[t.device].data() : host_mult_[t.host].data())
                                             : (copies ? resident_mult_device_.data() : resident_mult_host_.data());
    const ConstFlatView<ComputeMemory> mult_view(mult, static_cast<std::size_t>(slab.ids.size() * slab.nums));
    const SlabView<ComputeMemory> slab_view(data, g.extent[0], g.extent[1], g.extent[2]);
#ifdef DISCOUNT_HAVE_KOKKOSKERNELS
    if (blas_)
      apply_blas(exec, mult_view, ConstSlabView<ComputeMemory>(slab_view), slab_view);
    else
#endif
      apply_mdrange(exec, spec_.slicing, mult_view, ConstSlabView<ComputeMemory>(slab_view), slab_view, g.mult_stride);
    exec.fence();
    check_device_errors("discount::apply");
    record(Stage::kernel, slab, t0);
    output.push(t);
  }
}

template <class ExecSpace>
void Pipeline<ExecSpace>::downloader(const ExecSpace& exec) {
  Ticket t;
  while (kernel_done_.pop(t) && !aborted_) {
    const auto t0 = Clock::now();
    const Region region("discount::d2h");
    const Slab& slab = plan_.slabs[t.slab];
    copy_prefix(exec, host_slab_[t.host], device_slab_[t.device], static_cast<std::size_t>(slab.elements()));
    exec.fence();
    record(Stage::d2h, slab, t0);
    last_download_ = Clock::now();
    free_device_.push(t.device);
    computed_.push(t);
  }
}

// One of writers_ threads: each takes the next computed slab; a split
// output's slabs in flight go to different parts (OutputSink::write_order).
// What follows a write (the counts, the progress line, the test hold) runs
// under write_mutex_, one writer at a time.
template <class ExecSpace>
void Pipeline<ExecSpace>::writer() {
  Ticket t;
  while (computed_.pop(t) && !aborted_) {
    const auto t0 = Clock::now();
    const Slab& slab = plan_.slabs[t.slab];
    {
      const Region region("discount::write");
      job_.sink->write_slab(slab, host_slab_[t.host].data(), t.sums);
    }
    std::lock_guard<std::mutex> lock(write_mutex_);
    write_intervals_.emplace_back(t0, Clock::now());
    record(Stage::write, slab, t0);
    free_host_.push(t.host);
    slab_written_locked();
  }
  writer_done();
}

// After a slab's write, under write_mutex_: the progress line, the test hold.
template <class ExecSpace>
void Pipeline<ExecSpace>::slab_written_locked() {
  const StageStats& written = stats(Stage::write);
  if (job_.progress) job_.progress({written.slabs, total_pending_, written.bytes, seconds_since(write_start_), false});
  test_hold_.after_slab(written.slabs, [this] { return stop_requested(); });  // tests only (test_hooks.hpp)
}

// However the run ends (done, stopped, failed), the last writer to finish
// gives the final figures, so the progress line ends once.
template <class ExecSpace>
void Pipeline<ExecSpace>::writer_done() {
  std::lock_guard<std::mutex> lock(write_mutex_);
  if (++writers_done_ == writers_ && job_.progress) {
    const StageStats& written = stats(Stage::write);
    job_.progress({written.slabs, total_pending_, written.bytes, seconds_since(write_start_), true});
  }
}

}  // namespace discount::pipeline_detail
