// A configuration built in code instead of read from text (the Python
// module's dict and keyword arguments), checked by the job file's parser.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>

#include "config/config.hpp"

namespace discount {

// As parse_config, for a tree of nodes: the same keys, rules and messages,
// with no text that a key or value could turn into more YAML. Messages start
// with source_name alone (the nodes have no file position).
Config parse_config_tree(const YAML::Node& root, const std::string& source_name);

}  // namespace discount
