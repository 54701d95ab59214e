#include "config/config.hpp"

#include <sys/stat.h>

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <stdexcept>

#include "common/error.hpp"
#include "common/quote.hpp"
#include "config/config_file.hpp"
#include "config/config_tree.hpp"
#include "config/hdf5_path.hpp"
#include "config/yaml_guard.hpp"

namespace discount {

const std::vector<std::pair<std::string, std::vector<std::string>>>& config_schema() {
  static const std::vector<std::pair<std::string, std::vector<std::string>>> schema{
      {"", {"input", "output", "compute", "memory", "limits", "ranks", "verify", "report"}},
      {"input",
       {"file", "multiplier", "discount", "axes", "multiplier_axes", "dates", "ids", "nonfinite", "synthetic"}},
      {"input.synthetic", {"dates", "ids", "nums", "seed"}},
      {"output",
       {"file", "dataset", "overwrite", "mode", "checkpoint_seconds", "direct_io", "layout", "parts", "mpi_hints",
        "dtype", "compression"}},
      {"output.compression", {"codec", "level", "shuffle", "chunks"}},
      {"compute", {"space", "kernel", "parallel_dims", "tile"}},
      {"memory", {"device_budget", "host_budget", "chunk_axis", "pipeline_depth", "max_slab", "staging"}},
      {"limits", {"read", "write", "h2d", "d2h", "kernel", "measure", "cache_days"}},
      {"ranks", {"timeout"}},
  };
  return schema;
}

const char* codec_name(Codec codec) {
  switch (codec) {
    case Codec::deflate: return "deflate";
    case Codec::zstd: return "zstd";
    case Codec::lz4: return "lz4";
    case Codec::blosc: return "blosc";
    case Codec::none: break;
  }
  return "none";
}

int default_level(Codec codec) {
  switch (codec) {
    case Codec::deflate: return 4;
    case Codec::zstd: return 3;
    case Codec::blosc: return 5;
    default: return 0;
  }
}

const std::vector<std::string>& config_keys(const std::string& section) {
  for (const auto& entry : config_schema())
    if (entry.first == section) return entry.second;
  throw std::out_of_range("no config section '" + section + "'");
}

namespace {

class Parser {
 public:
  explicit Parser(std::string source) : source_(std::move(source)) {}

  [[noreturn]] void fail(const YAML::Node& node, const std::string& what) const { fail(node.Mark(), what); }
  [[noreturn]] void fail(const YAML::Mark& mark, const std::string& what) const {
    throw config_error(config_location(source_, mark) + ": " + what);
  }

