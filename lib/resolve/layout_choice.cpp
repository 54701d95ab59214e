#include "resolve/layout_choice.hpp"

#include <cstdio>

#include "io/records/part_count.hpp"

namespace discount {

namespace {
std::string times(double gain) {
  char text[16];
  std::snprintf(text, sizeof text, "%.2fx", gain);
  return text;
}
}  // namespace

LayoutChoice choose_layout(OutputLayout configured, OutputMode mode, const LayoutFacts& facts) {
  if (mode != OutputMode::file) return {OutputLayout::single, ""};
  if (configured != OutputLayout::automatic) return {configured, "set by output.layout"};
  if (facts.compressed && (!facts.recorded || *facts.recorded == OutputLayout::split))
    return {OutputLayout::split, "auto: output.compression stores each finished part compressed"};
  if (facts.recorded)
    return {*facts.recorded,
            "auto: kept from " + (facts.recorded_in.empty() ? std::string("an earlier run") : facts.recorded_in)};
  if (!facts.memory_backed)
    return {OutputLayout::single, "auto: not a memory-backed file system; on a disk split wrote " +
                                      times(kSplitGainDisk) +
                                      " faster (development VM): output.layout: split tries it"};
  if (auto_parts(facts.output_bytes, facts.cores, facts.memory_backed) < 2)
    return {OutputLayout::single, "auto: memory-backed file system, but under 256 MiB of output"};
  return {OutputLayout::split, "auto: memory-backed file system, where part files write in parallel: " +
                                   times(kSplitGainMemoryBacked) + " single for 20 GB on the H200 node's /dev/shm"};
}

}  // namespace discount
