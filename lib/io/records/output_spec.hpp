// What the output sink is told about the job: paths, layout, identity and
// durability settings. Kept apart from io/output/output.hpp so the pure resolve step
// (lib/resolve) can fill it without seeing HDF5.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/axis.hpp"
#include "common/range.hpp"
#include "config/config.hpp"  // OutputLayout
#include "io/records/output_decor.hpp"
#include "io/posix/posix_io.hpp"

namespace discount {

// Checksums (io/records/checksum.hpp) of the input bytes a range of units is computed
// from: the discount slab and the multBy rows, as read.
struct InputSums {
  std::uint64_t disc = 0, mult = 0;
  bool known = false;
};

struct ExistingOutput;  // io/output/output_existing.hpp

struct OutputSpec {
  std::string path;
  std::string input_file;                // refused as the output
  std::vector<std::string> input_files;  // an input.file list, every file (a resume checks them all)
  std::string dataset = "cv";
  OutputType dtype = OutputType::float64;  // as stored; the values are computed in float64
  CompressionConfig compression;           // split: finished parts compressed (io/records/part_compress.hpp)
  bool overwrite = false;
  bool restart = false;
  bool check_finite = true;  // input.nonfinite: error: a float32 overflow to ±inf is refused too
  std::array<Axis, 3> axes{Axis::date, Axis::id, Axis::num};
  std::int64_t dates = 0, ids = 0, nums = 0;  // selected extents
  Axis chunk_axis = Axis::date;
  std::string fingerprint;                  // job identity: inputs, selection, layout
  std::string fingerprint_other_nonfinite;  // the same job under input.nonfinite's other value
  std::string identity;                     // the text hashed into it (`key: value` lines, io/output/identity.hpp)
  std::string input_stat;  // InputSource::file_stat(), kept as an attribute for reference (a resume compares the
                           // record's input_file)
  std::string provenance;  // effective config and versions, stored as attributes
  OutputDecor decor;       // coordinates, attributes and structured provenance (io/output/output_coords.hpp)
  // How often written slabs are made durable (fdatasync) and recorded as done;
  // 0: after every slab. Between checkpoints the page cache absorbs writes.
  double checkpoint_seconds = 10.0;
  bool direct_io = true;  // cv through DirectWriter (O_DIRECT), see io/posix/posix_io.hpp
  // Page-cache writes sent to the device after each slab (start_writeback);
  // false: left to the kernel's own timing (DISCOUNT_WRITEBACK=off, benchmarks).
  bool writeback = true;
  // DISCOUNT_TEST_HOLD: the tests' pause points (common/test_hooks.hpp); empty: none.
  std::string test_hold;
  bool pieces = false;  // memory.staging: none: ~1 MiB page-cache writes (SlabPieces), no O_DIRECT
  std::uint64_t direct_piece = DirectWriter::kMaxPiece;  // its bounce buffer per thread
  // The plan's slab count: sizes the done-range table (io/records/unit_record.hpp).
  std::int64_t slabs = 0;
  // The largest piece a resume re-reads at once (the plan's slab bytes); 0: 16 MiB.
  std::uint64_t read_piece_bytes = 0;
  // Reads the input of units [begin, end) of the chunk axis and returns its
  // checksums, for a resume whose input file is another file or was changed
  // since (pipeline/input_sums.hpp); unset: no such check.
  std::function<InputSums(std::int64_t begin, std::int64_t end)> input_sums;
  // Another rank (rank 0) created or resumed the partial: open it as it is.
  bool attach = false;
  // The job's ranks, given by the caller (io makes no rank calls): the owner
  // (rank 0) takes the lock, creates, resumes, records runs and publishes.
  bool owner = true;
  int rank = 0, ranks = 1;
  // Under MPI, the job's communicator (points at an MPI_Comm), for the
  // single layout's MPI-IO path; null: positional writes only.
  const void* mpi_comm = nullptr;
  // output.mpi_hints: MPI_Info key/value pairs for that MPI-IO open.
  std::map<std::string, std::string> mpi_hints;
  // output.layout and, for split, the part count resolved from output.parts.
  OutputLayout layout = OutputLayout::single;
  int parts = 1;                // 0: auto, chosen at creation from the output's size and the cores
  bool parts_auto = false;      // output.parts: auto chose the count (said in describe())
  bool parts_per_core = false;  // ... one per core, for memory.staging: none (else io/records/part_count.hpp's rule)
  int writers = 0;              // split: writers (resolve: io/records/part_count.hpp); 0: one per part, up to the cores
  // The plan's slabs as unit ranges along the chunk axis: parts end at slab edges.
  std::vector<Range> slab_units;
  // What the caller already read of an existing output or partial (one open
  // per run: the same reading chose the chunk axis); null: read it here.
  std::shared_ptr<const ExistingOutput> existing;
};

}  // namespace discount
