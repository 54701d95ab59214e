// HDF5 attributes as the next tool reads them: text as UTF-8 variable-length
// strings (h5py returns str, netCDF sees NC_STRING), integers as int64
// arrays, and a copy of a foreign object's attributes minus the bookkeeping
// that HDF5 dimension scales and netCDF-4 keep for themselves.
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <string>
#include <vector>

namespace discount::h5 {

// Replaces any attribute of that name.
void write_text_attribute(hid_t object, const std::string& name, const std::string& value);
void write_int_attribute(hid_t object, const std::string& name, const std::vector<std::int64_t>& values);
// A scalar string attribute, fixed-length or variable-length; empty when
// absent or not a string.
std::string read_text_attribute(hid_t object, const std::string& name);
// Attributes that belong to the file's structure rather than to the data:
// dimension-scale links (DIMENSION_LIST, REFERENCE_LIST, CLASS, NAME) and
// netCDF-4's own (_Netcdf4Dimid, _Netcdf4Coordinates, _NCProperties,
// _nc3_strict, _FillValue: a fill value is typed like the data it came with).
bool is_structural_attribute(const std::string& name);
// Frees what HDF5 allocated while reading variable-length data into
// `buffer` (H5Treclaim from HDF5 1.12, H5Dvlen_reclaim before).
void reclaim(hid_t type, hid_t space, void* buffer);
// Copies every attribute of `from` onto `to` except the structural ones,
// those named in `skip`, and reference-typed ones; an attribute `to`
// already has is replaced; each copy is named `prefix` + its name. Returns
// how many were copied.
int copy_attributes(hid_t from, hid_t to, const std::vector<std::string>& skip = {}, const std::string& prefix = {});

}  // namespace discount::h5
