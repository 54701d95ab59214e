#include "io/input_list.hpp"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "io/dimension_names.hpp"
#include "io/hdf5_handle.hpp"
#include "io/input_files.hpp"
#include "io/vds_names.hpp"

namespace discount {

namespace {

struct Part {
  std::string path, absolute;  // as listed; with every symlink resolved (the virtual mapping's source)
  std::vector<hsize_t> disc_dims, mult_dims;  // mult_dims empty: no multBy in this file
  h5::Id disc_type, mult_type;
  std::vector<std::string> disc_names, mult_names;
  std::string content, stat;
};

std::string where(const Part& p, const std::string& key, const std::string& name) {
  return key + ": dataset '" + name + "' in '" + p.path + "' (input.file list)";
}

// Shape, type and dimension names of one dataset of a listed file; false when absent and `optional`.
bool inspect(hid_t file, const Part& p, const std::string& name, const std::string& key, int rank, bool optional,
             std::vector<hsize_t>& dims, h5::Id& type, std::vector<std::string>& names) {
  if (H5Lexists(file, name.c_str(), H5P_DEFAULT) <= 0) {
    if (optional) return false;
    throw missing_error(key + ": dataset '" + name + "' not found in '" + p.path + "' (input.file list)" +
                        h5::dataset_candidates(file, rank));
  }
  h5::Id ds = h5::dataset(H5Dopen2(file, name.c_str(), h5::input_dataset_access().get()));
  if (!ds) throw missing_error(where(p, key, name) + " cannot be opened as a dataset");
  dims = h5::dataset_dims(ds.get());
  if (static_cast<int>(dims.size()) != rank)
    throw data_error(where(p, key, name) + " has rank " + std::to_string(dims.size()) + " " + h5::shape_string(dims) +
                     ", expected rank " + std::to_string(rank));
  type = h5::datatype(H5Dget_type(ds.get()));
  names = dimension_names(ds.get());
  return true;
}

// A private folder under $TMPDIR (or /tmp), removed with what it holds.
class TempFolder {
 public:
  TempFolder() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base && *base ? base : "/tmp") + "/discount_app-inputs-XXXXXX";
    std::vector<char> text(pattern.begin(), pattern.end());
    text.push_back('\0');
    if (!::mkdtemp(text.data()))
      throw io_error("input.file list: cannot make a temporary folder for its virtual dataset ('" + pattern +
                     "': " + std::strerror(errno) + "); set TMPDIR to a writable folder");
    path_ = text.data();
  }
  TempFolder(const TempFolder&) = delete;
  TempFolder& operator=(const TempFolder&) = delete;
  ~TempFolder() {
    ::unlink(file().c_str());
    ::rmdir(path_.c_str());
  }
  std::string file() const { return path_ + "/inputs.h5"; }

 private:
  std::string path_;
};

// One virtual dataset at `name` in `vds` mapping each part's dataset at its
// offset along axis `along` (-1: the first part's whole dataset only).
void write_virtual(hid_t vds, const std::string& name, const std::vector<const Part*>& parts,
                   const std::vector<std::vector<hsize_t>>& dims, hid_t type, int along) {
  std::vector<hsize_t> total = dims.front();
  if (along >= 0) {
    total[static_cast<std::size_t>(along)] = 0;
    for (const auto& d : dims) total[static_cast<std::size_t>(along)] += d[static_cast<std::size_t>(along)];
  }
  const int rank = static_cast<int>(total.size());
  h5::Id space = h5::dataspace(H5Screate_simple(rank, total.data(), nullptr));
  h5::Id dcpl = h5::plist(H5Pcreate(H5P_DATASET_CREATE));
  hsize_t offset = 0;
  for (std::size_t f = 0; f < parts.size(); ++f) {
    std::vector<hsize_t> start(static_cast<std::size_t>(rank), 0);
    if (along >= 0) start[static_cast<std::size_t>(along)] = offset;
    h5::Id source = h5::dataspace(H5Screate_simple(rank, dims[f].data(), nullptr));
    h5::check(H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, start.data(), nullptr, dims[f].data(), nullptr),
              "H5Sselect_hyperslab");
    h5::check(H5Pset_virtual(dcpl.get(), space.get(), vds_escape(parts[f]->absolute).c_str(),
                                 vds_escape(name).c_str(), source.get()),
              "H5Pset_virtual");
    if (along >= 0) offset += dims[f][static_cast<std::size_t>(along)];
  }
  h5::check(H5Sselect_all(space.get()), "H5Sselect_all");
  h5::Id lcpl = h5::plist(H5Pcreate(H5P_LINK_CREATE));
  h5::check(H5Pset_create_intermediate_group(lcpl.get(), 1), "H5Pset_create_intermediate_group");
  h5::Id ds = h5::dataset(H5Dcreate2(vds, name.c_str(), type, space.get(), lcpl.get(), dcpl.get(), H5P_DEFAULT));
  if (!ds) throw io_error("input.file list: cannot write the virtual dataset '" + name + "' (" + h5::error_messages() + ")");
}

