#include "io/lists/input_list.hpp"

#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/knobs.hpp"
#include "io/hdf5/dimension_names.hpp"
#include "io/hdf5/hdf5_handle.hpp"
#include "io/hdf5/vds_names.hpp"
#include "io/lists/input_list_coords.hpp"
#include "io/lists/input_list_parts.hpp"

namespace discount {

namespace {

// A private folder under $TMPDIR (or /tmp), removed with what it holds.
class TempFolder {
 public:
  TempFolder() {
    const char* base = environment_value("TMPDIR");
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
h5::Id write_virtual(hid_t vds, const std::string& name, const std::vector<const ListPart*>& parts,
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
    h5::check(H5Pset_virtual(dcpl.get(), space.get(), vds_escape(parts[f]->absolute).c_str(), vds_escape(name).c_str(),
                             source.get()),
              "H5Pset_virtual");
    if (along >= 0) offset += dims[f][static_cast<std::size_t>(along)];
  }
  h5::check(H5Sselect_all(space.get()), "H5Sselect_all");
  h5::Id lcpl = h5::plist(H5Pcreate(H5P_LINK_CREATE));
  h5::check(H5Pset_create_intermediate_group(lcpl.get(), 1), "H5Pset_create_intermediate_group");
  h5::Id ds = h5::dataset(H5Dcreate2(vds, name.c_str(), type, space.get(), lcpl.get(), dcpl.get(), H5P_DEFAULT));
  if (!ds)
    throw io_error("input.file list: cannot write the virtual dataset '" + name + "' (" + h5::error_messages() + ")");
  return ds;
}

class ListInput final : public InputSource {
 public:
  ListInput(std::vector<ListPart> parts, Axis along, std::unique_ptr<TempFolder> folder,
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
    for (const ListPart& p : parts_)
      files += (files.empty() ? "" : ", ") + p.path + " " + h5::shape_string(p.disc_dims);
    return std::to_string(parts_.size()) + " files along " + axis_name(along_) + " (" + files +
           ") as one virtual dataset: " + inner_->describe();
  }
  std::string identity() const override {
    std::string text = "input.file list along " + std::string(axis_name(along_));
    for (const ListPart& p : parts_)
      text += "; " + p.content + " " + h5::shape_string(p.disc_dims) +
              (p.mult_dims.empty() ? "" : " multBy " + h5::shape_string(p.mult_dims));
    return text + "; axes " + axes_text(axes_.data(), 3) +
           (multiplier_axes_[0] == Axis::num ? ", multBy [num,id]" : "");
  }
  std::string file_stat() const override {
    std::string text;
    for (const ListPart& p : parts_) text += (text.empty() ? "" : ";") + p.stat;
    return text;
  }
  bool may_hold_nonfinite() const override { return inner_->may_hold_nonfinite(); }
  std::uint64_t read_memory_bytes() const override { return inner_->read_memory_bytes(); }
  std::string read_advice() const override { return inner_->read_advice(); }
  std::string hdf5_file() const override { return inner_->hdf5_file(); }
  // The virtual dataset is read through HDF5 (not chunked): zeros, passed on.
  DecodeStats decode_stats() const override { return inner_->decode_stats(); }
  DecodeSample sample_decoding() override { return inner_->sample_decoding(); }

 private:
  std::vector<ListPart> parts_;
  Axis along_;
  std::unique_ptr<TempFolder> folder_;
  std::unique_ptr<InputSource> inner_;
};

// The virtual file: discount and multBy mapped onto the listed files, the
// first file's attributes, the joined coordinates.
void write_list_file(const std::string& path, const InputConfig& config, const std::vector<ListPart>& parts,
                     const InputAxes& chosen, Axis along, const ListFiles& files) {
  h5::Id vds = h5::file(H5Fcreate(path.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT));
  if (!vds) throw io_error("input.file list: cannot create '" + path + "' for its virtual dataset");
  const ListPart& first = parts.front();
  int at = 0;  // the split axis's position in the discount dataset
  for (int j = 0; j < 3; ++j)
    if (chosen.axes[j] == along) at = j;
  const int mult_at = chosen.multiplier_axes[0] == Axis::id ? 0 : 1;
  std::vector<const ListPart*> all;
  std::vector<std::vector<hsize_t>> disc_dims, mult_dims;
  for (const ListPart& p : parts) {
    all.push_back(&p);
    disc_dims.push_back(p.disc_dims);
    mult_dims.push_back(p.mult_dims);
  }
  h5::Id disc = write_virtual(vds.get(), config.discount, all, disc_dims, first.disc_type.get(), at);
  if (along == Axis::id)
    write_virtual(vds.get(), config.multiplier, all, mult_dims, first.mult_type.get(), mult_at);
  else
    write_virtual(vds.get(), config.multiplier, {&first}, {first.mult_dims}, first.mult_type.get(), -1);
  copy_list_attributes(files, vds.get(), disc.get());
  write_list_coordinates(files, along, vds.get(), disc.get());
}

}  // namespace

std::unique_ptr<InputSource> open_input_list(const InputConfig& config, const OpenInputFile& open_file) {
  h5::QuietErrors quiet;
  std::vector<ListPart> parts;
  for (const std::string& path : config.files) parts.push_back(inspect_list_file(config, path, parts));
  const ListPart& first = parts.front();
  // Axes from the first file (its names, or the config), as for one file.
  const InputAxes chosen = choose_input_axes(config, first.disc_names, first.mult_names, first.disc_dims,
                                             first.mult_dims, list_where(first, "input.discount", config.discount),
                                             list_where(first, "input.multiplier", config.multiplier));
  ListFiles files{{}, {}, config.discount, chosen.axes};
  for (const ListPart& p : parts) {
    files.paths.push_back(p.path);
    files.disc_dims.push_back(p.disc_dims);
  }
  const Axis along =
      choose_list_axis(config, parts, chosen, [&](Axis axis) { return compare_list_coordinates(files, axis); });
  check_list_fit(config, parts, chosen, along);

  auto folder = std::make_unique<TempFolder>();
  write_list_file(folder->file(), config, parts, chosen, along, files);
  InputConfig one = config;
  one.files.clear();
  one.file = folder->file();
  one.axes = chosen.axes;
  one.axes_given = true;
  one.multiplier_axes = chosen.multiplier_axes;
  std::unique_ptr<InputSource> inner = open_file(one);
  return std::make_unique<ListInput>(std::move(parts), along, std::move(folder), std::move(inner));
}

}  // namespace discount
