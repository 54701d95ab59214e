// `discount_app config`: the effective configuration, defaults included.
#include <iostream>

#include "commands/commands.hpp"
#include "kernels/features.hpp"

namespace discount {

int config_command(const Config& config) {
  std::cout << config.to_yaml();
  std::cout << "# " << compiled_parts_text() << "\n";  // a YAML comment: the output stays valid
  return 0;
}

}  // namespace discount