class ListInput final : public InputSource {
 public:
  ListInput(std::vector<Part> parts, Axis along, std::unique_ptr<TempFolder> folder,
            std::unique_ptr<InputSource> inner)
      : parts_(std::move(parts)), along_(along), folder_(std::move(folder)), inner_(std::move(inner)) {
    shape_ = inner_->shape();
    axes_ = inner_->axes();
    multiplier_axes_ = inner_->multiplier_axes();
  }
  ~ListInput() override { inner_.reset(); }  // closes the virtual file before its folder goes
  void read_discount(Range dates, Range ids, double* buffer) override { inner_->read_discount(dates, ids, buffer); }
  bool visits_as_read() const override { return inner_->visits_as_read(); }
  void read_discount_visited(Range dates, Range ids, double* buffer, const PieceVisitor& visit) override {
    inner_->read_discount_visited(dates, ids, buffer, visit);
  }
  bool reads_ranges() const override { return inner_->reads_ranges(); }
  void read_discount_range(Range dates, Range ids, std::int64_t first, std::int64_t count, double* buffer) override {
    inner_->read_discount_range(dates, ids, first, count, buffer);
  }
  void read_multiplier(Range ids, double* buffer) override { inner_->read_multiplier(ids, buffer); }
  std::string describe() const override {
    std::string files;
    for (const Part& p : parts_) files += (files.empty() ? "" : ", ") + p.path + " " + h5::shape_string(p.disc_dims);
    return std::to_string(parts_.size()) + " files along " + axis_name(along_) + " (" + files +
           ") as one virtual dataset: " + inner_->describe();
  }
  std::string identity() const override {
    std::string text = "input.file list along " + std::string(axis_name(along_));
    for (const Part& p : parts_)
      text += "; " + p.content + " " + h5::shape_string(p.disc_dims) + (p.mult_dims.empty() ? "" : " multBy " +
              h5::shape_string(p.mult_dims));
    return text + "; axes " + axes_text(axes_.data(), 3) + (multiplier_axes_[0] == Axis::num ? ", multBy [num,id]" : "");
  }
  std::string file_stat() const override {
    std::string text;
    for (const Part& p : parts_) text += (text.empty() ? "" : ";") + p.stat;
    return text;
  }
  bool may_hold_nonfinite() const override { return inner_->may_hold_nonfinite(); }
  std::uint64_t read_memory_bytes() const override { return inner_->read_memory_bytes(); }
  std::string read_advice() const override { return inner_->read_advice(); }
  std::string hdf5_file() const override { return inner_->hdf5_file(); }

 private:
  std::vector<Part> parts_;
  Axis along_;
  std::unique_ptr<TempFolder> folder_;
  std::unique_ptr<InputSource> inner_;
};

}  // namespace

