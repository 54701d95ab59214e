// backend/host_pages: buffers mapped from the kernel, zero-filled, moved
// without copying, given back once; touch_pages maps every page.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <utility>

#include "backend/host_pages.hpp"

using discount::HostPages;

TEST(HostPages, MapsZeroFilledPageAlignedMemory) {
  const std::size_t bytes = 3 * static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)) + 17;
  HostPages pages(bytes);
  ASSERT_NE(pages.data(), nullptr);
  EXPECT_EQ(pages.bytes(), bytes);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(pages.data()) % static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE)), 0u);
  const auto* p = static_cast<const unsigned char*>(pages.data());
  std::size_t nonzero = 0;
  for (std::size_t i = 0; i < bytes; ++i) nonzero += p[i] != 0;
  EXPECT_EQ(nonzero, 0u);
  std::memset(pages.data(), 0xab, bytes);  // writable to the last byte
  EXPECT_EQ(p[bytes - 1], 0xab);
}

TEST(HostPages, ZeroBytesMapNothingAndMovesTransferOwnership) {
  HostPages none(0);
  EXPECT_EQ(none.data(), nullptr);
  HostPages a(1 << 20);
  void* data = a.data();
  HostPages b(std::move(a));
  EXPECT_EQ(b.data(), data);
  EXPECT_EQ(a.data(), nullptr);  // NOLINT(bugprone-use-after-move): the moved-from buffer is empty
  HostPages c;
  c = std::move(b);
  EXPECT_EQ(c.data(), data);
  EXPECT_EQ(c.bytes(), std::size_t{1} << 20);
  EXPECT_EQ(b.data(), nullptr);  // NOLINT(bugprone-use-after-move)
}

TEST(HostPages, TouchPagesWritesOneByteOfEveryPage) {
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  const std::size_t bytes = 37 * page + 5;
  HostPages pages(bytes);
  auto* p = static_cast<unsigned char*>(pages.data());
  std::memset(p, 0xab, bytes);
  discount::touch_pages(pages.data(), bytes);
  std::size_t written = 0, kept = 0;
  for (std::size_t at = 0; at < bytes; ++at) {
    if (at % page == 0)
      written += p[at] == 0;
    else
      kept += p[at] == 0xab;
  }
  EXPECT_EQ(written, 38u);      // the first byte of each page, the partial last one too
  EXPECT_EQ(kept, bytes - 38);  // nothing else
}
