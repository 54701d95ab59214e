// The files of an input.file list: each one opened and checked as input.file
// alone is (io/input/input_dataset.hpp: links, virtual sources, external raw
// storage, types, storage metadata, with the same exit codes), then how
// they fit together: the axis they are split along, the shapes and types
// they share, and the multBy each one holds.
#pragma once

#include <hdf5.h>

#include <array>
#include <functional>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "io/hdf5/dimension_names.hpp"
#include "io/hdf5/hdf5_handle.hpp"

namespace discount {

struct ListPart {
  std::string path, absolute;                 // as listed; with every symlink resolved (the virtual mapping's source)
  std::vector<hsize_t> disc_dims, mult_dims;  // mult_dims empty: no multBy in this file
  h5::Id disc_type, mult_type;
  std::vector<std::string> disc_names, mult_names;
  std::string content, stat;
};

// "input.discount: dataset 'discount' in 'b.h5' (input.file list)"
std::string list_where(const ListPart& part, const std::string& key, const std::string& name);

// Opens `path` and checks it as input.file alone is checked; multBy is
// required in the first file only. A file listed twice (among `earlier`) is
// refused with 78.
ListPart inspect_list_file(const InputConfig& config, const std::string& path, const std::vector<ListPart>& earlier);

// How the files' coordinates along an axis compare (io/lists/input_list_coords.hpp).
enum class CoordAgreement { none, equal, differ };
using CoordCompare = std::function<CoordAgreement(Axis)>;

// The axis the files are split along: the one (date or id) whose extent
// differs between them; for files of one shape, the one whose coordinates
// differ (or the other's agree); else a multBy in the first file only (or
// in some later ones) says date, multBy rows that differ between the files
// say id. Files that hold the same multBy and nothing else to tell are
// refused (65): either reading could be meant.
Axis choose_list_axis(const InputConfig& config, const std::vector<ListPart>& parts, const InputAxes& chosen,
                      const CoordCompare& coordinates);

// Shapes on the other axes, datatypes, and multBy: along id every file holds
// its ids' rows; along date a later file's multBy, where there is one, holds
// the first file's values. Throws discount::Error (65) naming the file.
void check_list_fit(const InputConfig& config, const std::vector<ListPart>& parts, const InputAxes& chosen, Axis along);

}  // namespace discount