std::unique_ptr<InputSource> open_input_list(const InputConfig& config) {
  h5::QuietErrors quiet;
  std::vector<Part> parts;
  for (const std::string& path : config.files) {
    Part p;
    p.path = path;
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0)
      throw missing_error("input.file '" + path + "' (input.file list): " + std::strerror(errno));
    if (!S_ISREG(st.st_mode)) throw missing_error("input.file '" + path + "' (input.file list) is not a regular file");
    for (const Part& q : parts) {
      struct stat qs {};
      if (::stat(q.absolute.c_str(), &qs) == 0 && qs.st_dev == st.st_dev && qs.st_ino == st.st_ino)
        throw config_error("input.file lists '" + path + "' twice (also as '" + q.path + "')");
    }
    char resolved[PATH_MAX];
    if (!::realpath(path.c_str(), resolved))
      throw missing_error("input.file '" + path + "' (input.file list): " + std::strerror(errno));
    p.absolute = resolved;
    p.stat = std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino) + ":" + std::to_string(st.st_mtim.tv_sec) +
             "." + std::to_string(st.st_mtim.tv_nsec);
    p.content = "HDF5 file of " + std::to_string(st.st_size) + " bytes, sampled content " +
                sampled_content(path, static_cast<std::uint64_t>(st.st_size));
    if (H5Fis_hdf5(path.c_str()) <= 0) throw missing_error("input.file '" + path + "' (input.file list) is not an HDF5 file");
    h5::Id file = h5::file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
    if (!file) throw missing_error("input.file '" + path + "' (input.file list) cannot be opened as HDF5");
    inspect(file.get(), p, config.discount, "input.discount", 3, false, p.disc_dims, p.disc_type, p.disc_names);
    inspect(file.get(), p, config.multiplier, "input.multiplier", 2, !parts.empty(), p.mult_dims, p.mult_type,
            p.mult_names);
    parts.push_back(std::move(p));
  }
  const Part& first = parts.front();
  // Axes from the first file (its names, or the config), as for one file.
  const InputAxes chosen = choose_input_axes(config, first.disc_names, first.mult_names, first.disc_dims,
                                             first.mult_dims, where(first, "input.discount", config.discount),
                                             where(first, "input.multiplier", config.multiplier));
  // Along id when every file holds multBy rows, along date when only the first does.
  std::size_t with_mult = 0;
  for (const Part& p : parts) with_mult += p.mult_dims.empty() ? 0 : 1;
  if (with_mult != 1 && with_mult != parts.size()) {
    const Part& odd = *std::find_if(parts.begin() + 1, parts.end(),
                                    [](const Part& p) { return p.mult_dims.empty(); });
    throw data_error("input.file list: '" + odd.path + "' holds no '" + config.multiplier + "' where other later files "
                     "do: files split along id each hold their ids' multBy rows, files split along date hold multBy "
                     "in the first file only");
  }
  const Axis along = with_mult == 1 ? Axis::date : Axis::id;
  int at = 0;  // the split axis's position in the discount dataset
  for (int j = 0; j < 3; ++j)
    if (chosen.axes[j] == along) at = j;
  for (const Part& p : parts) {
    for (int j = 0; j < 3; ++j)
      if (j != at && p.disc_dims[static_cast<std::size_t>(j)] != first.disc_dims[static_cast<std::size_t>(j)])
        throw data_error("input.file list along " + std::string(axis_name(along)) + ": '" + p.path + "' has " +
                         std::to_string(p.disc_dims[static_cast<std::size_t>(j)]) + " " + axis_name(chosen.axes[j]) +
                         "s in '" + config.discount + "' " + h5::shape_string(p.disc_dims) + " where '" + first.path +
                         "' has " + std::to_string(first.disc_dims[static_cast<std::size_t>(j)]) +
                         (along == Axis::date ? " (files split along date hold multBy in the first file only)" : ""));
    if (H5Tequal(p.disc_type.get(), first.disc_type.get()) <= 0 ||
        (!p.mult_dims.empty() && H5Tequal(p.mult_type.get(), first.mult_type.get()) <= 0))
      throw data_error("input.file list: '" + p.path + "' stores its datasets with another datatype than '" +
                       first.path + "'; all files must agree");
    if (along == Axis::id && p.mult_names != first.mult_names)
      throw data_error("input.file list: '" + p.path + "' names the dimensions of '" + config.multiplier +
                       "' otherwise than '" + first.path + "'");
  }
  // multBy's id axis, for a split along id.
  const int mult_at = chosen.multiplier_axes[0] == Axis::id ? 0 : 1;
  if (along == Axis::id)
    for (const Part& p : parts)
      if (p.mult_dims[static_cast<std::size_t>(mult_at)] != p.disc_dims[static_cast<std::size_t>(at)] ||
          p.mult_dims[static_cast<std::size_t>(1 - mult_at)] != first.mult_dims[static_cast<std::size_t>(1 - mult_at)])
        throw data_error("input.file list along id: '" + p.path + "' holds '" + config.multiplier + "' " +
                         h5::shape_string(p.mult_dims) + " for '" + config.discount + "' " +
                         h5::shape_string(p.disc_dims) + ": each file's multBy holds the rows of its own ids");

  auto folder = std::make_unique<TempFolder>();
  {
    h5::Id vds = h5::file(H5Fcreate(folder->file().c_str(), H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT));
    if (!vds) throw io_error("input.file list: cannot create '" + folder->file() + "' for its virtual dataset");
    std::vector<const Part*> all;
    std::vector<std::vector<hsize_t>> disc_dims, mult_dims;
    for (const Part& p : parts) {
      all.push_back(&p);
      disc_dims.push_back(p.disc_dims);
      mult_dims.push_back(p.mult_dims);
    }
    write_virtual(vds.get(), config.discount, all, disc_dims, first.disc_type.get(), at);
    if (along == Axis::id) write_virtual(vds.get(), config.multiplier, all, mult_dims, first.mult_type.get(), mult_at);
    else write_virtual(vds.get(), config.multiplier, {&first}, {first.mult_dims}, first.mult_type.get(), -1);
  }
  InputConfig one = config;
  one.files.clear();
  one.file = folder->file();
  one.axes = chosen.axes;
  one.axes_given = true;
  one.multiplier_axes = chosen.multiplier_axes;
  std::unique_ptr<InputSource> inner = open_hdf5_input(one);
  return std::make_unique<ListInput>(std::move(parts), along, std::move(folder), std::move(inner));
}

}  // namespace discount
