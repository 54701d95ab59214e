#include "io/input/input_checks.hpp"

#include <algorithm>
#include <set>

#include "common/error.hpp"
#include "common/sizes.hpp"
#include "io/hdf5/hdf5_handle.hpp"

namespace discount {

namespace {

std::string filter_name(H5Z_filter_t id, const char* stored) {
  switch (id) {
    case H5Z_FILTER_DEFLATE: return "gzip";
    case H5Z_FILTER_SHUFFLE: return "shuffle";
    case H5Z_FILTER_FLETCHER32: return "fletcher32";
    case H5Z_FILTER_SZIP: return "szip";
    case H5Z_FILTER_NBIT: return "nbit";
    case H5Z_FILTER_SCALEOFFSET: return "scaleoffset";
    default:
      return (stored && *stored ? std::string(stored) : std::string("unnamed")) + " (filter id " + std::to_string(id) +
             ")";
  }
}

std::string dims_text(const std::vector<hsize_t>& dims) { return h5::shape_string(dims); }

[[noreturn]] void damaged(const std::string& where, const std::string& what) {
  throw data_error(where + " has damaged or impossible storage metadata: " + what +
                   "; the file is likely damaged: check it with h5dump");
}

std::vector<std::string> check_filters(hid_t dcpl, const std::string& where) {
  std::vector<std::string> names;
  const int filters = H5Pget_nfilters(dcpl);
  if (filters < 0 || filters > H5Z_MAX_NFILTERS) damaged(where, "its filter pipeline cannot be read");
  for (int f = 0; f < filters; ++f) {
    unsigned flags = 0, config_flags = 0;
    std::size_t n_values = 0;
    char stored[64] = {};
    const H5Z_filter_t id =
        H5Pget_filter2(dcpl, static_cast<unsigned>(f), &flags, &n_values, nullptr, sizeof stored, stored, nullptr);
    if (id < 0) damaged(where, "filter " + std::to_string(f) + " of its pipeline cannot be read");
    const std::string filter = filter_name(id, stored);
    // Refused here rather than on the first chunk read, mid-run. Asking
    // H5Zfilter_avail first lets HDF5 load a plugin for it.
    if (H5Zfilter_avail(id) <= 0 || H5Zget_filter_info(id, &config_flags) < 0 ||
        !(config_flags & H5Z_FILTER_CONFIG_DECODE_ENABLED))
      throw data_error(where + " is stored with the HDF5 filter " + filter +
                       ", which this HDF5 library cannot decode (no such filter or plugin; see HDF5_PLUGIN_PATH)");
    names.push_back(filter);
  }
  return names;
}

// The chunk shape against the dataset's: every extent positive, none larger
// than a fixed dimension (HDF5 never writes that; a damaged layout message
// that says so made H5Dread crash).
void check_chunk_shape(hid_t dataset, const std::vector<hsize_t>& chunk, const std::vector<hsize_t>& dims,
                       const std::string& where) {
  std::vector<hsize_t> max_dims(dims.size());
  h5::Id space = h5::dataspace(H5Dget_space(dataset));
  if (!space || H5Sget_simple_extent_dims(space.get(), nullptr, max_dims.data()) < 0)
    damaged(where, "its dataspace cannot be read");
  for (std::size_t j = 0; j < dims.size(); ++j) {
    if (chunk[j] == 0) damaged(where, "chunk dimensions " + dims_text(chunk) + " hold a zero");
    if (max_dims[j] != H5S_UNLIMITED && chunk[j] > max_dims[j])
      damaged(where,
              "chunk dimensions " + dims_text(chunk) + " exceed the dataset's fixed dimensions " + dims_text(max_dims));
  }
}

// The chunk index against the shape: a sample of the first chunks it lists
// must sit on the chunk grid, inside the dataset and inside the file, and an
// unfiltered chunk must have exactly a chunk's bytes. Listing is linear in the
// chunk's index, so only the first ones are looked at; the count of all of
// them only when the grid is small enough to walk.
void check_chunk_index(hid_t dataset, const StorageFacts& s, const std::vector<hsize_t>& dims,
                       const std::string& where) {
  constexpr hsize_t kSample = 64;
  constexpr std::uint64_t kCountable = 1 << 16;
  h5::Id holder = h5::file(H5Iget_file_id(dataset));
  hsize_t file_size = 0;
  if (!holder || H5Fget_filesize(holder.get(), &file_size) < 0) file_size = 0;
  hsize_t listed = kSample;
  h5::Id space = h5::dataspace(H5Dget_space(dataset));  // HDF5 1.10 takes no H5S_ALL here
  if (s.chunks <= kCountable) {
    if (H5Dget_num_chunks(dataset, space.get(), &listed) < 0)
      damaged(where, "its chunk index cannot be read (" + h5::error_messages() + ")");
    if (listed > s.chunks)
      damaged(where, "its chunk index lists " + std::to_string(listed) + " chunks where chunks of " +
                         dims_text(s.chunk) + " allow at most " + std::to_string(s.chunks));
  }
  bool only_known_filters = true;
  for (const std::string& f : s.filters) only_known_filters &= f == "gzip" || f == "shuffle" || f == "fletcher32";
  std::vector<hsize_t> offset(dims.size());
  std::set<std::vector<hsize_t>> seen;  // a chunk listed twice: another one is missing
  for (hsize_t c = 0; c < std::min(listed, kSample); ++c) {
    unsigned mask = 0;
    haddr_t address = HADDR_UNDEF;
    hsize_t size = 0;
    if (H5Dget_chunk_info(dataset, space.get(), c, offset.data(), &mask, &address, &size) < 0) {
      if (s.chunks <= kCountable) damaged(where, "chunk " + std::to_string(c) + " of its index cannot be read");
      break;  // fewer chunks than the sample (not counted)
    }
    for (std::size_t j = 0; j < dims.size(); ++j)
      if (offset[j] % s.chunk[j] != 0 || offset[j] >= dims[j])
        damaged(where, "its chunk index holds a chunk at " + dims_text(offset) + ", off the grid of chunks " +
                           dims_text(s.chunk) + " in " + dims_text(dims));
    // HDF5 1.10 reads one of the two for both places, silently (found by the
    // fuzz test: a flipped byte of a B-tree key).
    if (!seen.insert(offset).second)
      damaged(where,
              "its chunk index lists the chunk at " + dims_text(offset) + " twice (so another chunk's entry is lost)");
    if (address == HADDR_UNDEF) continue;
    if (size == 0 || (file_size && (address >= file_size || size > file_size - address)))
      damaged(where, "chunk " + dims_text(offset) + " of " + std::to_string(size) + " bytes at byte " +
                         std::to_string(address) + " lies outside the file of " + std::to_string(file_size) +
                         " bytes (a truncated or damaged file)");
    if (s.filters.empty() && size != s.chunk_bytes)
      damaged(where, "unfiltered chunk " + dims_text(offset) + " has " + std::to_string(size) + " bytes, not " +
                         std::to_string(s.chunk_bytes));
    // gzip grows incompressible data by well under 1/16 plus a few bytes,
    // shuffle not at all, fletcher32 by 4 bytes: a larger stored chunk means
    // the chunk dimensions are not those it was written with.
    if (!s.filters.empty() && only_known_filters && size > s.chunk_bytes + s.chunk_bytes / 16 + 1024)
      damaged(where, "chunk " + dims_text(offset) + " stores " + std::to_string(size) + " bytes, more than " +
                         s.filters.front() + " makes of a chunk of " + dims_text(s.chunk) + " (" +
                         std::to_string(s.chunk_bytes) + " bytes)");
  }
}

// Contiguous or compact data: what HDF5 has allocated must be the dataset's
// size, inside the file.
void check_allocated(hid_t dataset, std::uint64_t bytes, const StorageFacts& s, const std::string& where) {
  H5D_space_status_t status = H5D_SPACE_STATUS_ERROR;
  if (H5Dget_space_status(dataset, &status) < 0) damaged(where, "its allocation status cannot be read");
  if (status != H5D_SPACE_STATUS_ALLOCATED || s.externals > 0) return;
  const hsize_t stored = H5Dget_storage_size(dataset);
  if (stored != bytes)
    damaged(where,
            "it stores " + std::to_string(stored) + " bytes where its shape and type need " + std::to_string(bytes));
  if (s.layout != H5D_CONTIGUOUS) return;
  h5::Id holder = h5::file(H5Iget_file_id(dataset));
  hsize_t file_size = 0;
  const haddr_t address = H5Dget_offset(dataset);
  if (!holder || H5Fget_filesize(holder.get(), &file_size) < 0 || address == HADDR_UNDEF) return;
  if (address >= file_size || bytes > file_size - address)
    throw data_error(where + " is truncated: its data ends at byte " + std::to_string(address + bytes) +
                     " of a file of " + std::to_string(file_size) + " bytes");
  // HDF5 reads nothing past the end of the space it allocated (the EOA its
  // superblock records); positional reads would, so the two must agree.
  haddr_t eoa = HADDR_UNDEF;
  if (H5Fget_eoa(holder.get(), &eoa) >= 0 && eoa != HADDR_UNDEF && (address >= eoa || bytes > eoa - address))
    damaged(where, "its data ends at byte " + std::to_string(address + bytes) +
                       ", past the end of the space the "
                       "file records as allocated (" +
                       std::to_string(eoa) + " bytes)");
}

}  // namespace

void check_float_layout(hid_t type, const std::string& where) {
  struct Ieee {
    std::size_t size, spos, epos, esize, mpos, msize, ebias;
  };
  static const Ieee formats[] = {{2, 15, 10, 5, 0, 10, 15}, {4, 31, 23, 8, 0, 23, 127}, {8, 63, 52, 11, 0, 52, 1023}};
  std::size_t spos = 0, epos = 0, esize = 0, mpos = 0, msize = 0;
  const std::size_t size = H5Tget_size(type);
  const bool fields = H5Tget_fields(type, &spos, &epos, &esize, &mpos, &msize) >= 0;
  const std::size_t ebias = H5Tget_ebias(type);
  for (const Ieee& f : formats)
    if (fields && f.size == size && f.spos == spos && f.epos == epos && f.esize == esize && f.mpos == mpos &&
        f.msize == msize && f.ebias == ebias && H5Tget_offset(type) == 0 && H5Tget_precision(type) == size * 8 &&
        H5Tget_norm(type) == H5T_NORM_IMPLIED)
      return;
  damaged(where, "its float type of " + std::to_string(size) + " bytes is not an IEEE 754 layout (exponent bias " +
                     std::to_string(ebias) + ", sign at bit " + std::to_string(spos) + ")");
}

StorageFacts check_storage(hid_t dataset, hid_t dcpl, const std::vector<hsize_t>& dims, std::size_t element_size,
                           const std::string& where) {
  StorageFacts s;
  s.layout = H5Pget_layout(dcpl);
  if (s.layout != H5D_CONTIGUOUS && s.layout != H5D_CHUNKED && s.layout != H5D_COMPACT && s.layout != H5D_VIRTUAL)
    damaged(where, "its storage layout cannot be read");
  s.filters = check_filters(dcpl, where);
  if (!s.filters.empty() && s.layout != H5D_CHUNKED)
    damaged(where, "it lists filters (" + s.filters.front() + ") on a layout that is not chunked");
  s.externals = H5Pget_external_count(dcpl);
  if (s.externals < 0) damaged(where, "its external storage list cannot be read");
  std::uint64_t elements = 1;
  for (hsize_t d : dims) elements *= d;
  if (s.layout == H5D_CHUNKED) {
    s.chunk.assign(dims.size(), 0);
    if (H5Pget_chunk(dcpl, static_cast<int>(dims.size()), s.chunk.data()) != static_cast<int>(dims.size()))
      damaged(where, "its chunk dimensions do not match its rank " + std::to_string(dims.size()));
    check_chunk_shape(dataset, s.chunk, dims, where);
    s.chunk_bytes = element_size;
    s.chunks = 1;
    for (std::size_t j = 0; j < dims.size(); ++j) {
      s.chunk_bytes *= s.chunk[j];
      s.chunks *= (dims[j] + s.chunk[j] - 1) / s.chunk[j];
    }
    if (elements > 0) check_chunk_index(dataset, s, dims, where);
  } else if (s.layout != H5D_VIRTUAL) {
    check_allocated(dataset, elements * element_size, s, where);
  }
  return s;
}

std::string chunk_advice(const StorageFacts& s, const std::string& dataset, const std::vector<hsize_t>& dims,
                         std::size_t element_size, const std::string& file) {
  constexpr std::uint64_t kSmall = 64 * 1024;
  if (s.layout != H5D_CHUNKED || s.chunk_bytes >= kSmall) return {};
  std::uint64_t whole = element_size;
  for (hsize_t d : dims) whole *= d;
  if (whole <= kSmall) return {};  // the whole dataset is smaller than one good chunk
  // Suggested: whole rows of the fastest axes, about 1 MiB, as the app reads them.
  std::vector<hsize_t> better(dims.size(), 1);
  std::uint64_t bytes = element_size;
  for (std::size_t j = dims.size(); j-- > 0;) {
    const std::uint64_t room = std::max<std::uint64_t>(1, (std::uint64_t{1} << 20) / bytes);
    better[j] = std::min<hsize_t>(dims[j], room);
    bytes *= better[j];
    if (better[j] < dims[j]) break;
  }
  std::string layout;
  for (std::size_t j = 0; j < better.size(); ++j) layout += (j ? "x" : "") + std::to_string(better[j]);
  std::string name = dataset;
  if (!name.empty() && name[0] == '/') name.erase(0, 1);
  return "'" + dataset + "' is stored in chunks of " + dims_text(s.chunk) + " (" + format_bytes(s.chunk_bytes) +
         " each, " + std::to_string(s.chunks) + " chunks): HDF5 reads will be slow; `h5repack -l " + name +
         ":CHUNK=" + layout + " " + file + " repacked.h5` (or -l " + name + ":CONTI) rewrites them";
}

std::vector<SubBox> chunk_bounded_boxes(const std::vector<hsize_t>& start, const std::vector<hsize_t>& count,
                                        const std::vector<hsize_t>& chunk, std::uint64_t max_chunks) {
  const std::size_t rank = start.size();
  if (chunk.size() != rank || rank == 0) return {{start, count}};
  const auto touched = [&](std::size_t j, hsize_t s, hsize_t c) -> std::uint64_t {
    return c == 0 ? 0 : (s + c - 1) / chunk[j] - s / chunk[j] + 1;
  };
  std::vector<SubBox> boxes;
  // Cut along axis `axis` the box whose axes before it are already one piece.
  auto cut = [&](auto&& self, std::size_t axis, SubBox box) -> void {
    std::uint64_t inner = 1;  // chunks of one chunk-layer along `axis`
    for (std::size_t j = axis + 1; j < rank; ++j) inner *= touched(j, box.start[j], box.count[j]);
    if (touched(axis, box.start[axis], box.count[axis]) * inner <= max_chunks) {
      boxes.push_back(box);
      return;
    }
    const std::uint64_t layers = std::max<std::uint64_t>(1, max_chunks / std::max<std::uint64_t>(inner, 1));
    const hsize_t end = box.start[axis] + box.count[axis];
    for (hsize_t s = box.start[axis]; s < end;) {
      const hsize_t stop = std::min<hsize_t>(end, (s / chunk[axis] + layers) * chunk[axis]);
      SubBox piece = box;
      piece.start[axis] = s;
      piece.count[axis] = stop - s;
      if (inner > max_chunks && axis + 1 < rank)
        self(self, axis + 1, piece);
      else
        boxes.push_back(piece);
      s = stop;
    }
  };
  cut(cut, 0, {start, count});
  return boxes;
}

}  // namespace discount
