// The HDF5 side of the read set (io/posix/read_set.hpp): the files a job's
// HDF5 inputs reach, and run's check of its writes against them.
#pragma once

#include <string>

#include "config/config.hpp"
#include "io/posix/read_set.hpp"

namespace discount {

// The files `config`'s job reads (HDF5 links, virtual sources and external
// raw files followed, at most a few levels deep). Opens the HDF5 files
// read-only; an input HDF5 cannot open contributes its path alone (opening
// the input refuses it elsewhere). `verify` reads these and the output, and
// writes nothing.
ReadSet job_read_set(const Config& config);

// `run`'s checks before any output exists or anything is measured: the
// report path (`report_role`: "report" or "--report"; empty: none) first
// (78), then every file the output and the report write (73).
void check_run_writes(const Config& config, bool restart, const std::string& report, const std::string& report_role);

}  // namespace discount
