// output.mode: checksum, a sink with no file. Per selected date: the float64
// sum of cv (for reading) and the wrapping uint64 sum of cv's bit patterns
// (exact, order independent: NumPy recomputes it as cv.view(np.uint64).sum()).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "io/output/output_sink.hpp"

namespace discount {

class ChecksumOutput final : public OutputSink {
 public:
  ChecksumOutput(std::array<Axis, 3> axes, std::int64_t dates, std::int64_t ids, std::int64_t nums);
  bool slab_done(const Slab&) const override { return false; }
  void write_slab(const Slab& slab, const double* buffer, const InputSums& input = {}) override;
  std::string describe() const override { return "checksum sink (no file)"; }
  // Adds up every rank's partial sums, then gives the job's.
  std::optional<OutputChecksums> combined_checksums(const RankSums& sum) override;
  const std::vector<double>& date_sums() const { return sums_; }
  const std::vector<std::uint64_t>& date_bits() const { return bits_; }
  std::uint64_t global_bits() const;

 private:
  std::array<Axis, 3> axes_;
  std::int64_t dates_, ids_, nums_;
  std::vector<double> sums_;
  std::vector<std::uint64_t> bits_;
};

}  // namespace discount
