#include "io/output/output_mpio.hpp"

#include <mutex>

#include "common/error.hpp"

#ifdef DISCOUNT_HDF5_PARALLEL
#include <mpi.h>
#endif

namespace discount {

#ifdef DISCOUNT_HDF5_PARALLEL
namespace {

h5::Id access_over(MPI_Comm comm, const std::map<std::string, std::string>& hints) {
  h5::Id fapl = h5::plist(H5Pcreate(H5P_FILE_ACCESS));
  MPI_Info info = MPI_INFO_NULL;
  if (!hints.empty()) {
    MPI_Info_create(&info);
    for (const auto& [key, value] : hints) MPI_Info_set(info, key.c_str(), value.c_str());
  }
  const herr_t status = H5Pset_fapl_mpio(fapl.get(), comm, info);  // HDF5 keeps its own copies
  if (info != MPI_INFO_NULL) MPI_Info_free(&info);
  h5::check(status, "H5Pset_fapl_mpio");
  return fapl;
}

// The single layout's dataset through MPI-IO: HDF5 writes each box, under
// its library lock; the dataset closes before the file.
class MpioDataset final : public BoxWriter {
 public:
  MpioDataset(h5::Id file, h5::Id data, std::string path, OutputType dtype)
      : file_(std::move(file)), data_(std::move(data)), path_(std::move(path)), dtype_(dtype) {}
  void write_box(const std::array<std::int64_t, 3>& start, const std::array<std::int64_t, 3>& count,
                 const void* buffer) override {
    std::lock_guard<std::mutex> lock(h5::library_mutex());
    h5::QuietErrors quiet;
    hsize_t first[3], size[3];
    for (int j = 0; j < 3; ++j) {
      first[j] = static_cast<hsize_t>(start[j]);
      size[j] = static_cast<hsize_t>(count[j]);
    }
    h5::Id file_space = h5::dataspace(H5Dget_space(data_.get()));
    h5::Id mem_space = h5::dataspace(H5Screate_simple(3, size, nullptr));
    h5::Id dxpl = h5::plist(H5Pcreate(H5P_DATASET_XFER));
    h5::check(H5Pset_dxpl_mpio(dxpl.get(), H5FD_MPIO_INDEPENDENT), "H5Pset_dxpl_mpio");
    const hid_t type = dtype_ == OutputType::float32 ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE;
    if (H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, first, nullptr, size, nullptr) < 0 ||
        H5Dwrite(data_.get(), type, mem_space.get(), file_space.get(), dxpl.get(), buffer) < 0)
      throw io_error("writing '" + path_ + "' through MPI-IO failed");
  }
  void close() override {
    std::lock_guard<std::mutex> lock(h5::library_mutex());
    data_.reset();
    if (!file_.close()) throw io_error("closing '" + path_ + "' (MPI-IO) failed");
  }

 private:
  h5::Id file_, data_;  // members go in reverse: the dataset closes first
  std::string path_;
  OutputType dtype_;
};

}  // namespace

h5::Id mpio_file_access(const void* comm, const std::map<std::string, std::string>& hints) {
  return access_over(*static_cast<const MPI_Comm*>(comm), hints);
}

h5::Id mpio_self_access(const std::map<std::string, std::string>& hints) { return access_over(MPI_COMM_SELF, hints); }

std::unique_ptr<BoxWriter> open_mpio_dataset(const void* comm, const std::map<std::string, std::string>& hints,
                                             const std::string& path, const std::string& dataset, OutputType dtype) {
  std::lock_guard<std::mutex> lock(h5::library_mutex());
  h5::QuietErrors quiet;
  h5::Id fapl = mpio_file_access(comm, hints);
  h5::Id file = h5::file(H5Fopen(path.c_str(), H5F_ACC_RDWR, fapl.get()));
  if (!file) throw io_error("cannot open '" + path + "' through MPI-IO");
  h5::Id data = h5::dataset(H5Dopen2(file.get(), dataset.c_str(), H5P_DEFAULT));
  if (!data) throw io_error("cannot open dataset '" + dataset + "' of '" + path + "'");
  return std::make_unique<MpioDataset>(std::move(file), std::move(data), path, dtype);
}
#else
h5::Id mpio_file_access(const void*, const std::map<std::string, std::string>&) { return {}; }
h5::Id mpio_self_access(const std::map<std::string, std::string>&) { return {}; }
std::unique_ptr<BoxWriter> open_mpio_dataset(const void*, const std::map<std::string, std::string>&, const std::string&,
                                             const std::string&, OutputType) {
  return nullptr;
}
#endif

}  // namespace discount
