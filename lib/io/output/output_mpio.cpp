#include "io/output/output_mpio.hpp"

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

}  // namespace

h5::Id mpio_file_access(const void* comm, const std::map<std::string, std::string>& hints) {
  return access_over(*static_cast<const MPI_Comm*>(comm), hints);
}

h5::Id mpio_self_access(const std::map<std::string, std::string>& hints) { return access_over(MPI_COMM_SELF, hints); }
#else
h5::Id mpio_file_access(const void*, const std::map<std::string, std::string>&) { return {}; }
h5::Id mpio_self_access(const std::map<std::string, std::string>&) { return {}; }
#endif

}  // namespace discount
