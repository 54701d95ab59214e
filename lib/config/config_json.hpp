// The effective configuration as a JSON object, for the JSON report. It is
// derived from Config::to_yaml(), so the two always hold the same keys and
// values: a key added to to_yaml appears here without a second writer.
#pragma once

#include <string>

namespace discount {

struct Config;

// YAML text (a mapping, as to_yaml writes it) as compact JSON text. Plain
// scalars take the YAML 1.2 core schema's types: true/false, null/~,
// integers and floats become JSON booleans, null and numbers; everything
// else, and every quoted scalar, stays a string ("16GiB", "auto", a path).
// Throws discount::Error (ExitCode::internal, a bug) for text that is not YAML.
std::string yaml_to_json(const std::string& yaml_text);

// config.to_yaml() as JSON.
std::string config_to_json(const Config& config);

}  // namespace discount
