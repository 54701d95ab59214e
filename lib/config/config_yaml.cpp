// Config::to_yaml(): the effective configuration, defaults included, in the
// YAML form the parser reads back (what `discount_app config` prints, the
// copy in the report and in the output's provenance).
#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "config/config.hpp"

namespace discount {
namespace {

void emit_axes(YAML::Emitter& out, const std::vector<Axis>& axes) {
  out << YAML::Flow << YAML::BeginSeq;
  for (Axis a : axes) out << axis_name(a);
  out << YAML::EndSeq;
}

void emit_compression(YAML::Emitter& out, const CompressionConfig& z) {
  out << YAML::Key << "compression" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "codec" << YAML::Value << codec_name(z.codec);
  if (z.codec != Codec::lz4)
    out << YAML::Key << "level" << YAML::Value << (z.level >= 0 ? z.level : default_level(z.codec));
  out << YAML::Key << "shuffle" << YAML::Value
      << (z.shuffle == ShuffleKind::byte  ? "byte"
          : z.shuffle == ShuffleKind::bit ? "bit"
                                          : "none");
  if (z.chunks.empty()) {
    out << YAML::Key << "chunks" << YAML::Value << "auto";
  } else {
    out << YAML::Key << "chunks" << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (auto c : z.chunks) out << c;
    out << YAML::EndSeq;
  }
  out << YAML::EndMap;
}

void emit_input(YAML::Emitter& out, const InputConfig& input) {
  out << YAML::Key << "input" << YAML::Value << YAML::BeginMap;
  if (input.synthetic) {
    out << YAML::Key << "synthetic" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "dates"
        << YAML::Value << input.synthetic->dates << YAML::Key << "ids" << YAML::Value << input.synthetic->ids
        << YAML::Key << "nums" << YAML::Value << input.synthetic->nums << YAML::Key << "seed" << YAML::Value
        << input.synthetic->seed << YAML::EndMap;
  } else {
    if (input.files.empty()) {
      out << YAML::Key << "file" << YAML::Value << input.file;
    } else {
      out << YAML::Key << "file" << YAML::Value << YAML::BeginSeq;
      for (const auto& f : input.files) out << f;
      out << YAML::EndSeq;
    }
  }
  out << YAML::Key << "multiplier" << YAML::Value << input.multiplier;
  out << YAML::Key << "discount" << YAML::Value << input.discount;
  out << YAML::Key << "axes" << YAML::Value;
  emit_axes(out, {input.axes.begin(), input.axes.end()});
  if (input.multiplier_axes) {
    out << YAML::Key << "multiplier_axes" << YAML::Value;
    emit_axes(out, {input.multiplier_axes->begin(), input.multiplier_axes->end()});
  }
  if (input.dates)
    out << YAML::Key << "dates" << YAML::Value << YAML::Flow << YAML::BeginSeq << input.dates->begin << input.dates->end
        << YAML::EndSeq;
  if (input.ids)
    out << YAML::Key << "ids" << YAML::Value << YAML::Flow << YAML::BeginSeq << input.ids->begin << input.ids->end
        << YAML::EndSeq;
  out << YAML::Key << "nonfinite" << YAML::Value << (input.nonfinite == NonFinite::error ? "error" : "propagate");
  out << YAML::EndMap;
}

void emit_output(YAML::Emitter& out, const OutputConfig& output) {
  out << YAML::Key << "output" << YAML::Value << YAML::BeginMap;
  if (!output.file.empty()) out << YAML::Key << "file" << YAML::Value << output.file;
  out << YAML::Key << "dataset" << YAML::Value << output.dataset;
  out << YAML::Key << "overwrite" << YAML::Value << output.overwrite;
  out << YAML::Key << "mode" << YAML::Value << (output.mode == OutputMode::file ? "file" : "checksum");
  out << YAML::Key << "checkpoint_seconds" << YAML::Value << output.checkpoint_seconds;
  out << YAML::Key << "direct_io" << YAML::Value << output.direct_io;
  out << YAML::Key << "layout" << YAML::Value
      << (output.layout == OutputLayout::split    ? "split"
          : output.layout == OutputLayout::single ? "single"
                                                  : "auto");
  if (output.parts > 0)
    out << YAML::Key << "parts" << YAML::Value << output.parts;
  else
    out << YAML::Key << "parts" << YAML::Value << "auto";
  if (!output.mpi_hints.empty()) {
    out << YAML::Key << "mpi_hints" << YAML::Value << YAML::BeginMap;
    for (const auto& [key, value] : output.mpi_hints) out << YAML::Key << key << YAML::Value << value;
    out << YAML::EndMap;
  }
  out << YAML::Key << "dtype" << YAML::Value << (output.dtype == OutputType::float32 ? "float32" : "float64");
  if (output.compression.enabled()) emit_compression(out, output.compression);
  out << YAML::EndMap;
}

void emit_compute(YAML::Emitter& out, const ComputeConfig& compute) {
  out << YAML::Key << "compute" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "space" << YAML::Value << (compute.space == Space::device ? "device" : "host");
  out << YAML::Key << "kernel" << YAML::Value << kernel_name(compute.kernel);
  out << YAML::Key << "parallel_dims" << YAML::Value;
  emit_axes(out, compute.parallel_dims);
  out << YAML::Key << "tile" << YAML::Value;
  if (compute.tile.empty())
    out << "auto";
  else {
    out << YAML::Flow << YAML::BeginSeq;
    for (auto t : compute.tile) out << t;
    out << YAML::EndSeq;
  }
  out << YAML::EndMap;
}

void emit_memory(YAML::Emitter& out, const MemoryConfig& memory) {
  out << YAML::Key << "memory" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "device_budget" << YAML::Value << memory.device_budget.describe();
  out << YAML::Key << "host_budget" << YAML::Value << memory.host_budget.describe();
  out << YAML::Key << "chunk_axis" << YAML::Value << chunk_axis_name(memory.chunk_axis);
  out << YAML::Key << "pipeline_depth" << YAML::Value << memory.pipeline_depth;
  out << YAML::Key << "max_slab" << YAML::Value << (memory.max_slab ? memory.max_slab->describe() : "auto");
  out << YAML::Key << "staging" << YAML::Value << staging_name(memory.staging);
  out << YAML::EndMap;
}

void emit_limits(YAML::Emitter& out, const LimitsConfig& limits) {
  out << YAML::Key << "limits" << YAML::Value << YAML::BeginMap;
  auto speed = [](double gb_per_s) {
    char text[48];
    std::snprintf(text, sizeof text, "%.9gGB/s", gb_per_s);
    return std::string(text);
  };
  if (limits.read) out << YAML::Key << "read" << YAML::Value << speed(*limits.read);
  if (limits.write) out << YAML::Key << "write" << YAML::Value << speed(*limits.write);
  out << YAML::Key << "h2d" << YAML::Value << (limits.h2d ? speed(*limits.h2d) : "auto");
  out << YAML::Key << "d2h" << YAML::Value << (limits.d2h ? speed(*limits.d2h) : "auto");
  out << YAML::Key << "kernel" << YAML::Value << (limits.kernel ? speed(*limits.kernel) : "auto");
  out << YAML::Key << "measure" << YAML::Value << limits.measure;
  out << YAML::Key << "cache_days" << YAML::Value << limits.cache_days;
  out << YAML::EndMap;
}

}  // namespace

const char* staging_name(Staging staging) {
  switch (staging) {
    case Staging::automatic: return "auto";
    case Staging::ring: return "ring";
    case Staging::none: return "none";
  }
  return "?";
}

const char* kernel_name(KernelKind kernel) {
  switch (kernel) {
    case KernelKind::automatic: return "auto";
    case KernelKind::mdrange: return "mdrange";
    case KernelKind::blas: return "blas";
    case KernelKind::fused: return "fused";
  }
  return "?";
}

std::string Config::to_yaml() const {
  YAML::Emitter out;
  out << YAML::BeginMap;
  emit_input(out, input);
  emit_output(out, output);
  emit_compute(out, compute);
  emit_memory(out, memory);
  emit_limits(out, limits);
  out << YAML::Key << "ranks" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "timeout" << YAML::Value << ranks.timeout_seconds;
  out << YAML::EndMap;

  static const char* verify_names[] = {"none", "sample", "full"};
  out << YAML::Key << "verify" << YAML::Value << verify_names[static_cast<int>(verify)];
  out << YAML::Key << "report" << YAML::Value << report;
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace discount
