// What transparent huge pages would do for the staging buffers (issue 22,
// item 2): maps 1 GiB of anonymous memory with and without MADV_HUGEPAGE,
// writes one byte per 4 KiB page (the first touch the staging thread pays),
// then copies 1 MiB blocks into it five times (what a positional read into a
// staging slab does). Each variant twice: the first use of memory the kernel
// must find (and, with MADV_HUGEPAGE under defrag=madvise, compact) first,
// then memory it has just been given back.
//   g++ -O2 -std=c++17 scripts/bench/cpp/hugepage_touch.cpp -o /tmp/hugepage_touch && /tmp/hugepage_touch
#include <sys/mman.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

int main() {
  const std::size_t bytes = std::size_t{1} << 30;
  const double gb = static_cast<double>(bytes) / 1e9;
  std::printf("THP mode: see /sys/kernel/mm/transparent_hugepage/{enabled,defrag}\n");
  for (int huge = 0; huge < 2; ++huge)
    for (int round = 0; round < 2; ++round) {
      const auto t0 = std::chrono::steady_clock::now();
      char* p = static_cast<char*>(::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
      if (p == MAP_FAILED) return 1;
#ifdef MADV_HUGEPAGE
      if (huge) ::madvise(p, bytes, MADV_HUGEPAGE);
#endif
      for (std::size_t i = 0; i < bytes; i += 4096) p[i] = 1;
      const auto t1 = std::chrono::steady_clock::now();
      std::vector<char> block(std::size_t{1} << 20, 3);
      for (int r = 0; r < 5; ++r)
        for (std::size_t i = 0; i < bytes; i += block.size()) std::memcpy(p + i, block.data(), block.size());
      const auto t2 = std::chrono::steady_clock::now();
      const double touch = std::chrono::duration<double>(t1 - t0).count(),
                   copy = std::chrono::duration<double>(t2 - t1).count();
      std::printf("%s, use %d: first touch %.2f GB/s, copies into it %.2f GB/s\n",
                  huge ? "MADV_HUGEPAGE" : "4 KiB pages  ", round + 1, gb / touch, 5 * gb / copy);
      ::munmap(p, bytes);
    }
  return 0;
}