  static std::size_t edit_distance(const std::string& a, const std::string& b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
      std::size_t diag = row[0];
      row[0] = i;
      for (std::size_t j = 1; j <= b.size(); ++j) {
        std::size_t up = row[j];
        row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] != b[j - 1])});
        diag = up;
      }
    }
    return row[b.size()];
  }

  void require_map(const YAML::Node& node, const std::string& where) const {
    if (!node.IsMap()) fail(node, "'" + where + "' must be a mapping of keys");
  }

  void check_keys(const YAML::Node& map, const std::vector<std::string>& allowed, const std::string& section) const {
    for (const auto& entry : map) {
      const std::string key = entry.first.Scalar();  // the guard let only plain keys through
      if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
      std::string hint;
      std::size_t best = 3;
      for (const auto& candidate : allowed) {
        std::size_t d = edit_distance(key, candidate);
        if (d < best) {
          best = d;
          hint = candidate;
        }
      }
      std::string msg = "unknown key " + quote_for_message(key) + (section.empty() ? "" : " in '" + section + "'");
      if (!hint.empty())
        msg += "; did you mean '" + hint + "'?";
      else {
        msg += " (allowed:";
        for (const auto& candidate : allowed) msg += " " + candidate;
        msg += ")";
      }
      fail(entry.first, msg);
    }
  }

  std::string scalar(const YAML::Node& node, const std::string& key) const {
    if (!node.IsScalar()) fail(node, "'" + key + "' must be a single value");
    return node.Scalar();
  }

  std::string string_value(const YAML::Node& node, const std::string& key) const {
    std::string text = scalar(node, key);
    if (text.empty()) fail(node, "'" + key + "' must not be empty");
    if (text.find('\0') != std::string::npos) fail(node, "'" + key + "' holds a NUL byte (\\x00)");
    // A path or dataset name longer than Linux's PATH_MAX names nothing.
    if (text.size() > 4096)
      fail(node, "'" + key + "' = " + quote_for_message(text) + " is longer than 4096 bytes, the longest path");
    return text;
  }

  bool bool_value(const YAML::Node& node, const std::string& key) const {
    scalar(node, key);
    try {
      return node.as<bool>();
    } catch (const YAML::Exception&) {
      fail(node, "'" + key + "' must be true or false, not " + quote_for_message(node.Scalar()));
    }
  }

  std::int64_t int_value(const YAML::Node& node, const std::string& key, std::int64_t lo, std::int64_t hi) const {
    scalar(node, key);
    std::int64_t value = 0;
    try {
      value = node.as<std::int64_t>();
    } catch (const YAML::Exception&) {
      fail(node, "'" + key + "' must be an integer, not " + quote_for_message(node.Scalar()));
    }
    if (value < lo || value > hi)
      fail(node, "'" + key + "' = " + std::to_string(value) + " is out of range [" + std::to_string(lo) + ", " +
                     std::to_string(hi) + "]");
    return value;
  }

  template <class Enum>
  Enum choice(const YAML::Node& node, const std::string& key,
              const std::vector<std::pair<std::string, Enum>>& options) const {
    std::string text = scalar(node, key);
    std::string list;
    for (const auto& option : options) {
      if (option.first == text) return option.second;
      list += (list.empty() ? "" : " | ") + option.first;
    }
    fail(node, "'" + key + "' must be one of " + list + ", not " + quote_for_message(text));
  }

  Axis axis_value(const YAML::Node& node, const std::string& key) const {
    return choice<Axis>(node, key, {{"date", Axis::date}, {"id", Axis::id}, {"num", Axis::num}});
  }

  std::vector<Axis> axis_list(const YAML::Node& node, const std::string& key) const {
    if (!node.IsSequence() || node.size() == 0)
      fail(node, "'" + key + "' must be a non-empty list such as [date, id, num]");
    std::vector<Axis> axes;
    for (const auto& item : node) {
      Axis a = axis_value(item, key);
      if (std::find(axes.begin(), axes.end(), a) != axes.end())
        fail(item, "'" + key + "' names '" + axis_name(a) + "' twice");
      axes.push_back(a);
    }
    return axes;
  }

  Range range_value(const YAML::Node& node, const std::string& key) const {
    if (!node.IsSequence() || node.size() != 2) fail(node, "'" + key + "' must be a half-open range [begin, end]");
    Range r;
    r.begin = int_value(node[0], key + "[0]", 0, INT64_MAX);
    r.end = int_value(node[1], key + "[1]", 0, INT64_MAX);
    if (r.end <= r.begin)
      fail(node, "'" + key + "' = [" + std::to_string(r.begin) + ", " + std::to_string(r.end) +
                     "] is empty: end must be greater than begin");
    return r;
  }

  MemorySize memory_value(const YAML::Node& node, const std::string& key) const {
    std::string text = scalar(node, key);
    try {
      return parse_memory_size(text);
    } catch (const std::exception& e) { fail(node, "'" + key + "' = " + quote_for_message(text) + ": " + e.what()); }
  }

  std::string resolve_path(const std::string& path) const {
    if (path.empty() || path[0] == '/') return path;
    auto slash = source_.find_last_of('/');
    if (slash == std::string::npos) return path;
    return source_.substr(0, slash + 1) + path;
  }

  Config parse(const std::string& text) { return parse_tree(load_guarded_yaml(text, source_)); }

  Config parse_tree(const YAML::Node& root) {
    try {
      return parse_root(root);
    } catch (const YAML::Exception& e) {
      // The guard leaves yaml-cpp nothing to refuse; should a conversion
      // still throw, the file's line and column say more than "internal error".
      fail(e.mark, "cannot read this YAML value: " + printable_for_message(e.msg));
    }
  }

  Config parse_root(const YAML::Node& root) const {
    if (!root.IsDefined() || root.IsNull()) fail(YAML::Mark::null_mark(), "the file is empty");
    require_map(root, "top level");
    check_keys(root, config_keys(""), "");
    Config config;
    config.source_path = printable_for_message(source_);  // only messages use it

    if (!root["input"]) fail(root, "missing required section 'input'");
    parse_input(root["input"], config.input);
    if (!root["output"]) fail(root, "missing required section 'output'");
    parse_output(root["output"], config.output);
    if (root["compute"]) parse_compute(root["compute"], config.compute);
    if (root["memory"]) parse_memory(root["memory"], config.memory);
    if (root["limits"]) parse_limits(root["limits"], config.limits);
    if (root["ranks"]) parse_ranks(root["ranks"], config.ranks);
    if (root["verify"])
      config.verify =
          choice<VerifyMode>(root["verify"], "verify",
                             {{"none", VerifyMode::none}, {"sample", VerifyMode::sample}, {"full", VerifyMode::full}});
    if (root["report"]) {
      config.report = scalar(root["report"], "report");
      if (!config.report.empty()) config.report = resolve_path(config.report);
    }
    return config;
  }

  void parse_input(const YAML::Node& node, InputConfig& in) const {
    require_map(node, "input");
    check_keys(node, config_keys("input"), "input");
    if (node["file"] && node["file"].IsSequence()) {
      if (node["file"].size() == 0) fail(node["file"], "'input.file' is an empty list; name one file or several");
      for (const auto& item : node["file"]) in.files.push_back(resolve_path(string_value(item, "input.file")));
      in.file = in.files.front();
      if (in.files.size() == 1) in.files.clear();
    } else if (node["file"]) {
      in.file = resolve_path(string_value(node["file"], "input.file"));
    }
    // A glob is not expanded (the order of the ranges must be the user's): refused, pointing at the list form.
    for (const std::string& f : in.files.empty() ? std::vector<std::string>{in.file} : in.files) {
      struct stat st {};
      const auto open = f.find('[');
      const bool pattern = f.find_first_of("*?") != std::string::npos ||
                           (open != std::string::npos && f.find(']', open + 1) != std::string::npos);
      if (pattern && ::stat(f.c_str(), &st) != 0)
        fail(node["file"], "'input.file' " + f +
                               " looks like a glob pattern, which is not expanded: list the files "
                               "in order instead, as input.file: [part1.h5, part2.h5, part3.h5]");
    }
    if (node["multiplier"]) in.multiplier = string_value(node["multiplier"], "input.multiplier");
    if (node["discount"]) in.discount = string_value(node["discount"], "input.discount");
    if (node["axes"]) {
      auto axes = axis_list(node["axes"], "input.axes");
      if (axes.size() != 3) fail(node["axes"], "'input.axes' must name all three axes: date, id and num");
      std::copy(axes.begin(), axes.end(), in.axes.begin());
      in.axes_given = true;
    }
    if (node["multiplier_axes"]) {
      auto axes = axis_list(node["multiplier_axes"], "input.multiplier_axes");
      if (axes.size() != 2 || std::find(axes.begin(), axes.end(), Axis::date) != axes.end())
        fail(node["multiplier_axes"], "'input.multiplier_axes' must be [id, num] or [num, id]");
      in.multiplier_axes = std::array<Axis, 2>{axes[0], axes[1]};
    }
    if (node["dates"]) in.dates = range_value(node["dates"], "input.dates");
    if (node["ids"]) in.ids = range_value(node["ids"], "input.ids");
    if (node["nonfinite"])
      in.nonfinite = choice<NonFinite>(node["nonfinite"], "input.nonfinite",
                                       {{"error", NonFinite::error}, {"propagate", NonFinite::propagate}});
    if (node["synthetic"]) {
      const auto& syn = node["synthetic"];
      require_map(syn, "input.synthetic");
      check_keys(syn, config_keys("input.synthetic"), "input.synthetic");
      SyntheticSource s;
      for (const char* key : {"dates", "ids", "nums"})
        if (!syn[key]) fail(syn, std::string("'input.synthetic' needs '") + key + "'");
      s.dates = int_value(syn["dates"], "input.synthetic.dates", 1, INT64_C(1) << 40);
      s.ids = int_value(syn["ids"], "input.synthetic.ids", 1, INT64_C(1) << 40);
      s.nums = int_value(syn["nums"], "input.synthetic.nums", 1, INT64_C(1) << 20);
      if (syn["seed"])
        s.seed = static_cast<std::uint64_t>(int_value(syn["seed"], "input.synthetic.seed", 0, INT64_MAX));
      in.synthetic = s;
      if (node["file"]) fail(node["file"], "'input.file' and 'input.synthetic' exclude each other");
    } else if (!node["file"]) {
      fail(node, "missing required key 'input.file'");
    }
  }

  // A number of seconds in [0, most]; `range` says so in the message.
  double seconds_value(const YAML::Node& value, const std::string& key, double most, const std::string& range) const {
    scalar(value, key);
    double seconds = -1;
    try {
      seconds = value.as<double>();
    } catch (const YAML::Exception&) {
      fail(value, "'" + key + "' must be a number of seconds, not " + quote_for_message(value.Scalar()));
    }
    if (!(seconds >= 0) || seconds > most) fail(value, "'" + key + "' must be " + range);
    return seconds;
  }

  // output.parts: 1 to 4096, or auto (0).
  int parts_value(const YAML::Node& value) const {
    scalar(value, "output.parts");
    if (value.Scalar() == "auto") return 0;
    long long parts = 0;
    try {
      parts = value.as<long long>();
    } catch (const YAML::Exception&) {
      fail(value, "'output.parts' must be a count of part files or auto, not " + quote_for_message(value.Scalar()));
    }
    if (parts < 1 || parts > 4096) fail(value, "'output.parts' must be between 1 and 4096, or auto");
    return static_cast<int>(parts);
  }

  void parse_output(const YAML::Node& node, OutputConfig& out) const {
    require_map(node, "output");
    check_keys(node, config_keys("output"), "output");
    if (node["mode"])
      out.mode = choice<OutputMode>(node["mode"], "output.mode",
                                    {{"file", OutputMode::file}, {"checksum", OutputMode::checksum}});
    if (node["file"])
      out.file = resolve_path(string_value(node["file"], "output.file"));
    else if (out.mode == OutputMode::file)
      fail(node, "missing required key 'output.file'");
    if (node["dataset"]) {
      out.dataset = string_value(node["dataset"], "output.dataset");
      const std::string problem = output_dataset_problem(out.dataset);
      if (!problem.empty())
        fail(node["dataset"], "'output.dataset' = " + quote_for_message(out.dataset) + " " + problem);
    }
    if (node["overwrite"]) out.overwrite = bool_value(node["overwrite"], "output.overwrite");
    if (node["direct_io"]) out.direct_io = bool_value(node["direct_io"], "output.direct_io");
    if (node["dtype"])
      out.dtype = choice<OutputType>(node["dtype"], "output.dtype",
                                     {{"float64", OutputType::float64}, {"float32", OutputType::float32}});
    if (node["checkpoint_seconds"])
      out.checkpoint_seconds = seconds_value(node["checkpoint_seconds"], "output.checkpoint_seconds", 86400,
                                             "between 0 (every slab) and 86400");
    if (node["layout"])
      out.layout = choice<OutputLayout>(
          node["layout"], "output.layout",
          {{"single", OutputLayout::single}, {"split", OutputLayout::split}, {"auto", OutputLayout::automatic}});
    if (node["parts"]) out.parts = parts_value(node["parts"]);
    if (node["compression"]) parse_compression(node["compression"], out.compression);
    if (node["mpi_hints"]) {
      const auto& hints = node["mpi_hints"];
      require_map(hints, "output.mpi_hints");
      for (const auto& entry : hints) {
        const std::string key = entry.first.as<std::string>();
        scalar(entry.second, "output.mpi_hints." + key);
        if (key.empty() || key.size() > 255 || entry.second.Scalar().size() > 1023)
          fail(entry.second,
               "'output.mpi_hints' keys must be 1-255 characters and values at most 1023 (MPI_Info limits)");
        out.mpi_hints[key] = entry.second.Scalar();
      }
    }
  }

  void parse_compression(const YAML::Node& node, CompressionConfig& z) const {
    require_map(node, "output.compression");
    check_keys(node, config_keys("output.compression"), "output.compression");
    if (node["codec"])
      z.codec = choice<Codec>(node["codec"], "output.compression.codec",
                              {{"none", Codec::none},
                               {"deflate", Codec::deflate},
                               {"gzip", Codec::deflate},
                               {"zstd", Codec::zstd},
                               {"lz4", Codec::lz4},
                               {"blosc", Codec::blosc}});
    if (node["shuffle"])
      z.shuffle =
          choice<ShuffleKind>(node["shuffle"], "output.compression.shuffle",
                              {{"byte", ShuffleKind::byte}, {"bit", ShuffleKind::bit}, {"none", ShuffleKind::none}});
    if (node["level"]) {
      const int hi = z.codec == Codec::zstd ? 22 : 9;
      z.level =
          static_cast<int>(int_value(node["level"], "output.compression.level", z.codec == Codec::zstd ? 1 : 0, hi));
      if (z.codec == Codec::lz4)
        fail(node["level"], "'output.compression.level' does not apply to lz4 (it has no levels)");
    }
    if (z.codec == Codec::none)
      for (const char* key : {"level", "shuffle", "chunks"})
        if (node[key])
          fail(node[key], std::string("'output.compression.") + key +
                              "' needs 'output.compression.codec' (deflate, zstd, lz4 or blosc); without one the "
                              "output is not compressed");
    if (z.shuffle == ShuffleKind::bit && z.codec != Codec::blosc && z.codec != Codec::none)
      fail(node["shuffle"], "'output.compression.shuffle: bit' needs codec: blosc (bitshuffle is Blosc's); use byte");
    if (node["chunks"]) {
      const auto& chunks = node["chunks"];
      if (chunks.IsScalar() && chunks.Scalar() == "auto") {
        z.chunks.clear();
      } else {
        if (!chunks.IsSequence() || chunks.size() != 3)
          fail(chunks, "'output.compression.chunks' must be auto or a list of 3 extents, in the output's axis order");
        for (std::size_t j = 0; j < 3; ++j)
          z.chunks.push_back(
              int_value(chunks[j], "output.compression.chunks[" + std::to_string(j) + "]", 1, INT64_C(1) << 32));
      }
    }
  }

  void parse_compute(const YAML::Node& node, ComputeConfig& c) const {
    require_map(node, "compute");
    check_keys(node, config_keys("compute"), "compute");
    if (node["space"])
      c.space = choice<Space>(node["space"], "compute.space", {{"device", Space::device}, {"host", Space::host}});
    if (node["kernel"])
      c.kernel = choice<KernelKind>(node["kernel"], "compute.kernel",
                                    {{"auto", KernelKind::automatic},
                                     {"mdrange", KernelKind::mdrange},
                                     {"blas", KernelKind::blas},
                                     {"fused", KernelKind::fused}});
    if (node["parallel_dims"]) c.parallel_dims = axis_list(node["parallel_dims"], "compute.parallel_dims");
    if (node["tile"]) {
      const auto& tile = node["tile"];
      if (tile.IsScalar() && tile.Scalar() == "auto") {
        c.tile.clear();
      } else if (tile.IsSequence()) {
        c.tile.clear();
        for (const auto& item : tile) c.tile.push_back(int_value(item, "compute.tile", 1, 1024));
        if (c.tile.size() != c.parallel_dims.size())
          fail(tile, "'compute.tile' needs one size per parallel dim (" + std::to_string(c.parallel_dims.size()) +
                         "), got " + std::to_string(c.tile.size()));
        std::int64_t threads = 1;
        for (auto t : c.tile) threads *= t;
        if (threads > 1024)
          fail(tile, "'compute.tile' spans " + std::to_string(threads) + " iterations; at most 1024 fit one GPU block");
      } else {
        fail(tile, "'compute.tile' must be 'auto' or a list of integers, one per parallel dim");
      }
    }
  }

  double speed_value(const YAML::Node& node, const std::string& key) const {
    std::string text = scalar(node, key);
    try {
      return parse_gb_per_s(text);
    } catch (const std::exception& e) { fail(node, "'" + key + "' = " + quote_for_message(text) + ": " + e.what()); }
  }

  void parse_ranks(const YAML::Node& node, RanksConfig& r) const {
    require_map(node, "ranks");
    check_keys(node, config_keys("ranks"), "ranks");
    if (node["timeout"])
      r.timeout_seconds =
          seconds_value(node["timeout"], "ranks.timeout", 604800, "between 0 (no limit) and 604800 seconds");
  }

  void parse_limits(const YAML::Node& node, LimitsConfig& l) const {
    require_map(node, "limits");
    check_keys(node, config_keys("limits"), "limits");
    for (auto [key, value] : {std::make_pair("read", &l.read), std::make_pair("write", &l.write)}) {
      const YAML::Node item = node[key];
      if (!item) continue;
      const std::string name = std::string("limits.") + key;
      if (item.IsScalar() && item.Scalar() == "auto")
        fail(item,
             "'" + name + "': disk speeds are not measured; give one such as 2.5GB/s or leave the key out (unknown)");
      *value = speed_value(item, name);
    }
    for (auto [key, value] :
         {std::make_pair("h2d", &l.h2d), std::make_pair("d2h", &l.d2h), std::make_pair("kernel", &l.kernel)}) {
      const YAML::Node item = node[key];
      if (!item) continue;
      if (item.IsScalar() && item.Scalar() == "auto")
        value->reset();
      else
        *value = speed_value(item, std::string("limits.") + key);
    }
    if (node["measure"]) l.measure = bool_value(node["measure"], "limits.measure");
    if (node["cache_days"])
      l.cache_days = static_cast<int>(int_value(node["cache_days"], "limits.cache_days", 0, 3650));
  }

  void parse_memory(const YAML::Node& node, MemoryConfig& m) const {
    require_map(node, "memory");
    check_keys(node, config_keys("memory"), "memory");
    if (node["device_budget"]) m.device_budget = memory_value(node["device_budget"], "memory.device_budget");
    if (node["host_budget"]) m.host_budget = memory_value(node["host_budget"], "memory.host_budget");
    if (node["max_slab"]) {
      if (node["max_slab"].IsScalar() && node["max_slab"].Scalar() == "auto")
        m.max_slab.reset();
      else
        m.max_slab = memory_value(node["max_slab"], "memory.max_slab");
    }
    if (node["chunk_axis"])
      m.chunk_axis = choice<std::optional<Axis>>(node["chunk_axis"], "memory.chunk_axis",
                                                 {{"auto", std::nullopt}, {"date", Axis::date}, {"id", Axis::id}});
    if (node["pipeline_depth"])
      m.pipeline_depth =
          static_cast<int>(int_value(node["pipeline_depth"], "memory.pipeline_depth", 1, kMaxPipelineDepth));
    if (node["staging"])
      m.staging = choice<Staging>(node["staging"], "memory.staging",
                                  {{"auto", Staging::automatic}, {"ring", Staging::ring}, {"none", Staging::none}});
  }

 private:
  std::string source_;
};

}  // namespace

Config parse_config(const std::string& yaml_text, const std::string& source_name) {
  return Parser(source_name).parse(yaml_text);
}

Config parse_config_tree(const YAML::Node& root, const std::string& source_name) {
  return Parser(source_name).parse_tree(root);
}

Config load_config(const std::string& path) { return parse_config(read_config_file(path), path); }

}  // namespace discount
