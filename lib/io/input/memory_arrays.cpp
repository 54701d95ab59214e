#include "io/input/memory_arrays.hpp"

#include <algorithm>
#include <cstring>

#include "common/error.hpp"
#include "common/host_parallel.hpp"

namespace discount {

std::int64_t ArrayRef::elements() const {
  std::int64_t n = 1;
  for (int j = 0; j < rank; ++j) n *= shape[static_cast<std::size_t>(j)];
  return n;
}

bool ArrayRef::c_contiguous() const {
  std::int64_t expected = 1;
  for (int j = rank - 1; j >= 0; --j) {
    const auto u = static_cast<std::size_t>(j);
    if (shape[u] > 1 && strides[u] != expected) return false;
    expected *= shape[u];
  }
  return true;
}

namespace {

// One row of `n` elements between a strided array row and a packed buffer.
template <class T>
void copy_row(T* row, std::int64_t stride, double* packed, std::int64_t n, bool to_array) {
  if (to_array) {
    if constexpr (std::is_same_v<T, double>)
      if (stride == 1) {
        std::memcpy(row, packed, static_cast<std::size_t>(n) * sizeof(double));
        return;
      }
    for (std::int64_t c = 0; c < n; ++c) row[c * stride] = static_cast<T>(packed[c]);
  } else {
    if constexpr (std::is_same_v<T, double>)
      if (stride == 1) {
        std::memcpy(packed, row, static_cast<std::size_t>(n) * sizeof(double));
        return;
      }
    for (std::int64_t c = 0; c < n; ++c) packed[c] = static_cast<double>(row[c * stride]);
  }
}

// The stretch of the packed box from element e (before `end`) that lies in
// one row of the array, or further where rows (and planes) follow each other
// there as they do in the box: [e, stop), from element `offset` of the array.
struct ArrayRun {
  std::int64_t stop = 0, offset = 0;
};

ArrayRun run_at(const ArrayRef& a, const std::array<std::int64_t, 3>& start, const std::array<std::int64_t, 3>& count,
                std::int64_t e, std::int64_t end) {
  const std::int64_t row = count[2];
  const bool rows_adjacent = a.strides[2] == 1 && a.strides[1] == row;
  const bool planes_adjacent = rows_adjacent && a.strides[0] == count[1] * row;
  const std::int64_t r = e / row, c = e % row, x = r / count[1], y = r % count[1];
  std::int64_t stop = (r + 1) * row;
  if (planes_adjacent)
    stop = end;
  else if (rows_adjacent)
    stop = (x + 1) * count[1] * row;
  return {std::min(stop, end),
          (start[0] + x) * a.strides[0] + (start[1] + y) * a.strides[1] + (start[2] + c) * a.strides[2]};
}

// Elements [first, first + n) of the packed box, on this thread, a run at a
// time: a C-contiguous (dates, ids, 5) array would otherwise take a 40-byte
// copy per row (measured 9.2 GB/s on the H200 node's 16 threads, where
// memory moves at over 60).
template <class T>
void copy_box_range_as(const ArrayRef& a, const std::array<std::int64_t, 3>& start,
                       const std::array<std::int64_t, 3>& count, std::int64_t first, std::int64_t n, double* packed,
                       bool to_array) {
  if (n <= 0 || count[2] == 0) return;
  for (std::int64_t e = first, end = first + n; e < end;) {
    const ArrayRun run = run_at(a, start, count, e, end);
    copy_row(static_cast<T*>(a.data) + run.offset, a.strides[2], packed + (e - first), run.stop - e, to_array);
    e = run.stop;
  }
}

// The whole box in row bands over the memory threads (small boxes on this
// thread). `visit` (reads only; may be null) gets the packed elements each
// thread has copied, about kCachePieceBytes at a time, right after copying
// them, so it reads them from cache; without a visitor each thread copies
// its band in one go, where the C library's copy streams past the caches.
template <class T>
void copy_box_as(const ArrayRef& a, const std::array<std::int64_t, 3>& start, const std::array<std::int64_t, 3>& count,
                 double* packed, bool to_array, const InputSource::PieceVisitor* visit = nullptr) {
  const std::int64_t rows = count[0] * count[1], n = count[2];
  if (rows == 0 || n == 0) return;
  const unsigned threads = rows * n < (std::int64_t{1} << 20) ? 1u : memory_threads();
  const std::int64_t piece_rows =
      std::max<std::int64_t>(1, static_cast<std::int64_t>(kCachePieceBytes / sizeof(double)) / n);
  run_on_threads(threads, [&](unsigned t) {
    const std::int64_t first = rows * t / threads, last = rows * (t + 1) / threads;
    const std::int64_t step = visit ? piece_rows : std::max<std::int64_t>(1, last - first);
    for (std::int64_t r = first; r < last; r += step) {
      const std::int64_t end = std::min(last, r + step);
      copy_box_range_as<T>(a, start, count, r * n, (end - r) * n, packed + r * n, to_array);
      if (visit) (*visit)(r * n, (end - r) * n);
    }
  });
}

// A 2-D array as a 3-D one of leading extent 1.
ArrayRef as_3d(const ArrayRef& a) {
  if (a.rank == 3) return a;
  ArrayRef b = a;
  b.rank = 3;
  b.shape = {1, a.shape[0], a.shape[1]};
  b.strides = {0, a.strides[0], a.strides[1]};
  return b;
}

}  // namespace

std::string shape_text(const ArrayRef& a) {
  std::string text;
  for (int j = 0; j < a.rank; ++j) text += (j ? "x" : "") + std::to_string(a.shape[static_cast<std::size_t>(j)]);
  return text + (a.type == ElementType::f64 ? " float64" : " float32");
}

void copy_box(const ArrayRef& array, const std::array<std::int64_t, 3>& start, const std::array<std::int64_t, 3>& count,
              double* packed, bool to_array) {
  const ArrayRef a = as_3d(array);
  if (a.type == ElementType::f64)
    copy_box_as<double>(a, start, count, packed, to_array);
  else
    copy_box_as<float>(a, start, count, packed, to_array);
}

void copy_box_range(const ArrayRef& array, const std::array<std::int64_t, 3>& start,
                    const std::array<std::int64_t, 3>& count, std::int64_t first, std::int64_t n, double* packed,
                    bool to_array) {
  const ArrayRef a = as_3d(array);
  if (a.type == ElementType::f64)
    copy_box_range_as<double>(a, start, count, first, n, packed, to_array);
  else
    copy_box_range_as<float>(a, start, count, first, n, packed, to_array);
}

double* pinned_run(const ArrayRef& array, const std::array<std::int64_t, 3>& start,
                   const std::array<std::int64_t, 3>& count, std::int64_t first, std::int64_t n) {
  if (!array.pinned || array.type != ElementType::f64 || n <= 0 || count[2] == 0) return nullptr;
  const ArrayRef a = as_3d(array);
  const ArrayRun run = run_at(a, start, count, first, first + n);
  if (run.stop != first + n || (n > 1 && a.strides[2] != 1)) return nullptr;
  return static_cast<double*>(a.data) + run.offset;
}

namespace {

void copy_box_visited(const ArrayRef& array, const std::array<std::int64_t, 3>& start,
                      const std::array<std::int64_t, 3>& count, double* packed,
                      const InputSource::PieceVisitor& visit) {
  const ArrayRef a = as_3d(array);
  if (a.type == ElementType::f64)
    copy_box_as<double>(a, start, count, packed, false, &visit);
  else
    copy_box_as<float>(a, start, count, packed, false, &visit);
}

}  // namespace

MemoryInput::MemoryInput(const ArrayRef& mult, const ArrayRef& disc, const std::array<Axis, 3>& axes)
    : mult_(mult), disc_(disc) {
  axes_ = axes;
  std::int64_t extent[3] = {0, 0, 0};
  for (int j = 0; j < 3; ++j)
    extent[static_cast<int>(axes[static_cast<std::size_t>(j)])] = disc.shape[static_cast<std::size_t>(j)];
  shape_ = {extent[0], extent[1], extent[2]};
  if (mult.shape[0] != shape_.ids || mult.shape[1] != shape_.nums)
    throw usage_error("mult has shape (" + std::to_string(mult.shape[0]) + ", " + std::to_string(mult.shape[1]) +
                      ") but disc has " + std::to_string(shape_.ids) + " ids and " + std::to_string(shape_.nums) +
                      " nums (axes " + axis_name(axes[0]) + ", " + axis_name(axes[1]) + ", " + axis_name(axes[2]) +
                      "); mult must be (ids, nums)");
}

void MemoryInput::read_discount(Range dates, Range ids, double* buffer) {
  const FileBox box = discount_box(shape_, axes_, dates, ids);
  copy_box(disc_, box.start, box.count, buffer, false);
}

void MemoryInput::read_discount_visited(Range dates, Range ids, double* buffer, const PieceVisitor& visit) {
  const FileBox box = discount_box(shape_, axes_, dates, ids);
  copy_box_visited(disc_, box.start, box.count, buffer, visit);
}

void MemoryInput::read_discount_range(Range dates, Range ids, std::int64_t first, std::int64_t count, double* buffer) {
  const FileBox box = discount_box(shape_, axes_, dates, ids);
  copy_box_range(disc_, box.start, box.count, first, count, buffer, false);
}

const double* MemoryInput::discount_in_place(Range dates, Range ids, std::int64_t first, std::int64_t count) const {
  const FileBox box = discount_box(shape_, axes_, dates, ids);
  return pinned_run(disc_, box.start, box.count, first, count);
}

void MemoryInput::read_multiplier(Range ids, double* buffer) {
  copy_box(mult_, {0, ids.begin, 0}, {1, ids.size(), shape_.nums}, buffer, false);
}

std::string MemoryInput::describe() const {
  return "arrays in memory: mult " + shape_text(mult_) + ", disc " + shape_text(disc_) + " (" + axis_name(axes_[0]) +
         ", " + axis_name(axes_[1]) + ", " + axis_name(axes_[2]) + ")";
}

// Never resumed: an in-memory job has no partial output to match.
std::string MemoryInput::identity() const { return "memory: " + describe(); }

}  // namespace discount
