#include "codec/codec.hpp"

#include <algorithm>
#include <cstring>

#include "codec/compressors.hpp"

namespace discount::codec {

namespace {

bool is_compressor(int id) { return id == kDeflate || id == kZstd || id == kLz4 || id == kBlosc; }

std::uint32_t load_le32(const std::uint8_t* p) {
  return std::uint32_t{p[0]} | std::uint32_t{p[1]} << 8 | std::uint32_t{p[2]} << 16 | std::uint32_t{p[3]} << 24;
}

// The element size shuffle works on: its client data, set by HDF5 from the
// dataset's type when the dataset is made.
std::size_t shuffle_size(const Filter& f) { return f.values.empty() ? 1 : std::max(1u, f.values[0]); }

Workspace& own_workspace() {
  thread_local Workspace s;
  return s;
}

}  // namespace

std::string filter_name(int id) {
  switch (id) {
    case kDeflate: return "deflate";
    case kShuffle: return "shuffle";
    case kFletcher32: return "fletcher32";
    case kZstd: return "zstd";
    case kLz4: return "lz4";
    case kBlosc: return "blosc";
    case kBitshuffle: return "bitshuffle";
    default: return "filter " + std::to_string(id);
  }
}

std::string describe(const Pipeline& pipeline) {
  if (pipeline.empty()) return "none";
  std::string text;
  for (const Filter& f : pipeline) {
    if (!text.empty()) text += " + ";
    text += filter_name(f.id);
    if ((f.id == kDeflate || f.id == kZstd) && !f.values.empty()) text += " " + std::to_string(f.values[0]);
    if (f.id == kBlosc && f.values.size() > 4) text += " " + std::to_string(f.values[4]);
  }
  return text;
}

bool implemented(int id) {
  switch (id) {
    case kShuffle:
    case kFletcher32:
    case kDeflate: return true;
    case kZstd: return have_zstd();
    case kLz4: return have_lz4();
    case kBlosc: return have_blosc();
    default: return false;
  }
}

std::string unimplemented(const Pipeline& pipeline) {
  int compressors = 0;
  for (const Filter& f : pipeline) {
    if (!implemented(f.id)) {
      const std::string name = filter_name(f.id);
      return (name.rfind("filter ", 0) == 0 ? name : "filter " + name + " (" + std::to_string(f.id) + ")") +
             " is not one this build decodes";
    }
    if (is_compressor(f.id)) ++compressors;
  }
  if (compressors > 1) return "two compression filters in one pipeline";
  return {};
}

void shuffle(const std::uint8_t* in, std::uint8_t* out, std::size_t bytes, std::size_t size) {
  const std::size_t n = size > 1 ? bytes / size : 0;
  for (std::size_t j = 0; j < size && n; ++j)
    for (std::size_t i = 0; i < n; ++i) out[j * n + i] = in[i * size + j];
  // Bytes past the last whole element stay where they are, as HDF5 leaves them.
  std::memcpy(out + n * size, in + n * size, bytes - n * size);
}

void unshuffle(const std::uint8_t* in, std::uint8_t* out, std::size_t bytes, std::size_t size) {
  const std::size_t n = size > 1 ? bytes / size : 0;
  if (size == 8 && n) {
    // The common case (float64), eight streams merged in one pass.
    const std::uint8_t* s[8];
    for (int j = 0; j < 8; ++j) s[j] = in + static_cast<std::size_t>(j) * n;
    for (std::size_t i = 0; i < n; ++i)
      for (int j = 0; j < 8; ++j) out[i * 8 + static_cast<std::size_t>(j)] = s[j][i];
  } else {
    for (std::size_t j = 0; j < size && n; ++j)
      for (std::size_t i = 0; i < n; ++i) out[i * size + j] = in[j * n + i];
  }
  std::memcpy(out + n * size, in + n * size, bytes - n * size);
}

// HDF5's Fletcher32: 16-bit big-endian words, sums folded every 360 words.
std::uint32_t fletcher32(const std::uint8_t* data, std::size_t bytes) {
  std::uint32_t sum1 = 0, sum2 = 0;
  std::size_t words = bytes / 2;
  while (words) {
    std::size_t run = std::min<std::size_t>(words, 360);
    words -= run;
    do {
      sum1 += static_cast<std::uint32_t>(data[0]) << 8 | data[1];
      data += 2;
      sum2 += sum1;
    } while (--run);
    sum1 = (sum1 & 0xffff) + (sum1 >> 16);
    sum2 = (sum2 & 0xffff) + (sum2 >> 16);
  }
  if (bytes % 2) {
    sum1 += static_cast<std::uint32_t>(*data) << 8;
    sum2 += sum1;
    sum1 = (sum1 & 0xffff) + (sum1 >> 16);
    sum2 = (sum2 & 0xffff) + (sum2 >> 16);
  }
  sum1 = (sum1 & 0xffff) + (sum1 >> 16);
  sum2 = (sum2 & 0xffff) + (sum2 >> 16);
  return sum2 << 16 | sum1;
}

namespace {

// Checks the checksum after `want` bytes of `in` (`size` in all) and moves the bytes to `dest`.
void unfletcher32(const std::uint8_t* in, std::size_t size, std::uint8_t* dest, std::size_t want) {
  if (size < 4 || size - 4 != want)
    throw DamagedChunk("Fletcher32: the chunk holds " + std::to_string(size) + " bytes, not " +
                       std::to_string(want + 4));
  const std::uint32_t stored_sum = load_le32(in + want);
  const std::uint32_t sum = fletcher32(in, want);
  // HDF5 also accepts the byte order some old releases wrote.
  const std::uint32_t swapped = (sum & 0x00ff00ffu) << 8 | (sum & 0xff00ff00u) >> 8;
  if (stored_sum != sum && stored_sum != swapped) throw DamagedChunk("Fletcher32 checksum mismatch");
  if (dest != in) std::memmove(dest, in, want);
}

}  // namespace

void decode(const Pipeline& pipeline, unsigned mask, const std::uint8_t* stored, std::size_t stored_bytes,
            std::uint8_t* out, std::size_t chunk_bytes, Workspace* workspace) {
  // The size each filter was handed on write: known forward from the chunk
  // up to the one compressor (only Fletcher32 changes it there), and
  // backward from the stored size after it.
  const std::size_t n = pipeline.size();
  std::size_t compressor = n, first = n;  // the compressor, and the first filter applied
  for (std::size_t i = n; i-- > 0;)
    if (!((mask >> i) & 1u)) {
      if (is_compressor(pipeline[i].id) && compressor == n) compressor = i;
      first = i;
    }
  std::vector<std::size_t> size_before(n + 1, chunk_bytes);
  for (std::size_t i = 0; i < n; ++i) {
    const bool skipped = (mask >> i) & 1u;
    size_before[i + 1] = size_before[i] + (!skipped && pipeline[i].id == kFletcher32 ? 4 : 0);
  }
  Workspace& s = workspace ? *workspace : own_workspace();
  const std::uint8_t* in = stored;
  std::size_t size = stored_bytes;
  std::vector<std::uint8_t>* next = &s.a;
  for (std::size_t i = n; i-- > 0;) {
    if ((mask >> i) & 1u) continue;
    const Filter& f = pipeline[i];
    std::size_t want = size_before[i];
    if (compressor < n && i > compressor) {
      if (f.id == kFletcher32 && size < 4) throw DamagedChunk("Fletcher32: the chunk is shorter than its checksum");
      want = f.id == kFletcher32 ? size - 4 : size;
    }
    // The last step (the first filter applied on write) writes straight into `out`.
    std::uint8_t* dest = out;
    if (i != first) {
      if (next->size() < want) next->resize(want);
      dest = next->data();
    }
    switch (f.id) {
      case kFletcher32: unfletcher32(in, size, dest, want); break;
      case kShuffle:
        if (size != want)
          throw DamagedChunk("shuffle: " + std::to_string(size) + " bytes where " + std::to_string(want) +
                             " were stored");
        unshuffle(in, dest, want, shuffle_size(f));
        break;
      default: decompress(f, in, size, dest, want); break;
    }
    in = dest;
    size = want;
    next = next == &s.a ? &s.b : &s.a;
  }
  if (in != out) {  // every filter skipped
    if (size != chunk_bytes)
      throw DamagedChunk("the chunk holds " + std::to_string(size) + " bytes, not " + std::to_string(chunk_bytes));
    std::memcpy(out, in, chunk_bytes);
  }
}

unsigned encode(const Pipeline& pipeline, const std::uint8_t* raw, std::size_t raw_bytes,
                std::vector<std::uint8_t>& out, Workspace* workspace) {
  // Each filter reads the previous one's bytes (the raw chunk first) and
  // writes into a workspace buffer, the last one straight into `out`: no
  // copy in, none out, unless filters were skipped at the end.
  Workspace& s = workspace ? *workspace : own_workspace();
  const std::uint8_t* cur = raw;
  std::size_t size = raw_bytes;
  unsigned mask = 0;
  for (std::size_t i = 0; i < pipeline.size(); ++i) {
    const Filter& f = pipeline[i];
    std::vector<std::uint8_t>& dst = i + 1 == pipeline.size() ? out : (cur == s.a.data() ? s.b : s.a);
    switch (f.id) {
      case kShuffle:
        dst.resize(size);
        shuffle(cur, dst.data(), size, shuffle_size(f));
        break;
      case kFletcher32: {
        const std::uint32_t sum = fletcher32(cur, size);
        dst.resize(size + 4);
        std::memmove(dst.data(), cur, size);
        for (int b = 0; b < 4; ++b) dst[size + static_cast<std::size_t>(b)] = static_cast<std::uint8_t>(sum >> (8 * b));
        break;
      }
      default: {
        const bool optional = f.flags & 1u;
        if (!compress(f, cur, size, dst, optional)) {
          mask |= 1u << i;  // stored unfiltered by this filter, as HDF5 does
          continue;
        }
        break;
      }
    }
    cur = dst.data();
    size = dst.size();
  }
  if (cur != out.data() || size != out.size()) out.assign(cur, cur + size);
  return mask;
}

}  // namespace discount::codec
