// FileOutput's checks before it resumes a partial or finds an output
// complete (docs/errors.md, "Resume"): the done ranges' output bytes and,
// when the input file is not the one recorded, their input bytes, against
// the checksums recorded when they were written.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>

#include "common/error.hpp"
#include "io/output/identity.hpp"
#include "io/output/output.hpp"
#include "io/output/output_existing.hpp"
#include "io/records/output_parts.hpp"
#include "io/records/run_table.hpp"
#include "io/records/output_record.hpp"

namespace discount {

// Why the partial cannot be resumed, naming what changed where it can.
std::string FileOutput::resume_refusal() const {
  const std::string stored = existing_ ? existing_->partial.identity : std::string();
  const std::string change = stored.empty() ? std::string{} : identity_change(stored, spec_.identity);
  if (!change.empty()) return "belongs to a different job: " + change;
  return "belongs to a different job (config or inputs changed) or is unreadable";
}

// The split layout's folder and bounds, as the partial records them.
bool FileOutput::read_split_layout(hid_t file) {
  parts_.use_single();
  if (spec_.layout != OutputLayout::split) return true;
  h5::Id group = h5::group(H5Gopen2(file, kOutputGroup, H5P_DEFAULT));
  return group && parts_.adopt(group.get());
}

bool FileOutput::try_resume() {
  const std::string partial = partial_path();
  const std::string stored =
      existing_ && !spec_.attach ? existing_->partial.fingerprint : stored_output(partial).fingerprint;
  const bool nonfinite_changed =
      !spec_.fingerprint_other_nonfinite.empty() && stored == spec_.fingerprint_other_nonfinite;
  if (stored != spec_.fingerprint && !nonfinite_changed) return false;
  {
    h5::QuietErrors quiet;
    h5::Id file = h5::file(H5Fopen(partial.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
    if (!file) return false;
    if (has_old_progress(file.get()))
      throw create_error("'" + partial + "' comes from an older version of discount_app (one progress byte per " +
                         axis_name(spec_.chunk_axis) + "); rerun with --restart to start over");
    const std::string damage = record_damage(file.get(), spec_, file_size(partial), record_.layout());
    if (!damage.empty()) throw create_error("'" + partial + "' is damaged: " + damage + "; rerun with --restart");
    if (!read_split_layout(file.get()))
      throw create_error("'" + partial +
                         "' is damaged: its part folder or bounds are unreadable; rerun with --restart");
    // This run takes the number after the last recorded one (every rank reads
    // the same table: the owner writes its record only in open_collective).
    std::tie(runs_offset_, run_) = run_table_state(file.get());
  }
  parts_.open(record_.layout().data_offset);
  UniqueFd fd(::open(partial.c_str(), spec_.attach ? O_RDONLY | O_CLOEXEC : O_RDWR | O_CLOEXEC));
  if (fd.get() < 0) return false;
  record_.load(fd.get());
  if (!spec_.attach) check_resume(fd.get());
  if (nonfinite_changed && !spec_.attach) check_nonfinite_change();
  state_ = State::resumed;
  return true;
}

// Rank 0, before a resume: the done ranges' output bytes against their
// checksums, then, when the input file is not the one the partial last saw,
// their input bytes; what fails is recomputed. Then the room left in the record.
void FileOutput::check_resume(int fd) {
  const auto damaged = failed_output_sums(spec_, record_.table(), piece_bytes(), parts_.bounds(),
                                          [this](Range units, double* buffer) { parts_.read_units(units, buffer); });
  if (!damaged.empty()) {
    std::cerr << "discount_app: warning: '" << partial_path() << "': " << damaged.size()
              << " done range(s) of the partial ("
              << units_text(units_of_slots(record_.table(), damaged), spec_.chunk_axis)
              << ") failed their checksum and are recomputed" << std::endl;
    record_.drop_slots(fd, damaged);
  }
  check_resume_inputs(fd);
  record_.check_room();
}

// When the input is not the one the partial last saw, the done ranges whose
// input bytes changed are recomputed; the input is recorded as seen now.
void FileOutput::check_resume_inputs(int fd) {
  const InputFileId now = input_files_id(spec_);
  const auto was = read_file_id(fd, record_.layout());
  if (was && *was == now) return;
  const auto changed = failed_input_sums(spec_, record_.table());
  if (!changed.empty()) {
    std::cerr << "discount_app: warning: " << input_files_text(spec_) << " is "
              << (was ? file_id_change(*was, now) : std::string("not recorded in the partial")) << ": the input of "
              << changed.size() << " done range(s) ("
              << units_text(units_of_slots(record_.table(), changed), spec_.chunk_axis)
              << ") differs from what they were computed from, and they are recomputed" << std::endl;
    record_.drop_slots(fd, changed);
  }
  write_file_id(fd, record_.layout(), now, partial_path());
  if (::fdatasync(fd) != 0) throw io_error("flushing '" + partial_path() + "': " + std::strerror(errno));
}

// A finished output of this job: when its input file is not the one it
// recorded, the input under every range is read again, and other bytes
// refuse the "nothing to do".
void FileOutput::check_finished_inputs() {
  h5::QuietErrors quiet;
  RecordLayout layout;
  {
    h5::Id file = h5::file(H5Fopen(spec_.path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
    // An output of an older version keeps no checksums: nothing to compare.
    if (!file || H5Lexists(file.get(), kRangesDataset, H5P_DEFAULT) <= 0) return;
    if (!record_damage(file.get(), spec_, file_size(spec_.path), layout).empty()) return;
  }
  UniqueFd fd(::open(spec_.path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return;
  const InputFileId now = input_files_id(spec_);
  const auto was = read_file_id(fd.get(), layout);
  if (was && *was == now) return;
  const RangeTable table = read_table(fd.get(), layout, spec_.path);
  const auto changed = failed_input_sums(spec_, table);
  if (!changed.empty())
    throw create_error(
        "output.file '" + spec_.path + "' was computed from other input bytes: " + input_files_text(spec_) + " is " +
        (was ? file_id_change(*was, now) : std::string("not recorded")) + ", and the input of " +
        units_text(units_of_slots(table, changed), spec_.chunk_axis) + " of " + std::to_string(unit_count()) +
        " differs though its sampled content matches; set output.overwrite: true to compute it again");
  // The same bytes: remember this file, so the next rerun need not read it again.
  if (!spec_.owner) return;
  UniqueFd rw(::open(spec_.path.c_str(), O_RDWR | O_CLOEXEC));
  if (rw.get() < 0) return;
  try {
    write_file_id(rw.get(), layout, now, spec_.path);
    ::fdatasync(rw.get());
  } catch (const Error&) {}
}

}  // namespace discount
