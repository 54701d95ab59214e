// The validated job description: every key of the input file (documented in
// docs/config.md), with explicit defaults. Pure: parsing takes text, not files.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

// Shared types live in common/; included here so code that reached them
// through this header keeps building.
#include "common/axis.hpp"
#include "common/range.hpp"
#include "common/sizes.hpp"

namespace discount {

enum class Space { device, host };
// automatic: fused where the compute runs in host memory and the slicing is
// left to the app, else mdrange (resolve/resolve.cpp, resolve_kernel).
enum class KernelKind { automatic, mdrange, blas, fused };
const char* kernel_name(KernelKind kernel);
// memory.staging: whether slabs pass through the staging ring (ring), or each
// I/O thread reads, multiplies and writes small pieces of its own slab
// through a buffer that stays in cache (none); auto picks per job (resolve).
enum class Staging { automatic, ring, none };
const char* staging_name(Staging staging);
enum class NonFinite { error, propagate };
enum class OutputMode { file, checksum };
// How cv is stored: float64, or float32 rounded once from the float64 product.
enum class OutputType { float64, float32 };
inline std::size_t stored_bytes(OutputType t) { return t == OutputType::float32 ? 4 : 8; }
enum class VerifyMode { none, sample, full };

// "16GiB", "512MiB", "1000000", or "80%" of what the device/host reports free.
struct MemorySize {
  bool is_percent = true;
  double percent = 0.0;
  std::uint64_t bytes = 0;
  std::uint64_t resolve(std::uint64_t available_bytes) const;
  // "80%" or the exact size as the docs write it ("256MiB", common/sizes.hpp's
  // size_text); parse_memory_size reads it back to the same value.
  std::string describe() const;
};
// Throws std::invalid_argument with a short reason.
MemorySize parse_memory_size(const std::string& text);

// Values computed from indices instead of read from a file, so a full-scale
// job runs on a node whose disk cannot hold the input. Formula in lib/io/synthetic.hpp.
struct SyntheticSource {
  std::int64_t dates = 0, ids = 0, nums = 0;
  std::uint64_t seed = 1;
};

struct InputConfig {
  std::string file;  // the only file, or the first of `files`
  // input.file as a list of two or more: consecutive ranges along date or id,
  // read through one virtual dataset (io/lists/input_list.hpp). Empty: one file.
  std::vector<std::string> files;
  std::string multiplier = "multBy";
  std::string discount = "discount";
  std::array<Axis, 3> axes{Axis::date, Axis::id, Axis::num};
  bool axes_given = false;  // false: the discount's dimension names, if any, say them (io/dimension_names.hpp)
  // How multBy is stored: [id, num] or [num, id]; unset: from its dimension names or its shape.
  std::optional<std::array<Axis, 2>> multiplier_axes;
  std::optional<Range> dates;
  std::optional<Range> ids;
  NonFinite nonfinite = NonFinite::error;
  std::optional<SyntheticSource> synthetic;
};

// output.layout: cv in the one result file, or split over part files beside
// it; automatic (`auto`) lets resolve() choose (resolve/layout_choice.hpp).
// Only the configuration holds `automatic`: the output's spec never does.
enum class OutputLayout { single, split, automatic };

// output.compression: how the output's parts are stored. codec none keeps
// the contiguous parts (the default); any other codec stores each finished
// part as chunks compressed on every core, with the standard HDF5 filter
// ids so that any HDF5 reader decodes them (io/part_compress.hpp).
enum class Codec { none, deflate, zstd, lz4, blosc };
enum class ShuffleKind { byte, bit, none };
struct CompressionConfig {
  Codec codec = Codec::none;
  int level = -1;  // -1: the codec's default (deflate 4, zstd 3, blosc 5; LZ4 has none)
  ShuffleKind shuffle = ShuffleKind::byte;
  std::vector<std::int64_t> chunks;  // in the output's axis order; empty: auto (about 2 MiB)
  bool enabled() const { return codec != Codec::none; }
};
const char* codec_name(Codec codec);
int default_level(Codec codec);

struct OutputConfig {
  std::string file;
  std::string dataset = "cv";
  bool overwrite = false;
  OutputMode mode = OutputMode::file;
  // Seconds between checkpoints (fdatasync, then progress recorded); 0: every slab.
  double checkpoint_seconds = 10.0;
  // Write cv with O_DIRECT (page-cache writes where the file system refuses it).
  bool direct_io = true;
  OutputLayout layout = OutputLayout::automatic;
  int parts = 0;  // split: part files; 0: auto (io/output_parts.hpp)
  // MPI_Info hints for the single layout's MPI-IO open (key -> value).
  std::map<std::string, std::string> mpi_hints;
  OutputType dtype = OutputType::float64;
  CompressionConfig compression;
};

struct ComputeConfig {
  Space space = Space::device;
  KernelKind kernel = KernelKind::automatic;
  std::vector<Axis> parallel_dims{Axis::date, Axis::id, Axis::num};
  std::vector<std::int64_t> tile;  // empty: auto
};

// The deepest pipeline a job may ask for: buffers beyond a few add nothing
// but memory (docs/config.md).
constexpr int kMaxPipelineDepth = 64;

struct MemoryConfig {
  MemorySize device_budget{true, 80.0, 0};
  MemorySize host_budget{true, 25.0, 0};
  // Empty: auto, resolved per job (resolve/resolve.hpp): date when one date's
  // slab fits the budgets, else id.
  std::optional<Axis> chunk_axis;
  int pipeline_depth = 3;
  // Upper bound on one slab: keeps the pipeline several slabs deep even when
  // the budget would allow one huge slab. Empty: auto, sized per job
  // (plan/plan.hpp's auto_max_slab).
  std::optional<MemorySize> max_slab;
  Staging staging = Staging::automatic;
};

// Link speeds in GB/s (1e9 bytes per second) for the plan's predictions and
// the report's "% of limit". Disk links are never measured: unset means
// unknown. Copy and kernel links left unset are measured at start-up unless
// `measure` is false; a configured value always wins over a measurement.
struct LimitsConfig {
  std::optional<double> read, write;       // disk; unset: unknown
  std::optional<double> h2d, d2h, kernel;  // unset: auto (measured)
  bool measure = true;
  // Days a measurement stays valid in this host's cache (probe/limits_cache.hpp);
  // 0: measure at every run and keep nothing.
  int cache_days = 7;
};

// "2.5", "2.5GB/s", "800MB/s", "1.2TB/s", "3GiB/s" as GB/s (1e9 B/s).
// Throws std::invalid_argument with a short reason (not positive, bad unit).
double parse_gb_per_s(const std::string& text);

// The MPI ranks (one rank: nothing to set).
struct RanksConfig {
  // How long a rank waits in a collective for the others before it gives up
  // with exit 75 (ranks/ranks.hpp, set_timeout); 0: for ever.
  double timeout_seconds = 300.0;
};

struct Config {
  std::string source_path;  // the YAML file's name for messages (control bytes escaped, long names cut)
  InputConfig input;
  OutputConfig output;
  ComputeConfig compute;
  MemoryConfig memory;
  LimitsConfig limits;
  RanksConfig ranks;
  VerifyMode verify = VerifyMode::none;
  std::string report;

  // Effective configuration, defaults included, as YAML.
  std::string to_yaml() const;
};

// Every key the parser accepts, by section ("" is the top level,
// "input.synthetic" the synthetic source's map). docs/config.md documents the
// same set; a unit test holds the two together.
const std::vector<std::pair<std::string, std::vector<std::string>>>& config_schema();
const std::vector<std::string>& config_keys(const std::string& section);

// Parses and validates. Errors are discount::Error with ExitCode::config and a
// message "file:line:col: what is wrong".
// The YAML is checked event by event first (config/yaml_guard.hpp): no
// anchors or aliases, one document, plain keys, no key given twice.
Config parse_config(const std::string& yaml_text, const std::string& source_name);
// Reads the file (config/config_file.hpp: ExitCode::input_missing if it cannot
// be read, ExitCode::config if it is not a regular file of at most 1 MiB), then parses.
Config load_config(const std::string& path);

}  // namespace discount
