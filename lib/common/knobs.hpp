// The DISCOUNT_* environment variables the app honours, each read in one
// place (knobs.cpp). None is part of the job's configuration: they are
// benchmark and test switches, and the one folder a user may move (the
// cache). Pure: no Kokkos, no HDF5.
//
// A job reads them once with the machine facts (commands' system_facts) and
// passes them down in its spec (JobSpec, PipelineSpec, OutputSpec); helpers
// deep in header-only code (host_parallel's thread counts) take knobs(),
// the process's one reading.
#pragma once

#include <string>

namespace discount {

struct Knobs {
  // DISCOUNT_IO_THREADS: threads of the I/O-side loops (reads, writes,
  // scans, checksums), 1 to 64 (more: 64); 0: the default (half the CPUs, at most 8).
  int io_threads = 0;
  // DISCOUNT_MEMORY_THREADS: threads of memory-to-memory copies, 1 to 64
  // (more: 64); 0: the default (every usable CPU). Benchmarks compare counts.
  int memory_threads = 0;
  // DISCOUNT_DEVICE_PIECE_MIB: a GPU's piece size under memory.staging: none,
  // 1 to 64 MiB (more: 64); 0: unset (1 MiB, or 8 MiB for arrays in place).
  // Set to anything else: 1, the 1 MiB pieces everywhere. Benchmarks only.
  int device_piece_mib = 0;
  // DISCOUNT_STAGING_PIN=alloc: the staging ring pinned by the GPU runtime's
  // own allocation instead of registered pages. Benchmarks only.
  bool staging_pin_alloc = false;
  // DISCOUNT_WRITEBACK=off: no early write-out of page-cache writes after each
  // slab (the kernel's own timing, a benchmark's baseline).
  bool writeback = true;
  // DISCOUNT_CACHE_DIR: the folder of this host's measured link limits;
  // empty: $XDG_CACHE_HOME/discount_app, else ~/.cache/discount_app.
  std::string cache_dir;
  // DISCOUNT_TEST_HOLD: test hook, the folder of the e2e tests' pause points
  // (common/test_hooks.hpp); empty: no pauses.
  std::string test_hold;
};

// Reads every DISCOUNT_* variable from the environment now. A count that is
// not a positive number (0, -2, abc) is ignored, as if unset; one with
// trailing text reads its leading digits ("8x" is 8). Empty strings are unset.
Knobs read_knobs();

// The process's reading, taken on first use and kept.
const Knobs& knobs();

// Any other variable of the environment the app reads (HOME, TMPDIR,
// COLUMNS, OMP_NUM_THREADS, HDF5's prefixes): its value now, null when
// unset. The one place that calls getenv, so every variable the app
// depends on can be found here.
const char* environment_value(const char* name);

}  // namespace discount
