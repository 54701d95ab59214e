// The job file's YAML, loaded only after one pass over its parser events has
// checked what yaml-cpp would otherwise expand or keep silently: aliases
// (billion laughs), complex or empty keys, a key given twice in one mapping,
// a second document, and a node count far beyond any job file. The pass
// builds no tree and keeps only the keys of the mappings open at the moment,
// so its time and memory are linear in the text, whatever the text holds.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <string>

namespace discount {

// A job file has a few dozen nodes; a YAML tree costs a few hundred bytes a
// node, so this keeps even a hostile file's tree within a few MiB.
constexpr std::size_t kMaxConfigNodes = 10000;

// "job.yaml:3:7" (the file name made printable), or the name alone for a null mark.
std::string config_location(const std::string& source, const YAML::Mark& mark);

// Checks `text` as above, then returns YAML::Load(text). Every refusal is a
// discount::Error with ExitCode::config and a "file:line:col: ..." message;
// a syntax error caused by a tab names the tab.
YAML::Node load_guarded_yaml(const std::string& text, const std::string& source);

}  // namespace discount
