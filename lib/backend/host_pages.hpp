// Large host buffers taken straight from the kernel (anonymous mmap) and
// given back at destruction. The pipeline's staging slabs use them, so that
// repeated runs in one process keep the same resident memory whatever the
// Kokkos version: Kokkos 3.4's HostSpace mapped each allocation itself, but
// Kokkos 4 allocates through operator new, and glibc then keeps every freed
// slab buffer in its heap (docs/architecture.md, "Host memory between runs").
#pragma once

#include <cstddef>

namespace discount {

class HostPages {
 public:
  HostPages() = default;
  // Throws std::bad_alloc when the kernel refuses the mapping. Zero bytes maps nothing.
  explicit HostPages(std::size_t bytes);
  ~HostPages();
  HostPages(HostPages&& other) noexcept;
  HostPages& operator=(HostPages&& other) noexcept;
  HostPages(const HostPages&) = delete;
  HostPages& operator=(const HostPages&) = delete;

  void* data() const { return data_; }
  std::size_t bytes() const { return bytes_; }

 private:
  void release() noexcept;
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

// Writes one byte of every page of [data, data + bytes), so the kernel maps
// them now instead of on the first read into them.
void touch_pages(void* data, std::size_t bytes);

}  // namespace discount
