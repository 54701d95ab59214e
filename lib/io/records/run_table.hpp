// The run table of an output (docs/architecture.md): one fixed 128-byte
// record per run (number, ranks, start and end time, host, seconds),
// allocated at creation and then written in place like the done ranges,
// never through HDF5; runs past the last of its 256 slots share that slot.
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/clock.hpp"  // utc_now, for the run records
#include "io/records/run_history.hpp"

namespace discount {

constexpr int kRunSlots = 256;
constexpr std::uint64_t kRunTableBytes = kRunSlots * 128;

// Creates the zeroed table in a file being created; its offset (0: HDF5 refused).
std::uint64_t create_run_table(hid_t file);
// The table's offset and the number after its last recorded run ({0, 1}: no table).
std::pair<std::uint64_t, int> run_table_state(hid_t file);
// `record` in its run's slot, with the end time now and this host's name.
void write_run_entry(int fd, std::uint64_t offset, const RunRecord& record, const std::string& path);
// The recorded runs (empty when the file has no table).
std::vector<RunRecord> read_run_records(hid_t file);

}  // namespace discount
