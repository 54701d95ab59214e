#include "common/host_pages.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <new>
#include <utility>

namespace discount {

HostPages::HostPages(std::size_t bytes) {
  if (bytes == 0) return;
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  data_ = p;
  bytes_ = bytes;
}

HostPages::~HostPages() { release(); }

HostPages::HostPages(HostPages&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

HostPages& HostPages::operator=(HostPages&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void HostPages::release() noexcept {
  if (data_) ::munmap(data_, bytes_);
  data_ = nullptr;
  bytes_ = 0;
}

void touch_pages(void* data, std::size_t bytes) {
  static const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  volatile char* bytes_of = static_cast<volatile char*>(data);
  for (std::size_t at = 0; at < bytes; at += page) bytes_of[at] = 0;
}

}  // namespace discount
