#include "codec/codec.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

using namespace discount::codec;

namespace {

// Discount-like values: exp(-r t) rounded to 8 decimals, odd length so the
// shuffle's tail bytes and the LZ4 blocks' last piece are exercised.
std::vector<std::uint8_t> sample(std::size_t elements, std::size_t tail = 3) {
  std::vector<double> v(elements);
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> rate(0.005, 0.08);
  for (std::size_t i = 0; i < elements; ++i) v[i] = std::round(std::exp(-rate(rng) * (i % 360) / 12.0) * 1e8) / 1e8;
  std::vector<std::uint8_t> bytes(elements * 8 + tail);
  std::memcpy(bytes.data(), v.data(), elements * 8);
  for (std::size_t i = 0; i < tail; ++i) bytes[elements * 8 + i] = static_cast<std::uint8_t>(0xa0 + i);
  return bytes;
}

std::vector<Pipeline> pipelines() {
  std::vector<Pipeline> all = {
      {{kDeflate, 1, {4}}},
      {{kShuffle, 1, {8}}, {kDeflate, 1, {4}}},
      {{kShuffle, 1, {8}}, {kDeflate, 1, {1}}, {kFletcher32, 0, {}}},
      {{kFletcher32, 0, {}}},
      {{kShuffle, 1, {8}}},
  };
  if (implemented(kZstd)) all.push_back({{kShuffle, 1, {8}}, {kZstd, 1, {3}}});
  if (implemented(kLz4)) {
    all.push_back({{kLz4, 1, {0}}});
    all.push_back({{kShuffle, 1, {8}}, {kLz4, 1, {4096}}});  // several blocks
  }
  if (implemented(kBlosc)) all.push_back({{kBlosc, 1, {2, 2, 8, 0, 5, 1, 1}}});
  return all;
}

}  // namespace

TEST(Codec, EveryPipelineRoundTripsBitForBit) {
  const std::vector<std::uint8_t> raw = sample(25013);
  for (const Pipeline& p : pipelines()) {
    SCOPED_TRACE(describe(p));
    std::vector<std::uint8_t> stored;
    const unsigned mask = encode(p, raw.data(), raw.size(), stored);
    // LZ4 without shuffle does not shrink float64 digits: its optional
    // filter is then skipped, and the chunk must still round-trip.
    if (!(p.size() == 1 && p[0].id == kLz4)) { EXPECT_EQ(mask, 0u); }
    std::vector<std::uint8_t> back(raw.size(), 0xee);
    decode(p, mask, stored.data(), stored.size(), back.data(), back.size());
    EXPECT_EQ(back, raw);
  }
}

TEST(Codec, CompressorsShrinkRealisticData) {
  const std::vector<std::uint8_t> raw = sample(50000, 0);
  std::vector<std::uint8_t> stored;
  encode({{kShuffle, 1, {8}}, {kDeflate, 1, {4}}}, raw.data(), raw.size(), stored);
  EXPECT_LT(stored.size(), raw.size() * 9 / 10);
}

TEST(Codec, IncompressibleChunkSkipsAnOptionalFilter) {
  std::vector<std::uint8_t> raw(4096);
  std::mt19937 rng(3);
  for (auto& b : raw) b = static_cast<std::uint8_t>(rng());
  const Pipeline p{{kDeflate, 1, {9}}};
  std::vector<std::uint8_t> stored;
  const unsigned mask = encode(p, raw.data(), raw.size(), stored);
  EXPECT_EQ(mask, 1u);
  EXPECT_EQ(stored, raw);
  std::vector<std::uint8_t> back(raw.size());
  decode(p, mask, stored.data(), stored.size(), back.data(), back.size());
  EXPECT_EQ(back, raw);
}

