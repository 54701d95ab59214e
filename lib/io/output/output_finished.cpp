// FileOutput's checks of what an earlier run wrote, beyond the record's own
// (output_resume.cpp). A partial written under input.nonfinite's other value
// is resumed when that cannot change its done ranges.
//
// A finished split output before a rerun says
// "nothing to do": every part is there and is the part the master maps, and
// is the very file the master recorded when it was published (its identity),
// or else holds the values its done ranges' checksums say. A part missing,
// swapped or changed refuses the rerun (73) naming the part.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <algorithm>
#include <cmath>
#include <iostream>

#include "common/error.hpp"
#include "io/output/output.hpp"
#include "io/records/output_parts.hpp"
#include "io/records/output_record.hpp"

namespace discount {

void FileOutput::check_finished_parts() {
  if (!existing_ || existing_->finished.parts_folder.empty()) return;
  const auto refuse = [&](const std::string& why) {
    throw create_error("output.file '" + spec_.path + "': " + why + "; set output.overwrite: true to compute it again");
  };
  h5::QuietErrors quiet;
  RecordLayout layout;
  std::string recorded;
  bool sums = false;
  {
    h5::Id file = h5::file(H5Fopen(spec_.path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
    if (!file || !read_split_layout(file.get())) refuse("its part folder or bounds are unreadable");
    h5::Id group = h5::group(H5Gopen2(file.get(), kOutputGroup, H5P_DEFAULT));
    if (group && H5Aexists(group.get(), "part_ids") > 0) {
      try {
        recorded = h5::read_string_attribute(group.get(), "part_ids");
      } catch (const Error&) {}
    }
    sums = H5Lexists(file.get(), kRangesDataset, H5P_DEFAULT) > 0 &&
           record_damage(file.get(), spec_, file_size(spec_.path), layout).empty();
  }
  std::string damage;
  const auto changed = parts_.changed_parts(recorded, damage);
  if (!damage.empty()) refuse(damage);
  if (changed.empty()) return;
  // Another file than the one published (copied, swapped or written since):
  // its values against the done ranges' checksums.
  if (!sums)
    refuse("its part '" + parts_.part_path(changed.front()) +
           "' is not the file it recorded, and it keeps no checksums to check it by");
  parts_.open(0, O_RDONLY);
  UniqueFd fd(::open(spec_.path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) refuse(std::string("it cannot be read (") + std::strerror(errno) + ")");
  const RangeTable table = read_table(fd.get(), layout, spec_.path);
  const auto failed = failed_output_sums(spec_, table, piece_bytes(), parts_.bounds(),
                                         [this](Range units, double* buffer) { parts_.read_units(units, buffer); });
  parts_.close();
  if (!failed.empty())
    refuse("its part '" + parts_.part_path(parts_.file_of(table.slots()[failed.front()]->begin)) +
           "' holds other values than the output recorded (a part swapped, replaced or changed)");
}

// From propagate to error, the done ranges must hold finite values only (a
// NaN/Inf there came from a NaN/Inf input, or a float32 overflow, which error
// refuses); from error to propagate they stand as they are.
void FileOutput::check_nonfinite_change() const {
  const std::string partial = partial_path();
  if (!spec_.check_finite) {
    std::cerr << "discount_app: note: '" << partial << "' was written under input.nonfinite: error; its done ranges "
              << "stand under propagate" << std::endl;
    return;
  }
  const bool by_date = spec_.chunk_axis == Axis::date;
  const std::int64_t unit_elements = (by_date ? spec_.ids : spec_.dates) * spec_.nums;
  const std::int64_t per_piece = std::max<std::int64_t>(1, (std::int64_t{4} << 20) / unit_elements);
  std::vector<double> buffer;
  for (const auto& range : record_.table().slots()) {
    if (!range) continue;
    for (std::int64_t u = range->begin; u < range->end;) {
      std::int64_t stop = std::min(range->end, u + per_piece);
      for (auto b : parts_.bounds())
        if (b > u && b < stop) stop = b;
      const std::size_t n = static_cast<std::size_t>((stop - u) * unit_elements);
      buffer.resize(n);
      parts_.read_units({u, stop}, buffer.data());
      const auto* narrow = reinterpret_cast<const float*>(buffer.data());
      for (std::size_t j = 0; j < n; ++j)
        if (spec_.dtype == OutputType::float32 ? !std::isfinite(narrow[j]) : !std::isfinite(buffer[j]))
          throw create_error("'" + partial + "' was written under input.nonfinite: propagate and its done " +
                             axis_name(spec_.chunk_axis) + "s [" + std::to_string(u) + ", " + std::to_string(stop) +
                             ") hold NaN/Inf, which input.nonfinite: error refuses; rerun with --restart, or keep " +
                             "input.nonfinite: propagate");
      u = stop;
    }
  }
  std::cerr << "discount_app: note: '" << partial << "' was written under input.nonfinite: propagate; its done ranges "
            << "hold finite values only and stand under error" << std::endl;
}

}  // namespace discount
