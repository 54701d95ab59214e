// Checks on the HDF5 path a config names for the result dataset, made when
// the config is read, so a path that can never name a dataset is a
// configuration error (78) rather than a failure halfway into the output.
#pragma once

#include <string>

namespace discount {

// The group inside every output that holds the job's progress record.
constexpr const char* kProgressGroup = "discount_app";

// Empty when `path` can name the output dataset; else why not ("names the
// file's root group, not a dataset"). A leading '/' is allowed.
std::string output_dataset_problem(const std::string& path);

}  // namespace discount
