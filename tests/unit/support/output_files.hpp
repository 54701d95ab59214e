// HDF5 outputs for the io tests: a dataset read back whole with plain HDF5,
// an output spec of a given shape, and a date slab.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "io/hdf5/hdf5_handle.hpp"
#include "io/output/output.hpp"

namespace discount::test_support {

inline std::vector<double> read_all(const std::string& file, const std::string& name) {
  h5::Id f = h5::file(H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  h5::Id d = h5::dataset(H5Dopen2(f.get(), name.c_str(), H5P_DEFAULT));
  std::size_t n = 1;
  for (auto e : h5::dataset_dims(d.get())) n *= e;
  std::vector<double> values(n);
  EXPECT_GE(H5Dread(d.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()), 0);
  return values;
}

inline OutputSpec spec_for(const std::string& path, std::int64_t dates, std::int64_t ids, std::int64_t nums) {
  OutputSpec spec;
  spec.path = path;
  spec.dates = dates;
  spec.ids = ids;
  spec.nums = nums;
  spec.fingerprint = "job-a";
  spec.provenance = "test";
  spec.checkpoint_seconds = 0;  // every slab durable and recorded at once
  return spec;
}

inline Slab slab_of(std::int64_t d0, std::int64_t d1, std::int64_t ids, std::int64_t nums, int index) {
  Slab s;
  s.index = index;
  s.dates = {d0, d1};
  s.ids = {0, ids};
  s.nums = nums;
  return s;
}

}  // namespace discount::test_support
