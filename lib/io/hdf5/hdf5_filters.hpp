// The compression filters HDF5 plugins provide (zstd 32015, LZ4 32004,
// Blosc 32001), registered with this process's HDF5 from lib/codec when no
// plugin for them loads: the app then reads such inputs through HDF5 too
// (type conversion, checks), creates outputs that declare them, and
// `verify` reads them back, with or without HDF5_PLUGIN_PATH. A plugin that
// does load is kept.
#pragma once

#include <hdf5.h>

#include "codec/codec.hpp"

namespace discount {

// Once per process; thread-safe. Call under h5::library_mutex() or before
// threads read.
void register_codec_filters();

// The pipeline a dataset creation property list declares, as lib/codec
// runs it.
codec::Pipeline dataset_pipeline(hid_t dcpl);

}  // namespace discount
