// The files an HDF5 input refers to, checked before any read: the sources of
// a virtual dataset, external raw storage files, and a digest of the input
// file's own bytes for the job's identity.
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <string>

namespace discount {

// A file an HDF5 dataset names (external raw storage, virtual source): an
// absolute name as is, a relative one against the HDF5 file's folder, as the
// ${ORIGIN} prefix makes HDF5 do.
std::string beside(const std::string& h5_file, const std::string& name);

// A digest of the file's bytes at 18 places: the first and last 64 KiB and 16
// blocks spread evenly between (about 1 MiB read). A byte-identical copy
// gives the same text; other data almost always changes a sampled block,
// though a change confined to bytes outside them goes unseen (docs/errors.md).
std::string sampled_content(const std::string& path, std::uint64_t size);

// A virtual dataset reads fill values where a source file is missing: refused
// (66). `file` is the HDF5 file, `where` names the dataset for messages.
void check_virtual_sources(hid_t dcpl, const std::string& file, const std::string& where);

// External raw storage: every byte the dataset needs must exist in its files
// (HDF5 reads zeros past a file's end): a missing file is refused with 66,
// a short one with 65.
void check_external_files(hid_t dcpl, int count, std::uint64_t bytes, const std::string& file,
                          const std::string& where);

}  // namespace discount
