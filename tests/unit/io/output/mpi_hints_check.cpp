// output.mpi_hints reach MPI_File_open (MPI builds only; ctest label mpi):
// a file opened through io's MPI-IO access list is asked for its info with
// MPI_File_get_info, and the hints given must be there with their values.
// Then a FileOutput with hints creates its partial through MPI-IO (rank 0's
// creation path) and publishes it. One process; exit 0 on success.
#include <hdf5.h>
#include <mpi.h>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "io/output/output.hpp"
#include "io/output/output_mpio.hpp"

using namespace discount;

namespace {

std::string info_value(MPI_Info info, const char* key) {
  char value[MPI_MAX_INFO_VAL + 1] = {};
  int found = 0;
  MPI_Info_get(info, key, MPI_MAX_INFO_VAL, value, &found);
  return found ? value : "(missing)";
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const std::string dir = argc > 1 ? argv[1] : ".";
  int failures = 0;
  // cb_buffer_size and romio_cb_write are hints both ROMIO and OMPIO keep.
  const std::map<std::string, std::string> hints{{"cb_buffer_size", "1048576"}, {"romio_cb_write", "disable"}};
  {
    MPI_Comm self = MPI_COMM_SELF;
    h5::Id fapl = mpio_file_access(&self, hints);
    const std::string path = dir + "/mpi_hints.h5";
    hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get());
    void* handle = nullptr;
    if (file < 0 || H5Fget_vfd_handle(file, fapl.get(), &handle) < 0 || !handle) {
      std::printf("FAIL: cannot open '%s' through MPI-IO\n", path.c_str());
      ++failures;
    } else {
      MPI_Info info = MPI_INFO_NULL;
      MPI_File_get_info(*static_cast<MPI_File*>(handle), &info);
      for (const auto& [key, want] : hints) {
        const std::string got = info_value(info, key.c_str());
        std::printf("%s %s = %s (given %s)\n", got == want ? "ok  " : "FAIL", key.c_str(), got.c_str(), want.c_str());
        failures += got != want;
      }
      MPI_Info_free(&info);
    }
    if (file >= 0) H5Fclose(file);
  }
  {
    // The owner's creation through MPI-IO with the hints, then the usual protocol.
    OutputSpec spec;
    spec.path = dir + "/mpi_hints_out.h5";
    spec.dates = 3;
    spec.ids = 5;
    spec.nums = 2;
    spec.fingerprint = "mpi-hints";
    spec.checkpoint_seconds = 0;
    spec.slabs = 1;
    static const MPI_Comm self = MPI_COMM_SELF;
    spec.mpi_comm = &self;
    spec.mpi_hints = hints;
    std::remove(spec.path.c_str());
    std::vector<double> values(30);
    for (std::size_t e = 0; e < values.size(); ++e) values[e] = 0.5 + static_cast<double>(e);
    try {
      FileOutput out(spec);
      Slab slab;
      slab.dates = {0, 3};
      slab.ids = {0, 5};
      slab.nums = 2;
      out.write_slab(slab, values.data());
      out.publish();
      std::printf("ok   FileOutput created through MPI-IO with hints and published\n");
    } catch (const std::exception& e) {
      std::printf("FAIL: FileOutput with hints: %s\n", e.what());
      ++failures;
    }
  }
  MPI_Finalize();
  return failures == 0 ? 0 : 1;
}
