#include "io/records/output_record.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/error.hpp"
#include "io/hdf5/hdf5_handle.hpp"
#include "io/hdf5/stored_type.hpp"
#include "io/input/input.hpp"
#include "io/records/checksum.hpp"
#include "io/posix/box.hpp"
#include "io/posix/posix_io.hpp"

namespace discount {

namespace {

// The record's HDF5 types: the packed little-endian layout of
// io/records/unit_record.cpp, so h5py reads what is written in place.
h5::Id compound(const std::vector<std::pair<const char*, hid_t>>& fields) {
  h5::Id type = h5::datatype(H5Tcreate(H5T_COMPOUND, kEntryBytes));
  std::size_t offset = 0;
  for (const auto& [name, member] : fields) {
    h5::check(H5Tinsert(type.get(), name, offset, member), "H5Tinsert");
    offset += H5Tget_size(member);
  }
  return type;
}
// HDF5's type macros expand to comma expressions, which nvcc's front end
// misreads inside a braced list: they are named once here.
h5::Id range_type() {
  const hid_t i64 = H5T_STD_I64LE, i32 = H5T_STD_I32LE, u32 = H5T_STD_U32LE, u64 = H5T_STD_U64LE;
  return compound({{"begin", i64},
                   {"end", i64},
                   {"run", i32},
                   {"flags", u32},
                   {"out_sum", u64},
                   {"in_disc", u64},
                   {"in_mult", u64},
                   {"reserved", u64},
                   {"commit", u64}});
}
h5::Id file_id_type() {
  const hid_t i64 = H5T_STD_I64LE, u64 = H5T_STD_U64LE;
  return compound({{"dev", u64},
                   {"ino", u64},
                   {"size", u64},
                   {"mtime_ns", i64},
                   {"ctime_ns", i64},
                   {"reserved0", u64},
                   {"reserved1", u64},
                   {"commit", u64}});
}

// "float64 big-endian", "int32", "a compound of 24 bytes".
std::string type_text(hid_t type) {
  const std::size_t size = H5Tget_size(type);
  const std::string bits = std::to_string(8 * size);
  const std::string order = H5Tget_order(type) == H5T_ORDER_BE ? " big-endian" : " little-endian";
  switch (H5Tget_class(type)) {
    case H5T_FLOAT:
      return "float" + bits + order + (H5Tequal(type, H5T_IEEE_F64BE) > 0 || size != 8 ? "" : " (not IEEE)");
    case H5T_INTEGER: return std::string(H5Tget_sign(type) == H5T_SGN_NONE ? "uint" : "int") + bits + order;
    default:
      return "a type of class " + std::to_string(static_cast<int>(H5Tget_class(type))) + " and " +
             std::to_string(size) + " bytes";
  }
}

struct Region {
  std::uint64_t offset, bytes;
};

// A contiguous, unfiltered, allocated dataset's bytes in the file, or what is wrong with it.
std::string contiguous_region(hid_t data, const std::string& name, std::uint64_t bytes, std::uint64_t file_size,
                              Region& region) {
  h5::Id dcpl = h5::plist(H5Dget_create_plist(data));
  if (!dcpl || H5Pget_layout(dcpl.get()) != H5D_CONTIGUOUS || H5Pget_nfilters(dcpl.get()) != 0 ||
      H5Pget_external_count(dcpl.get()) != 0)
    return "dataset " + name + " is not stored contiguously in the file";
  const haddr_t offset = H5Dget_offset(data);
  if (offset == HADDR_UNDEF) return "dataset " + name + " has no data in the file";
  if (H5Dget_storage_size(data) != bytes)
    return "dataset " + name + " stores " + std::to_string(H5Dget_storage_size(data)) + " bytes, expected " +
           std::to_string(bytes);
  if (offset + bytes > file_size)
    return "dataset " + name + " ends at byte " + std::to_string(offset + bytes) + ", past the file's end (" +
           std::to_string(file_size) + " bytes)";
  region = {offset, bytes};
  return {};
}

std::string record_dataset_damage(hid_t file, const char* name, hid_t want_type, hsize_t* count,
                                  std::uint64_t file_size, Region& region) {
  if (H5Lexists(file, name, H5P_DEFAULT) <= 0) return "dataset " + std::string(name) + " is missing";
  h5::Id data = h5::dataset(H5Dopen2(file, name, H5P_DEFAULT));
  h5::Id type = data ? h5::datatype(H5Dget_type(data.get())) : h5::Id{};
  if (!type) return "dataset " + std::string(name) + " cannot be opened";
  if (H5Tequal(type.get(), want_type) <= 0) return "dataset " + std::string(name) + " has another type than written";
  const auto dims = h5::dataset_dims(data.get());
  if (dims.size() != 1 || dims[0] == 0 || (*count != 0 && dims[0] != *count))
    return "dataset " + std::string(name) + " has shape " + h5::shape_string(dims);
  *count = dims[0];
  return contiguous_region(data.get(), name, dims[0] * kEntryBytes, file_size, region);
}

}  // namespace

bool create_record(hid_t file, std::size_t capacity) {
  return h5::zeroed_dataset(file, kRangesDataset, range_type().get(), capacity) &&
         h5::zeroed_dataset(file, kInputFileDataset, file_id_type().get(), 1);
}

bool has_old_progress(hid_t file) {
  return H5Lexists(file, kOldProgressDataset, H5P_DEFAULT) > 0 && H5Lexists(file, kRangesDataset, H5P_DEFAULT) <= 0;
}

std::string record_damage(hid_t file, const OutputSpec& spec, std::uint64_t file_size, RecordLayout& layout) {
  h5::QuietErrors quiet;
  const std::string cv = spec.dataset;
  if (H5Lexists(file, cv.c_str(), H5P_DEFAULT) <= 0) return "dataset " + cv + " is missing";
  h5::Id data = h5::dataset(H5Dopen2(file, cv.c_str(), H5P_DEFAULT));
  h5::Id type = data ? h5::datatype(H5Dget_type(data.get())) : h5::Id{};
  if (!type) return "dataset " + cv + " cannot be opened";
  if (H5Tequal(type.get(), stored_hdf5_type(spec.dtype)) <= 0)
    return "dataset " + cv + " has type " + type_text(type.get()) + ", expected " + stored_type_name(spec.dtype) +
           " little-endian";
  const auto dims = h5::dataset_dims(data.get());
  const auto want = discount_box({spec.dates, spec.ids, spec.nums}, spec.axes, {0, spec.dates}, {0, spec.ids}).dims;
  bool same = dims.size() == 3;
  for (int j = 0; same && j < 3; ++j) same = static_cast<std::int64_t>(dims[j]) == want[j];
  if (!same)
    return "dataset " + cv + " has shape " + h5::shape_string(dims) + ", expected " +
           h5::shape_string({hsize_t(want[0]), hsize_t(want[1]), hsize_t(want[2])});
  Region regions[3]{};
  const std::uint64_t bytes = static_cast<std::uint64_t>(want[0] * want[1] * want[2]) * stored_bytes(spec.dtype);
  // Split layout: cv is a virtual dataset; its parts are checked one by one
  // (io/records/output_parts.hpp) and the master holds only the record.
  h5::Id dcpl = h5::plist(H5Dget_create_plist(data.get()));
  const bool is_virtual = dcpl && H5Pget_layout(dcpl.get()) == H5D_VIRTUAL;
  if (is_virtual != (spec.layout == OutputLayout::split))
    return "dataset " + cv + (is_virtual ? " is split over part files" : " is not split over part files") +
           ", and output.layout is " + (spec.layout == OutputLayout::split ? "split" : "single");
  std::string damage = is_virtual ? std::string() : contiguous_region(data.get(), cv, bytes, file_size, regions[0]);
  if (!damage.empty()) return damage;
  hsize_t capacity = 0, one = 1;
  damage = record_dataset_damage(file, kRangesDataset, range_type().get(), &capacity, file_size, regions[1]);
  if (!damage.empty()) return damage;
  damage = record_dataset_damage(file, kInputFileDataset, file_id_type().get(), &one, file_size, regions[2]);
  if (!damage.empty()) return damage;
  for (int a = 0; a < 3; ++a)
    for (int b = a + 1; b < 3; ++b)
      if (regions[a].offset < regions[b].offset + regions[b].bytes &&
          regions[b].offset < regions[a].offset + regions[a].bytes)
        return "its datasets overlap in the file";
  layout = {regions[0].offset, regions[1].offset, regions[2].offset, static_cast<std::size_t>(capacity)};
  return {};
}

RangeTable read_table(int fd, const RecordLayout& layout, const std::string& path) {
  std::vector<std::uint8_t> raw(layout.capacity * kEntryBytes);
  pread_runs(fd, layout.ranges_offset, {{0, static_cast<std::int64_t>(raw.size())}}, raw.data(), 1,
             "reading the record of '" + path + "'");
  std::vector<std::optional<DoneRange>> slots(layout.capacity);
  for (std::size_t s = 0; s < layout.capacity; ++s) slots[s] = decode_range(&raw[s * kEntryBytes]);
  return RangeTable(std::move(slots));
}

std::optional<InputFileId> read_file_id(int fd, const RecordLayout& layout) {
  std::uint8_t raw[kEntryBytes] = {};
  if (::pread(fd, raw, kEntryBytes, static_cast<off_t>(layout.file_id_offset)) != static_cast<ssize_t>(kEntryBytes))
    return std::nullopt;
  return decode_file_id(raw);
}

void write_slot(int fd, const RecordLayout& layout, std::size_t slot, const std::optional<DoneRange>& range,
                const std::string& path) {
  std::uint8_t raw[kEntryBytes] = {};
  if (range) encode_range(*range, raw);
  pwrite_runs(fd, layout.ranges_offset, {{static_cast<std::int64_t>(slot), 1}}, raw, kEntryBytes,
              "recording progress in '" + path + "'");
}

void write_file_id(int fd, const RecordLayout& layout, const InputFileId& id, const std::string& path) {
  std::uint8_t raw[kEntryBytes] = {};
  encode_file_id(id, raw);
  pwrite_runs(fd, layout.file_id_offset, {{0, 1}}, raw, kEntryBytes, "recording the input in '" + path + "'");
}

InputFileId input_file_id(const std::string& path) {
  InputFileId id;
  struct stat st {};
  if (path.empty() || ::stat(path.c_str(), &st) != 0) return id;
  id.dev = static_cast<std::uint64_t>(st.st_dev);
  id.ino = static_cast<std::uint64_t>(st.st_ino);
  id.size = static_cast<std::uint64_t>(st.st_size);
  id.mtime_ns = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  id.ctime_ns = static_cast<std::int64_t>(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec;
  return id;
}

InputFileId input_files_id(const OutputSpec& spec) {
  if (spec.input_files.size() <= 1) return input_file_id(spec.input_file);
  InputFileId folded;
  std::uint64_t where = 1469598103934665603ull, when = 1469598103934665603ull;
  const auto mix = [](std::uint64_t& hash, std::uint64_t value) {
    for (int b = 0; b < 8; ++b) hash = (hash ^ ((value >> (8 * b)) & 0xff)) * 1099511628211ull;
  };
  for (const auto& path : spec.input_files) {
    const InputFileId id = input_file_id(path);
    mix(where, id.dev);
    mix(where, id.ino);
    mix(when, static_cast<std::uint64_t>(id.mtime_ns));
    folded.size += id.size;
    folded.ctime_ns = std::max(folded.ctime_ns, id.ctime_ns);
  }
  folded.dev = where;
  folded.ino = 0;
  folded.mtime_ns = static_cast<std::int64_t>(when & 0x7fffffffffffffffull);
  return folded;
}

std::string input_files_text(const OutputSpec& spec) {
  if (spec.input_files.size() <= 1) return "input.file '" + spec.input_file + "'";
  return "input.file list ('" + spec.input_file + "' and " + std::to_string(spec.input_files.size() - 1) + " more)";
}

std::vector<std::size_t> failed_output_sums(const OutputSpec& spec, const RangeTable& table, std::uint64_t piece_bytes,
                                            const std::vector<std::int64_t>& bounds, const UnitReader& read) {
  const bool by_date = spec.chunk_axis == Axis::date;
  const std::int64_t unit_elements = (by_date ? spec.ids : spec.dates) * spec.nums;
  const std::int64_t per_piece =
      std::max<std::int64_t>(1, static_cast<std::int64_t>(piece_bytes / sizeof(double)) / unit_elements);
  std::vector<double> buffer;
  std::vector<std::size_t> failed;
  for (std::size_t s = 0; s < table.capacity(); ++s) {
    const auto& range = table.slots()[s];
    if (!range) continue;
    std::uint64_t sum = 0;
    for (std::int64_t u = range->begin; u < range->end;) {
      // Pieces end at the data files' bounds: each read lies in one file.
      std::int64_t stop = std::min(range->end, u + per_piece);
      for (auto b : bounds)
        if (b > u && b < stop) stop = b;
      const Range units{u, stop};
      const FileBox box = discount_box({spec.dates, spec.ids, spec.nums}, spec.axes,
                                       by_date ? units : Range{0, spec.dates}, by_date ? Range{0, spec.ids} : units);
      buffer.resize(static_cast<std::size_t>(units.size() * unit_elements));
      read(units, buffer.data());  // as stored: float32 values packed in the buffer's first half
      sum += spec.dtype == OutputType::float32 ? box_sum(reinterpret_cast<const float*>(buffer.data()), box.dims,
                                                         box.start, box.count, SumKey::output)
                                               : box_sum(buffer.data(), box.dims, box.start, box.count, SumKey::output);
      u = stop;
    }
    if (sum != range->out_sum) failed.push_back(s);
  }
  return failed;
}

std::vector<std::size_t> failed_input_sums(const OutputSpec& spec, const RangeTable& table) {
  std::vector<std::size_t> failed;
  for (std::size_t s = 0; s < table.capacity(); ++s) {
    const auto& range = table.slots()[s];
    if (!range) continue;
    if (!(range->flags & kHasInputSums) || !spec.input_sums) {
      failed.push_back(s);
      continue;
    }
    const InputSums now = spec.input_sums(range->begin, range->end);
    if (!now.known || now.disc != range->in_disc || now.mult != range->in_mult) failed.push_back(s);
  }
  return failed;
}

std::uint64_t file_size(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<std::uint64_t>(st.st_size) : 0;
}

std::string units_text(std::int64_t n, Axis axis) { return std::to_string(n) + " " + axis_name(axis) + "(s)"; }

std::int64_t units_of_slots(const RangeTable& table, const std::vector<std::size_t>& slots) {
  std::int64_t n = 0;
  for (auto s : slots)
    if (table.slots()[s]) n += table.slots()[s]->end - table.slots()[s]->begin;
  return n;
}

}  // namespace discount
