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

template <class ExecSpace>
void Pipeline<ExecSpace>::reader(const std::vector<int>& pending) {
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
    const Geometry g = geometry(axes_, slab);
    job_.input->read_discount(dates, ids, buffer);
    if (scan_) {
      const std::int64_t bad = find_nonfinite(buffer, g.elements());
      if (bad >= 0) {
        const auto origin = discount_box(job_.input->shape(), axes_, dates, ids).start;
        nonfinite_error("input.discount", spec_.discount, buffer[bad], slab_coordinates(bad, axes_, g.extent, origin));
      }
    }
    if (job_.sink->wants_input_sums())
      t.pending_sums = std::make_shared<std::future<InputSums>>(std::async(
          std::launch::async, [this, &slab, dates, ids, buffer, t] { return input_sums(slab, dates, ids, buffer, t.host); }));
    record(Stage::read, slab, t0);
    loaded_.push(t);
  }
}

// The checksums of the bytes just read for a slab (pipeline/input_sums.hpp):
// its discount box and the multBy rows it uses (date slabs all use the
// whole resident multBy, summed once). Reads members only: runs on helper threads.
template <class ExecSpace>
InputSums Pipeline<ExecSpace>::input_sums(const Slab& slab, Range dates, Range ids, const double* buffer,
                                          int host) const {
  const Region region("discount::input_sums");  // on the helper thread that takes the sums
  InputSums sums;
  sums.known = true;
  sums.disc = discount_sum(buffer, job_.input->shape(), axes_, dates, ids);
  const std::int64_t nums = plan_.request.nums;
  if (plan_.mult_per_slab) {
    sums.mult = multiplier_sum(host_mult_[host].data(), ids, nums);
  } else if (ids.begin == spec_.ids.begin && ids.end == spec_.ids.end) {
    sums.mult = whole_mult_sum_;
  } else {
    sums.mult = multiplier_sum(resident_mult_host_.data() + slab.ids.begin * nums, ids, nums);
  }
  return sums;
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
    t.settle_sums();  // before the kernel overwrites the staging buffer (host kernels work in place)
    const auto t0 = Clock::now();
    const Region region("discount::kernel");
    const Slab& slab = plan_.slabs[t.slab];
    const Geometry g = geometry(axes_, slab);
    double* data = copies ? device_slab_[t.device].data() : host_slab_[t.host].data();
    const double* mult = plan_.mult_per_slab ? (copies ? device_mult_[t.device].data() : host_mult_[t.host].data())
                                             : (copies ? resident_mult_device_.data() : resident_mult_host_.data());
    const ConstFlatView<ComputeMemory> mult_view(mult, static_cast<std::size_t>(slab.ids.size() * slab.nums));
    const SlabView<ComputeMemory> slab_view(data, g.extent[0], g.extent[1], g.extent[2]);
#ifdef DISCOUNT_HAVE_KOKKOSKERNELS
    if (blas_) apply_blas(exec, mult_view, ConstSlabView<ComputeMemory>(slab_view), slab_view);
    else
#endif
      apply_mdrange(exec, spec_.slicing, mult_view, ConstSlabView<ComputeMemory>(slab_view), slab_view,
                    g.mult_stride);
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
  const auto start = write_start_;
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
    const StageStats& written = stats(Stage::write);
    if (job_.progress) job_.progress({written.slabs, total_pending_, written.bytes, seconds_since(start), false});
    test_hold_.after_slab(written.slabs, [this] { return stop_requested(); });  // tests only (test_hooks.hpp)
  }
  // However the run ends (done, stopped, failed), the last writer to finish
  // gives the final figures, so the progress line ends once.
  std::lock_guard<std::mutex> lock(write_mutex_);
  if (++writers_done_ == writers_ && job_.progress) {
    const StageStats& written = stats(Stage::write);
    job_.progress({written.slabs, total_pending_, written.bytes, seconds_since(start), true});
  }
}

}  // namespace discount::pipeline_detail
