// The HDF5 path a config names for the result (config/hdf5_path.hpp).
#include <gtest/gtest.h>

#include <string>

#include "config/hdf5_path.hpp"

using namespace discount;

TEST(Hdf5Path, DatasetPathsAccepted) {
  for (const char* path : {"cv", "/cv", "results/cv", "/results/2026/cv", "cv with spaces", "a%b", "x.y", "..cv"})
    EXPECT_EQ(output_dataset_problem(path), "") << path;
}

TEST(Hdf5Path, PathsThatCannotNameADatasetSayWhy) {
  const std::pair<std::string, std::string> cases[] = {
      {"", "root group"},
      {"/", "root group"},
      {"///", "root group"},
      {"results/", "ends with '/'"},
      {"results//cv", "empty part"},
      {"./cv", "'.' part"},
      {"results/./cv", "'.' part"},
      {std::string("c\0v", 3), "NUL"},
      {"discount_app/cv", "progress record"},
      {"/discount_app/x/cv", "progress record"},
  };
  for (const auto& [path, why] : cases) {
    const std::string problem = output_dataset_problem(path);
    EXPECT_NE(problem.find(why), std::string::npos) << "'" << path << "': " << problem;
  }
  EXPECT_EQ(output_dataset_problem("results/discount_app"), "");  // only the top-level group is the app's
}
