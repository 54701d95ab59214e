#include "io/hdf5/hdf5_filters.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "io/hdf5/hdf5_handle.hpp"

namespace discount {

namespace {

// HDF5's filter callback around one codec filter: on write the chunk is
// compressed (0: failed, which HDF5 turns into "skipped" for an optional
// filter), on read it is decoded to the size the stream's header gives.
template <int Id>
size_t run_filter(unsigned flags, size_t cd_nelmts, const unsigned cd_values[], size_t nbytes, size_t* buf_size,
                  void** buf) {
  codec::Filter filter{Id, 0, std::vector<unsigned>(cd_values, cd_values + cd_nelmts)};
  const auto* in = static_cast<const std::uint8_t*>(*buf);
  try {
    if (flags & H5Z_FLAG_REVERSE) {
      const std::size_t want = codec::decoded_size(filter, in, nbytes);
      if (want == 0) return 0;
      void* out = H5allocate_memory(want, false);
      if (!out) return 0;
      try {
        codec::decode_one(filter, in, nbytes, static_cast<std::uint8_t*>(out), want);
      } catch (...) {
        H5free_memory(out);
        return 0;
      }
      H5free_memory(*buf);
      *buf = out;
      *buf_size = want;
      return want;
    }
    std::vector<std::uint8_t> stored;
    if (!codec::encode_one(filter, in, nbytes, stored)) return 0;
    void* out = H5allocate_memory(stored.size(), false);
    if (!out) return 0;
    std::memcpy(out, stored.data(), stored.size());
    H5free_memory(*buf);
    *buf = out;
    *buf_size = stored.size();
    return stored.size();
  } catch (...) { return 0; }
}

template <int Id>
void register_one(const char* name) {
  if (!codec::implemented(Id)) return;
  {
    h5::QuietErrors quiet;
    if (H5Zfilter_avail(Id) > 0) return;  // a plugin loaded: HDF5's own
  }
  static const H5Z_class2_t filter = {H5Z_CLASS_T_VERS, static_cast<H5Z_filter_t>(Id), 1, 1, name, nullptr, nullptr,
                                      run_filter<Id>};
  H5Zregister(&filter);
}

}  // namespace

void register_codec_filters() {
  static std::once_flag once;
  std::call_once(once, [] {
    register_one<codec::kZstd>("zstd (discount_app)");
    register_one<codec::kLz4>("lz4 (discount_app)");
    register_one<codec::kBlosc>("blosc (discount_app)");
  });
}

codec::Pipeline dataset_pipeline(hid_t dcpl) {
  codec::Pipeline pipeline;
  const int n = H5Pget_nfilters(dcpl);
  for (int i = 0; i < n; ++i) {
    codec::Filter f;
    unsigned values[32] = {};
    std::size_t count = 32;
    char name[64] = {};
    const H5Z_filter_t id =
        H5Pget_filter2(dcpl, static_cast<unsigned>(i), &f.flags, &count, values, sizeof name, name, nullptr);
    if (id < 0) return {{-1, 0, {}}};  // unreadable: undecodable by lib/codec
    f.id = static_cast<int>(id);
    f.values.assign(values, values + std::min<std::size_t>(count, 32));
    pipeline.push_back(f);
  }
  return pipeline;
}

}  // namespace discount