// The encoders reuse their output buffers: a buffer holding an earlier,
// larger chunk's bytes ends up holding exactly this chunk's, whether the
// last filter wrote it or was skipped (shuffled random bytes do not shrink).
TEST(Codec, EncodeIntoAUsedBufferWithTheLastFilterWrittenOrSkipped) {
  std::vector<std::uint8_t> random(40000);
  std::mt19937 rng(5);
  for (auto& b : random) b = static_cast<std::uint8_t>(rng());
  const std::vector<std::uint8_t> smooth = sample(5001);
  const Pipeline p{{kShuffle, 1, {8}}, {kDeflate, 1, {4}}};
  std::vector<std::uint8_t> stored(100000, 0xee);
  const std::vector<const std::vector<std::uint8_t>*> chunks = {&random, &smooth, &random};
  for (const auto* raw : chunks) {
    const unsigned mask = encode(p, raw->data(), raw->size(), stored);
    EXPECT_EQ(mask, raw == &random ? 2u : 0u);
    if (raw == &random) {
      std::vector<std::uint8_t> shuffled(raw->size());
      shuffle(raw->data(), shuffled.data(), raw->size(), 8);
      EXPECT_EQ(stored, shuffled);
    }
    std::vector<std::uint8_t> back(raw->size(), 0xee);
    decode(p, mask, stored.data(), stored.size(), back.data(), back.size());
    EXPECT_EQ(back, *raw);
  }
}

TEST(Codec, ShuffleMatchesHdf5Layout) {
  const std::uint8_t in[] = {1, 2, 3, 4, 5, 6, 7};  // two 3-byte elements and a tail byte
  std::uint8_t out[7];
  shuffle(in, out, 7, 3);
  const std::uint8_t want[] = {1, 4, 2, 5, 3, 6, 7};
  EXPECT_EQ(0, std::memcmp(out, want, 7));
  std::uint8_t back[7];
  unshuffle(out, back, 7, 3);
  EXPECT_EQ(0, std::memcmp(back, in, 7));
}

TEST(Codec, Fletcher32OfKnownBytes) {
  // Worked by hand: words 0x0102, 0x0304 and the odd byte 0x05 << 8.
  const std::uint8_t in[] = {1, 2, 3, 4, 5};
  const std::uint32_t sum1 = 0x0102 + 0x0304 + 0x0500;
  const std::uint32_t sum2 = 0x0102 + (0x0102 + 0x0304) + sum1;
  EXPECT_EQ(fletcher32(in, 5), (sum2 << 16) | sum1);
}

TEST(Codec, DamagedChunksThrowAndNeverOverrun) {
  const std::vector<std::uint8_t> raw = sample(4999);
  for (const Pipeline& p : pipelines()) {
    SCOPED_TRACE(describe(p));
    std::vector<std::uint8_t> stored;
    const unsigned mask = encode(p, raw.data(), raw.size(), stored);
    // Truncated, and a byte more or fewer than the chunk's size.
    std::vector<std::uint8_t> back(raw.size() + 64, 0xee);
    EXPECT_THROW(decode(p, mask, stored.data(), stored.size() / 2, back.data(), raw.size()), DamagedChunk);
    if (p.size() == 1 && p[0].id == kShuffle) continue;  // shuffle alone has no size of its own to check
    EXPECT_THROW(decode(p, mask, stored.data(), stored.size(), back.data(), raw.size() - 8), DamagedChunk);
    for (std::size_t i = raw.size() - 8; i < back.size(); ++i) ASSERT_EQ(back[i], 0xee) << "wrote past the chunk";
  }
  // A flipped byte under Fletcher32 is caught.
  const Pipeline p{{kShuffle, 1, {8}}, {kDeflate, 1, {4}}, {kFletcher32, 0, {}}};
  std::vector<std::uint8_t> stored;
  encode(p, raw.data(), raw.size(), stored);
  stored[stored.size() / 3] ^= 0x10;
  std::vector<std::uint8_t> back(raw.size());
  EXPECT_THROW(decode(p, 0, stored.data(), stored.size(), back.data(), back.size()), DamagedChunk);
}

TEST(Codec, DescribeAndUnimplemented) {
  EXPECT_EQ(describe({}), "none");
  EXPECT_EQ(describe({{kShuffle, 1, {8}}, {kDeflate, 1, {4}}}), "shuffle + deflate 4");
  EXPECT_NE(unimplemented({{kBitshuffle, 0, {}}}).find("bitshuffle (32008)"), std::string::npos);
  EXPECT_EQ(unimplemented({{kShuffle, 1, {8}}, {kDeflate, 1, {4}}}), "");
  EXPECT_NE(unimplemented({{kDeflate, 1, {4}}, {kDeflate, 1, {4}}}), "");
}
