// Objects kept for reuse across threads (buffers whose pages are already
// faulted in): take() hands back a kept one, or a default-made T when none
// is kept; give() keeps one, up to `most`, and drops the rest. Thread-safe.
#pragma once

#include <cstddef>
#include <limits>
#include <mutex>
#include <utility>
#include <vector>

namespace discount {

template <class T>
class FreeList {
 public:
  explicit FreeList(std::size_t most = std::numeric_limits<std::size_t>::max()) : most_(most) {}
  T take() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (free_.empty()) return T{};
    T t = std::move(free_.back());
    free_.pop_back();
    return t;
  }
  void give(T&& t) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (free_.size() < most_) free_.push_back(std::move(t));
  }

 private:
  std::mutex mutex_;
  std::vector<T> free_;
  const std::size_t most_;
};

}  // namespace discount
