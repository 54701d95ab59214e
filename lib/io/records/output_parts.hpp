// The split layout's parts (output.layout: split). The master file's cv is an
// HDF5 virtual dataset mapped onto part files in a folder beside it,
// `<out name>.parts-<run id>/part-00000.h5`, named in the master relative to
// the master's directory, so the master and its folder move together. Each
// part holds a consecutive range of whole slabs along the chunk axis, as one
// contiguous, pre-allocated float64 dataset written by positional writes.
// The folder name is new for each fresh output: an overwrite writes a new
// set beside the old one, and removes the old set only after the new master
// is renamed into place.
#pragma once

#include <hdf5.h>

#include <array>
#include <cstdint>
#include <string>

#include <vector>

#include "common/paths.hpp"  // dir_of

#include "config/config.hpp"
#include "io/records/part_count.hpp"

namespace discount {

// Part boundaries along the chunk axis: part p holds slabs
// [n p / P, n (p + 1) / P) of the n slabs (the ranks' share formula, so P a
// multiple of the ranks gives each rank whole parts of its own on a fresh
// run). P is cut to n. Returns P + 1 unit positions, 0 first, `units` last.
std::vector<std::int64_t> part_bounds(const std::vector<Range>& slab_units, std::int64_t units, int parts);
// "0,12,25,37" and back; empty for a text that is not such a list.
std::string bounds_text(const std::vector<std::int64_t>& bounds);
std::vector<std::int64_t> parse_bounds(const std::string& text, std::int64_t units);

// "part-00003.h5"
std::string part_file_name(std::size_t part);
// "<base of out>.parts-<id>": a name no earlier run of this output used.
std::string new_parts_folder_name(const std::string& out_path);
// True when `name` is a part folder name of the output named `out_base`.
bool is_parts_folder_of(const std::string& name, const std::string& out_base);
std::string base_name(const std::string& path);
// fsync() of a folder, so that the names created or renamed in it are durable (best effort).
void fsync_dir(const std::string& dir);

// The dataset inside each part.
constexpr const char* kPartDataset = "cv";

// Creates a part: a float64 dataset of `dims`, contiguous and allocated (its
// blocks reserved on disk; free space checked on a memory-backed file
// system), made durable. Returns the dataset's offset. Throws io_error or
// create_error naming the file.
std::uint64_t create_part_file(const std::string& path, const std::array<std::int64_t, 3>& dims, OutputType dtype);
// An existing part's dataset offset, or what is wrong with it (missing, wrong
// shape or type, not contiguous, shorter than its data) in `damage`. With
// `compressed`, a part already stored compressed (io/records/part_compress.hpp) is
// no damage: *compressed is set, and the offset is 0.
std::uint64_t part_offset(const std::string& path, const std::array<std::int64_t, 3>& dims, OutputType dtype,
                          std::string& damage, bool* compressed = nullptr);

// A part file's identity as `stat` gives it (device, inode, size, mtime,
// ctime): the master records each part's at publication. Empty when missing.
std::string part_identity(const std::string& path);

// Maps the virtual dataset (dcpl of extents `dims`, the chunk axis at
// position `axis_pos`) onto the parts in `folder` (relative to the master);
// its fill value, read where a part is missing, is NaN.
void map_parts(hid_t dcpl, const std::array<std::int64_t, 3>& dims, int axis_pos,
               const std::vector<std::int64_t>& bounds, const std::string& folder);

// Removes a part set of the output at `out_path` (io/posix/part_record.hpp: only
// when its record names that output and folder); a warning line on stderr
// says why a folder was left alone.
void remove_part_set_or_warn(const std::string& folder, const std::string& out_path);

}  // namespace discount
