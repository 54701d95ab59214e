// HDF5's MPI-IO driver for the single layout under MPI, with output.mpi_hints
// as the MPI_Info of the file's open. The caller hands the communicator in
// (OutputSpec::mpi_comm); io never names the job's communicator itself.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "config/config.hpp"
#include "io/hdf5/hdf5_handle.hpp"
#include "io/records/data_file.hpp"

namespace discount {

// A file access property list for the MPI-IO driver over `comm` (points at an
// MPI_Comm) with `hints`; an empty Id in a build without parallel HDF5.
h5::Id mpio_file_access(const void* comm, const std::map<std::string, std::string>& hints);

// The same over this process alone: the owner rank creates the partial through
// it when hints are given, since hints such as Lustre's striping_factor and
// striping_unit take effect only when a file is created.
h5::Id mpio_self_access(const std::map<std::string, std::string>& hints);

// The dataset `dataset` of `path` opened through the MPI-IO driver over
// `comm` (collective: every rank calls it), each box an independent H5Dwrite
// of its hyperslab; null in a build without parallel HDF5.
std::unique_ptr<BoxWriter> open_mpio_dataset(const void* comm, const std::map<std::string, std::string>& hints,
                                             const std::string& path, const std::string& dataset, OutputType dtype);

}  // namespace discount
