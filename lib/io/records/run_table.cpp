#include "io/records/run_table.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <ctime>

#include "common/host.hpp"
#include "io/hdf5/hdf5_handle.hpp"
#include "io/posix/posix_io.hpp"

namespace discount {

namespace {

// The run table: one fixed-size record per run, allocated at creation and
// then written in place like the done ranges (io/records/output_record.hpp), never
// through HDF5.
constexpr const char* kRuns = "discount_app/runs";
constexpr int kMaxRun = 65535;
constexpr std::size_t kRecordBytes = 128;
// A record's fields: name, byte offset, size (strings NUL-padded; integers
// and the float little-endian, whatever the host).
struct RecordField {
  const char* name;
  std::size_t offset, size;
};
constexpr RecordField kRun{"run", 0, 4}, kRanks{"ranks", 4, 4}, kStart{"start_time", 8, 24}, kEnd{"end_time", 32, 24},
    kHost{"host", 56, 64}, kSeconds{"seconds", 120, 8};

// The run table's HDF5 type: the packed little-endian layout above, so the
// bytes written in place are what h5py reads as a compound.
h5::Id run_record_type() {
  h5::Id type = h5::datatype(H5Tcreate(H5T_COMPOUND, kRecordBytes));
  auto text = [](std::size_t size) {
    h5::Id t = h5::datatype(H5Tcopy(H5T_C_S1));
    h5::check(H5Tset_size(t.get(), size), "H5Tset_size");
    h5::check(H5Tset_strpad(t.get(), H5T_STR_NULLPAD), "H5Tset_strpad");
    return t;
  };
  h5::check(H5Tinsert(type.get(), kRun.name, kRun.offset, H5T_STD_I32LE), "H5Tinsert");
  h5::check(H5Tinsert(type.get(), kRanks.name, kRanks.offset, H5T_STD_I32LE), "H5Tinsert");
  for (const RecordField& f : {kStart, kEnd, kHost})
    h5::check(H5Tinsert(type.get(), f.name, f.offset, text(f.size).get()), "H5Tinsert");
  h5::check(H5Tinsert(type.get(), kSeconds.name, kSeconds.offset, H5T_IEEE_F64LE), "H5Tinsert");
  return type;
}

void put_le(std::uint8_t* at, std::uint64_t value, std::size_t bytes) {
  for (std::size_t b = 0; b < bytes; ++b) at[b] = static_cast<std::uint8_t>(value >> (8 * b));
}
std::uint64_t get_le(const std::uint8_t* at, std::size_t bytes) {
  std::uint64_t value = 0;
  for (std::size_t b = 0; b < bytes; ++b) value |= std::uint64_t{at[b]} << (8 * b);
  return value;
}
void put_text(std::uint8_t* record, const RecordField& f, const std::string& text) {
  std::memcpy(record + f.offset, text.data(), std::min(text.size(), f.size));
}
std::string get_text(const std::uint8_t* record, const RecordField& f) {
  const char* at = reinterpret_cast<const char*>(record + f.offset);
  return std::string(at, ::strnlen(at, f.size));
}

// The run table's raw records (kRecordBytes each); empty when the file has none.
std::vector<std::uint8_t> read_run_table(hid_t file) {
  if (H5Lexists(file, kRuns, H5P_DEFAULT) <= 0) return {};
  h5::Id runs = h5::dataset(H5Dopen2(file, kRuns, H5P_DEFAULT));
  h5::Id type = runs ? h5::datatype(H5Dget_type(runs.get())) : h5::Id{};
  if (!type || H5Tget_size(type.get()) != kRecordBytes) return {};
  const auto dims = h5::dataset_dims(runs.get());
  if (dims.size() != 1) return {};
  std::vector<std::uint8_t> raw(static_cast<std::size_t>(dims[0]) * kRecordBytes);
  if (H5Dread(runs.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, raw.data()) < 0) return {};
  return raw;
}

}  // namespace

// The run table's offset and the number after its last recorded run.
std::pair<std::uint64_t, int> run_table_state(hid_t file) {
  const auto table = read_run_table(file);
  if (table.empty()) return {0, 1};
  h5::Id runs = h5::dataset(H5Dopen2(file, kRuns, H5P_DEFAULT));
  const haddr_t at = runs ? H5Dget_offset(runs.get()) : HADDR_UNDEF;
  if (at == HADDR_UNDEF) return {0, 1};
  int last = 0;
  for (std::size_t r = 0; r + kRecordBytes <= table.size(); r += kRecordBytes)
    last = std::max(last, static_cast<int>(static_cast<std::int32_t>(get_le(&table[r] + kRun.offset, 4))));
  return {at, std::min(last + 1, kMaxRun)};
}

std::uint64_t create_run_table(hid_t file) {
  h5::Id runs = h5::zeroed_dataset(file, kRuns, run_record_type().get(), kRunSlots);
  const haddr_t at = runs ? H5Dget_offset(runs.get()) : HADDR_UNDEF;
  return at == HADDR_UNDEF ? 0 : at;
}

void write_run_entry(int fd, std::uint64_t offset, const RunRecord& run, const std::string& path) {
  std::uint8_t record[kRecordBytes] = {};
  put_le(record + kRun.offset, static_cast<std::uint32_t>(run.run), 4);
  put_le(record + kRanks.offset, static_cast<std::uint32_t>(run.ranks), 4);
  put_text(record, kStart, run.start_time);
  put_text(record, kEnd, utc_now());
  static const std::string host = host_name();
  put_text(record, kHost, host);
  std::uint64_t bits = 0;
  std::memcpy(&bits, &run.seconds, sizeof bits);
  put_le(record + kSeconds.offset, bits, 8);
  const std::int64_t slot = std::min(run.run, kRunSlots) - 1;
  pwrite_runs(fd, offset, {{slot, 1}}, record, kRecordBytes, "recording the run in '" + path + "'");
}

std::vector<RunRecord> read_run_records(hid_t file) {
  std::vector<RunRecord> records;
  const auto table = read_run_table(file);
  for (std::size_t r = 0; r + kRecordBytes <= table.size(); r += kRecordBytes) {
    const std::uint8_t* record = &table[r];
    RunRecord run;
    run.run = static_cast<std::int32_t>(get_le(record + kRun.offset, 4));
    if (run.run <= 0) continue;
    run.ranks = static_cast<std::int32_t>(get_le(record + kRanks.offset, 4));
    run.start_time = get_text(record, kStart);
    run.end_time = get_text(record, kEnd);
    run.host = get_text(record, kHost);
    const std::uint64_t bits = get_le(record + kSeconds.offset, 8);
    std::memcpy(&run.seconds, &bits, sizeof bits);
    records.push_back(run);
  }
  return records;
}

}  // namespace discount
