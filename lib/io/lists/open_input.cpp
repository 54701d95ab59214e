#include "io/lists/open_input.hpp"

#include "io/lists/input_list.hpp"

namespace discount {

std::unique_ptr<InputSource> open_input(const InputConfig& config) {
  if (config.synthetic) return open_synthetic_input(*config.synthetic);
  if (config.files.size() > 1) return open_input_list(config, open_hdf5_input);
  return open_hdf5_input(config);
}

}  // namespace discount
