#include "codec/compressors.hpp"

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

#if DISCOUNT_HAVE_LIBDEFLATE
#include <libdeflate.h>
#else
#include <zlib.h>
#endif
#if DISCOUNT_HAVE_ZSTD
#include <zstd.h>
#endif
#if DISCOUNT_HAVE_LZ4
#include <lz4.h>
#endif
#if DISCOUNT_HAVE_BLOSC
#include <blosc.h>
#endif

namespace discount::codec {

namespace {

unsigned value(const Filter& f, std::size_t i, unsigned fallback) {
  return i < f.values.size() ? f.values[i] : fallback;
}

[[noreturn]] void damaged(const Filter& f, const std::string& what) {
  throw DamagedChunk(filter_name(f.id) + ": " + what);
}

void check_size(const Filter& f, std::size_t got, std::size_t want) {
  if (got != want)
    damaged(f, "the stream decodes to " + std::to_string(got) + " bytes, not the chunk's " + std::to_string(want));
}

// ---------------------------------------------------------------- deflate
void inflate(const Filter& f, const std::uint8_t* in, std::size_t size, std::uint8_t* out, std::size_t want) {
#if DISCOUNT_HAVE_LIBDEFLATE
  struct Free {
    void operator()(libdeflate_decompressor* d) const { libdeflate_free_decompressor(d); }
  };
  thread_local std::unique_ptr<libdeflate_decompressor, Free> d(libdeflate_alloc_decompressor());
  if (!d) throw std::bad_alloc();
  std::size_t got = 0;
  const libdeflate_result r = libdeflate_zlib_decompress(d.get(), in, size, out, want, &got);
  if (r == LIBDEFLATE_INSUFFICIENT_SPACE)
    damaged(f, "the stream decodes to more bytes than the chunk's " + std::to_string(want));
  if (r != LIBDEFLATE_SUCCESS) damaged(f, "the stream is damaged");
  check_size(f, got, want);
#else
  uLongf got = static_cast<uLongf>(want);
  const int r = ::uncompress(out, &got, in, static_cast<uLong>(size));
  if (r == Z_BUF_ERROR) damaged(f, "the stream decodes to more bytes than the chunk's " + std::to_string(want));
  if (r != Z_OK) damaged(f, "the stream is damaged");
  check_size(f, got, want);
#endif
}

bool deflate(const Filter& f, const std::uint8_t* in, std::size_t size, std::vector<std::uint8_t>& out, bool optional) {
  const int level = static_cast<int>(std::min(9u, value(f, 0, 6)));
#if DISCOUNT_HAVE_LIBDEFLATE
  struct Free {
    void operator()(libdeflate_compressor* c) const { libdeflate_free_compressor(c); }
  };
  thread_local std::unique_ptr<libdeflate_compressor, Free> c[10];
  if (!c[level]) c[level].reset(libdeflate_alloc_compressor(level));
  if (!c[level]) throw std::bad_alloc();
  out.resize(optional ? size : libdeflate_zlib_compress_bound(c[level].get(), size));
  const std::size_t n = libdeflate_zlib_compress(c[level].get(), in, size, out.data(), out.size());
  if (n == 0 || (optional && n >= size)) return false;
  out.resize(n);
  return true;
#else
  uLongf n = optional ? static_cast<uLongf>(size) : ::compressBound(static_cast<uLong>(size));
  out.resize(n);
  if (::compress2(out.data(), &n, in, static_cast<uLong>(size), level) != Z_OK || (optional && n >= size)) return false;
  out.resize(n);
  return true;
#endif
}

// ---------------------------------------------------------------- zstd
#if DISCOUNT_HAVE_ZSTD
void unzstd(const Filter& f, const std::uint8_t* in, std::size_t size, std::uint8_t* out, std::size_t want) {
  struct Free {
    void operator()(ZSTD_DCtx* d) const { ZSTD_freeDCtx(d); }
  };
  thread_local std::unique_ptr<ZSTD_DCtx, Free> d(ZSTD_createDCtx());
  const std::size_t got = ZSTD_decompressDCtx(d.get(), out, want, in, size);
  if (ZSTD_isError(got)) damaged(f, ZSTD_getErrorName(got));
  check_size(f, got, want);
}
bool zstd(const Filter& f, const std::uint8_t* in, std::size_t size, std::vector<std::uint8_t>& out, bool optional) {
  struct Free {
    void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
  };
  thread_local std::unique_ptr<ZSTD_CCtx, Free> c(ZSTD_createCCtx());
  out.resize(ZSTD_compressBound(size));
  const std::size_t n = ZSTD_compressCCtx(c.get(), out.data(), out.size(), in, size, static_cast<int>(value(f, 0, 3)));
  if (ZSTD_isError(n) || (optional && n >= size)) return false;
  out.resize(n);
  return true;
}
#endif

// ---------------------------------------------------------------- LZ4
// hdf5plugin's format: the original size (8 bytes, big-endian), the block
// size (4), then per block its stored size (4) and its bytes, stored raw
// when LZ4 did not shrink it.
#if DISCOUNT_HAVE_LZ4
std::uint64_t load_be(const std::uint8_t* p, int bytes) {
  std::uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v = v << 8 | p[i];
  return v;
}
void store_be(std::uint8_t* p, std::uint64_t v, int bytes) {
  for (int i = bytes; i-- > 0; v >>= 8) p[i] = static_cast<std::uint8_t>(v & 0xff);
}
constexpr std::size_t kLz4DefaultBlock = std::size_t{1} << 30;

void unlz4(const Filter& f, const std::uint8_t* in, std::size_t size, std::uint8_t* out, std::size_t want) {
  if (size < 12) damaged(f, "the chunk is shorter than LZ4's header");
  const std::uint64_t total = load_be(in, 8);
  std::uint64_t block = load_be(in + 8, 4);
  check_size(f, static_cast<std::size_t>(total), want);
  if (block == 0 && total) damaged(f, "a block size of 0");
  if (block > total) block = total;
  std::size_t at = 12, done = 0;
  while (done < want) {
    const std::size_t this_block = std::min<std::size_t>(block, want - done);
    if (size - at < 4) damaged(f, "the chunk ends inside a block header");
    const std::size_t stored = load_be(in + at, 4);
    at += 4;
    if (stored > size - at) damaged(f, "a block runs past the chunk's end");
    if (stored == this_block) {
      std::memcpy(out + done, in + at, stored);
    } else {
      const int got = LZ4_decompress_safe(reinterpret_cast<const char*>(in + at), reinterpret_cast<char*>(out + done),
                                          static_cast<int>(stored), static_cast<int>(this_block));
      if (got < 0 || static_cast<std::size_t>(got) != this_block) damaged(f, "a block is damaged");
    }
    at += stored;
    done += this_block;
  }
}
bool lz4(const Filter& f, const std::uint8_t* in, std::size_t size, std::vector<std::uint8_t>& out, bool optional) {
  std::size_t block = value(f, 0, 0) ? value(f, 0, 0) : kLz4DefaultBlock;
  if (block > size) block = size;
  if (block == 0) block = 1;
  const std::size_t blocks = size ? (size - 1) / block + 1 : 0;
  out.resize(12 + blocks * (4 + static_cast<std::size_t>(LZ4_compressBound(static_cast<int>(block)))));
  store_be(out.data(), size, 8);
  store_be(out.data() + 8, block, 4);
  std::size_t at = 12;
  for (std::size_t done = 0; done < size;) {
    const std::size_t this_block = std::min(block, size - done);
    int n = LZ4_compress_default(reinterpret_cast<const char*>(in + done), reinterpret_cast<char*>(out.data() + at + 4),
                                 static_cast<int>(this_block), LZ4_compressBound(static_cast<int>(this_block)));
    if (n <= 0) return false;
    if (static_cast<std::size_t>(n) >= this_block) {
      std::memcpy(out.data() + at + 4, in + done, this_block);
      n = static_cast<int>(this_block);
    }
    store_be(out.data() + at, static_cast<std::uint64_t>(n), 4);
    at += 4 + static_cast<std::size_t>(n);
    done += this_block;
  }
  if (optional && at >= size) return false;
  out.resize(at);
  return true;
}
#endif

// ---------------------------------------------------------------- Blosc
// hdf5-blosc's client data: filter and format versions, element size,
// chunk bytes, level, shuffle (0 none, 1 byte, 2 bit), compressor code.
#if DISCOUNT_HAVE_BLOSC
void unblosc(const Filter& f, const std::uint8_t* in, std::size_t size, std::uint8_t* out, std::size_t want) {
  std::size_t nbytes = 0;
  if (blosc_cbuffer_validate(in, size, &nbytes) != 0) damaged(f, "the Blosc header is damaged");
  check_size(f, nbytes, want);
  const int got = blosc_decompress_ctx(in, out, want, 1);
  if (got < 0 || static_cast<std::size_t>(got) != want) damaged(f, "the Blosc stream is damaged");
}
bool blosc(const Filter& f, const std::uint8_t* in, std::size_t size, std::vector<std::uint8_t>& out, bool optional) {
  const char* names[] = {"blosclz", "lz4", "lz4hc", "snappy", "zlib", "zstd"};
  const unsigned code = value(f, 6, 0);
  out.resize(size + BLOSC_MAX_OVERHEAD);
  const int n = blosc_compress_ctx(static_cast<int>(value(f, 4, 5)), static_cast<int>(value(f, 5, 1)),
                                   std::max<std::size_t>(1, value(f, 2, 8)), size, in, out.data(), out.size(),
                                   code < 6 ? names[code] : "blosclz", 0, 1);
  if (n <= 0 || (optional && static_cast<std::size_t>(n) >= size)) return false;
  out.resize(static_cast<std::size_t>(n));
  return true;
}
#endif

}  // namespace

std::size_t decoded_size(const Filter& f, const std::uint8_t* in, std::size_t size) {
  switch (f.id) {
#if DISCOUNT_HAVE_ZSTD
    case kZstd: {
      const unsigned long long n = ZSTD_getFrameContentSize(in, size);
      return n == ZSTD_CONTENTSIZE_UNKNOWN || n == ZSTD_CONTENTSIZE_ERROR ? 0 : static_cast<std::size_t>(n);
    }
#endif
#if DISCOUNT_HAVE_LZ4
    case kLz4: return size >= 12 ? static_cast<std::size_t>(load_be(in, 8)) : 0;
#endif
#if DISCOUNT_HAVE_BLOSC
    case kBlosc: {
      std::size_t n = 0;
      return blosc_cbuffer_validate(in, size, &n) == 0 ? n : 0;
    }
#endif
    default: return 0;
  }
}

void decode_one(const Filter& f, const std::uint8_t* in, std::size_t size, std::uint8_t* out, std::size_t want) {
  decompress(f, in, size, out, want);
}

bool encode_one(const Filter& f, const std::uint8_t* in, std::size_t size, std::vector<std::uint8_t>& out) {
  return compress(f, in, size, out, true);
}

bool have_zstd() { return DISCOUNT_HAVE_ZSTD; }
bool have_lz4() { return DISCOUNT_HAVE_LZ4; }
bool have_blosc() { return DISCOUNT_HAVE_BLOSC; }

void decompress(const Filter& f, const std::uint8_t* in, std::size_t size, std::uint8_t* out, std::size_t want) {
  switch (f.id) {
    case kDeflate: return inflate(f, in, size, out, want);
#if DISCOUNT_HAVE_ZSTD
    case kZstd: return unzstd(f, in, size, out, want);
#endif
#if DISCOUNT_HAVE_LZ4
    case kLz4: return unlz4(f, in, size, out, want);
#endif
#if DISCOUNT_HAVE_BLOSC
    case kBlosc: return unblosc(f, in, size, out, want);
#endif
    default: throw DamagedChunk(filter_name(f.id) + " is not decoded by this build");
  }
}

bool compress(const Filter& f, const std::uint8_t* in, std::size_t size, std::vector<std::uint8_t>& out,
              bool optional) {
  bool done = false;
  switch (f.id) {
    case kDeflate: done = deflate(f, in, size, out, optional); break;
#if DISCOUNT_HAVE_ZSTD
    case kZstd: done = zstd(f, in, size, out, optional); break;
#endif
#if DISCOUNT_HAVE_LZ4
    case kLz4: done = lz4(f, in, size, out, optional); break;
#endif
#if DISCOUNT_HAVE_BLOSC
    case kBlosc: done = blosc(f, in, size, out, optional); break;
#endif
    default: throw std::logic_error(filter_name(f.id) + " is not encoded by this build");
  }
  if (!done && !optional) throw std::runtime_error(filter_name(f.id) + " failed to compress a chunk");
  return done;
}

}  // namespace discount::codec
