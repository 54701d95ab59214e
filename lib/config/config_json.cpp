#include "config/config_json.hpp"

#include <yaml-cpp/yaml.h>

#include <nlohmann/json.hpp>

#include <regex>

#include "common/error.hpp"
#include "config/config.hpp"

namespace discount {
namespace {

// A plain scalar under the YAML 1.2 core schema.
nlohmann::json plain_scalar(const std::string& text) {
  static const std::regex null_re("null|Null|NULL|~|");
  static const std::regex true_re("true|True|TRUE");
  static const std::regex false_re("false|False|FALSE");
  static const std::regex int_re("[-+]?[0-9]+");
  static const std::regex float_re(R"([-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?)");
  if (std::regex_match(text, null_re)) return nullptr;
  if (std::regex_match(text, true_re)) return true;
  if (std::regex_match(text, false_re)) return false;
  if (std::regex_match(text, int_re)) {
    try {
      return std::stoll(text);
    } catch (const std::out_of_range&) {
      return text;  // past int64: kept as written
    }
  }
  if (std::regex_match(text, float_re)) return std::stod(text);
  return text;
}

nlohmann::json to_json(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map: {
      nlohmann::json object = nlohmann::json::object();
      for (const auto& kv : node) object[kv.first.as<std::string>()] = to_json(kv.second);
      return object;
    }
    case YAML::NodeType::Sequence: {
      nlohmann::json array = nlohmann::json::array();
      for (const auto& item : node) array.push_back(to_json(item));
      return array;
    }
    case YAML::NodeType::Scalar:
      // "!" marks a quoted scalar: a string whatever it looks like.
      return node.Tag() == "!" ? nlohmann::json(node.Scalar()) : plain_scalar(node.Scalar());
    default: return nullptr;
  }
}

}  // namespace

std::string yaml_to_json(const std::string& yaml_text) {
  try {
    return to_json(YAML::Load(yaml_text)).dump();
  } catch (const YAML::Exception& e) {
    throw internal_error(std::string("the effective configuration is not YAML (") + e.what() + ")");
  }
}

std::string config_to_json(const Config& config) { return yaml_to_json(config.to_yaml()); }

}  // namespace discount
