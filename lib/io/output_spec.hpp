// What the output sink is told about the job: paths, layout, identity and
// durability settings. Kept apart from io/output.hpp so the pure resolve step
// (lib/resolve) can fill it without seeing HDF5.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "config/config.hpp"
#include "io/posix_io.hpp"

namespace discount {

struct OutputSpec {
  std::string path;
  std::string input_file;  // refused as the output
  std::string dataset = "cv";
  bool overwrite = false;
  bool restart = false;
  std::array<Axis, 3> axes{Axis::date, Axis::id, Axis::num};
  std::int64_t dates = 0, ids = 0, nums = 0;  // selected extents
  Axis chunk_axis = Axis::date;
  std::string fingerprint;  // job identity: inputs, selection, layout
  std::string identity;     // the text hashed into it (`key: value` lines, io/identity.hpp)
  std::string input_stat;   // InputSource::file_stat(): an input changed in place refuses a resume
  std::string provenance;   // effective config and versions, stored as attributes
  // How often written slabs are made durable (fdatasync) and recorded as done;
  // 0: after every slab. Between checkpoints the page cache absorbs writes.
  double checkpoint_seconds = 10.0;
  bool direct_io = true;  // cv through DirectWriter (O_DIRECT), see io/posix_io.hpp
  std::uint64_t direct_piece = DirectWriter::kMaxPiece;  // its bounce buffer per thread
  // Another rank (rank 0) created or resumed the partial: open it as it is.
  bool attach = false;
};

}  // namespace discount
