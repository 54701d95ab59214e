// RAII for HDF5 identifiers, and a scope that silences HDF5's own error stack
// printing so that users see our one-line messages instead.
#pragma once

#include <hdf5.h>

#include <array>
#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace discount::h5 {

class Id {
 public:
  using Closer = herr_t (*)(hid_t);
  Id() = default;
  Id(hid_t id, Closer closer) : id_(id), closer_(closer) {}
  Id(const Id&) = delete;
  Id& operator=(const Id&) = delete;
  Id(Id&& other) noexcept : id_(std::exchange(other.id_, H5I_INVALID_HID)), closer_(other.closer_) {}
  Id& operator=(Id&& other) noexcept {
    if (this != &other) {
      reset();
      id_ = std::exchange(other.id_, H5I_INVALID_HID);
      closer_ = other.closer_;
    }
    return *this;
  }
  ~Id() { reset(); }
  void reset() {
    if (id_ >= 0 && closer_) closer_(id_);
    id_ = H5I_INVALID_HID;
  }
  // Close now and report failure (a close can flush and so fail on a full disk).
  bool close() {
    herr_t status = 0;
    if (id_ >= 0 && closer_) status = closer_(id_);
    id_ = H5I_INVALID_HID;
    return status >= 0;
  }
  hid_t get() const { return id_; }
  explicit operator bool() const { return id_ >= 0; }

 private:
  hid_t id_ = H5I_INVALID_HID;
  Closer closer_ = nullptr;
};

inline Id file(hid_t id) { return {id, H5Fclose}; }
inline Id dataset(hid_t id) { return {id, H5Dclose}; }
inline Id dataspace(hid_t id) { return {id, H5Sclose}; }
inline Id datatype(hid_t id) { return {id, H5Tclose}; }
inline Id plist(hid_t id) { return {id, H5Pclose}; }
inline Id attribute(hid_t id) { return {id, H5Aclose}; }
inline Id group(hid_t id) { return {id, H5Gclose}; }

// HDF5 builds with MPI are never thread-safe: the reader thread (H5Dread on
// chunked or converted inputs) and the writer thread (parallel-HDF5 writes)
// take this lock around every HDF5 call they make during a run.
std::mutex& library_mutex();

class QuietErrors {
 public:
  QuietErrors() {
    H5Eget_auto2(H5E_DEFAULT, &func_, &data_);
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  }
  ~QuietErrors() { H5Eset_auto2(H5E_DEFAULT, func_, data_); }
  QuietErrors(const QuietErrors&) = delete;
  QuietErrors& operator=(const QuietErrors&) = delete;

 private:
  H5E_auto2_t func_ = nullptr;
  void* data_ = nullptr;
};

// HDF5 setters and queries return a negative status on failure (an invalid
// id, a value the library refuses): throw internal_error naming the call
// rather than carry on with a default the code never asked for.
void check(herr_t status, const char* call);

// Dataset access for inputs: external raw storage files and virtual-dataset
// sources named relatively are looked up beside the HDF5 file (HDF5's
// ${ORIGIN} prefix), not in the working directory.
// File access for inputs: HDF5's metadata cache held to `metadata_cache_bytes`.
Id input_file_access(std::size_t metadata_cache_bytes);
Id input_dataset_access();

std::string shape_string(const std::vector<hsize_t>& dims);
std::vector<hsize_t> dataset_dims(hid_t dataset);
void write_string_attribute(hid_t object, const std::string& name, const std::string& value);

struct DatasetEntry {
  std::string path;  // "/rates/disc"
  std::vector<hsize_t> dims;
};
// The datasets reachable from the file's root through hard links, by path
// (a deep or cyclic group structure is cut short after `max_links` links).
std::vector<DatasetEntry> list_datasets(hid_t file, std::size_t max_links = 100000);
// The tail of a "dataset not found" message: "; datasets of rank 3 there:
// /rates/disc [120 x 50000 x 5]" (those of `rank`, or of `elements` elements
// when not 0; at most 8), or a plain statement that the file holds none.
std::string dataset_candidates(hid_t file, int rank, std::uint64_t elements = 0);
// Empty string when absent.
std::string read_string_attribute(hid_t object, const std::string& name);
// A 1-D contiguous dataset of `count` elements of `type`, allocated at
// creation and filled with zeros, for raw writes in place later (the
// output's run table and done-range record); an empty Id on failure.
Id zeroed_dataset(hid_t file, const char* name, hid_t type, hsize_t count);

// What HDF5's error stack holds after a failed call (HDF5 clears it when the
// next API call starts): every message, innermost (the cause) first, repeats
// dropped, joined by "; ".
std::string error_messages();

// Why a file HDF5 could not open, from the error stack of the failed
// H5Fopen: truncated (data invalid), locked by another process (HDF5's file
// locking), or anything else.
enum class OpenFailure { other, truncated, locked };
OpenFailure open_failure(const std::string& messages);

// A read that failed because the stored bytes are invalid (a filter such as
// gzip failed to decode a chunk, a checksum did not match, a chunk's size or
// address is impossible) rather than because the disk or file system failed:
// rerunning cannot help.
bool read_failure_is_damage(const std::string& messages);

}  // namespace discount::h5
