#include "io/records/unit_record.hpp"

#include <algorithm>

namespace discount {

namespace {

void put(std::uint8_t* at, std::uint64_t value) {
  for (int b = 0; b < 8; ++b) at[b] = static_cast<std::uint8_t>(value >> (8 * b));
}
std::uint64_t get(const std::uint8_t* at) {
  std::uint64_t value = 0;
  for (int b = 0; b < 8; ++b) value |= std::uint64_t{at[b]} << (8 * b);
  return value;
}
constexpr std::size_t kCommitAt = kEntryBytes - 8;

bool committed(const std::uint8_t* in) { return get(in + kCommitAt) == record_commit(in, kCommitAt); }

}  // namespace

std::uint64_t record_commit(const std::uint8_t* bytes, std::size_t n) {
  std::uint64_t hash = 0xcbf29ce484222325ull;
  for (std::size_t j = 0; j < n; ++j) {
    hash ^= bytes[j];
    hash *= 0x100000001b3ull;
  }
  return hash == 0 ? 1 : hash;
}

void encode_range(const DoneRange& r, std::uint8_t* out) {
  std::fill(out, out + kEntryBytes, std::uint8_t{0});
  put(out + 0, static_cast<std::uint64_t>(r.begin));
  put(out + 8, static_cast<std::uint64_t>(r.end));
  put(out + 16, static_cast<std::uint32_t>(r.run) | (std::uint64_t{r.flags} << 32));
  put(out + 24, r.out_sum);
  put(out + 32, r.in_disc);
  put(out + 40, r.in_mult);
  put(out + kCommitAt, record_commit(out, kCommitAt));
}

std::optional<DoneRange> decode_range(const std::uint8_t* in) {
  if (!committed(in)) return std::nullopt;
  DoneRange r;
  r.begin = static_cast<std::int64_t>(get(in + 0));
  r.end = static_cast<std::int64_t>(get(in + 8));
  const std::uint64_t word = get(in + 16);
  r.run = static_cast<std::int32_t>(static_cast<std::uint32_t>(word));
  r.flags = static_cast<std::uint32_t>(word >> 32);
  r.out_sum = get(in + 24);
  r.in_disc = get(in + 32);
  r.in_mult = get(in + 40);
  if (r.begin < 0 || r.end <= r.begin) return std::nullopt;
  return r;
}

void encode_file_id(const InputFileId& id, std::uint8_t* out) {
  std::fill(out, out + kEntryBytes, std::uint8_t{0});
  put(out + 0, id.dev);
  put(out + 8, id.ino);
  put(out + 16, id.size);
  put(out + 24, static_cast<std::uint64_t>(id.mtime_ns));
  put(out + 32, static_cast<std::uint64_t>(id.ctime_ns));
  put(out + kCommitAt, record_commit(out, kCommitAt));
}

std::optional<InputFileId> decode_file_id(const std::uint8_t* in) {
  if (!committed(in)) return std::nullopt;
  InputFileId id;
  id.dev = get(in + 0);
  id.ino = get(in + 8);
  id.size = get(in + 16);
  id.mtime_ns = static_cast<std::int64_t>(get(in + 24));
  id.ctime_ns = static_cast<std::int64_t>(get(in + 32));
  return id;
}

std::string file_id_change(const InputFileId& was, const InputFileId& now) {
  if (was.dev != now.dev || was.ino != now.ino) return "another file at that path (replaced, e.g. by rename)";
  if (was.size != now.size) return "the same file with another size";
  if (was.mtime_ns != now.mtime_ns) return "the same file with another time stamp";
  return "the same file, its status changed since";
}

std::optional<DoneRange> merged(const DoneRange& a, const DoneRange& b, bool mult_per_unit) {
  if (a.end != b.begin || a.run != b.run || a.flags != b.flags) return std::nullopt;
  if (!mult_per_unit && a.in_mult != b.in_mult) return std::nullopt;
  DoneRange m = a;
  m.end = b.end;
  m.out_sum += b.out_sum;
  m.in_disc += b.in_disc;
  if (mult_per_unit) m.in_mult += b.in_mult;
  return m;
}

std::vector<DoneRange> coalesce(std::vector<DoneRange> written, bool mult_per_unit, std::int64_t max_units) {
  std::sort(written.begin(), written.end(), [](const DoneRange& a, const DoneRange& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  std::vector<DoneRange> out;
  for (const DoneRange& r : written) {
    if (!out.empty())
      if (const auto m = merged(out.back(), r, mult_per_unit); m && m->end - m->begin <= max_units) {
        out.back() = *m;
        continue;
      }
    out.push_back(r);
  }
  return out;
}

std::int64_t entry_units(std::int64_t units, std::size_t capacity) {
  const auto quarter = std::max<std::int64_t>(1, static_cast<std::int64_t>(capacity / 4));
  return std::max<std::int64_t>(1, (units + quarter - 1) / quarter);
}

std::size_t table_capacity(std::int64_t slabs) {
  return static_cast<std::size_t>(std::clamp<std::int64_t>(4 * slabs, 1024, 65536));
}

void RangeTable::set(std::size_t slot, std::optional<DoneRange> range) {
  slots_.at(slot) = range;
  update();
}

void RangeTable::update() {
  std::vector<Span> spans;
  for (const auto& s : slots_)
    if (s) spans.emplace_back(s->begin, s->end);
  std::sort(spans.begin(), spans.end());
  coverage_.clear();
  for (const Span& s : spans) {
    if (!coverage_.empty() && s.first <= coverage_.back().second)
      coverage_.back().second = std::max(coverage_.back().second, s.second);
    else
      coverage_.push_back(s);
  }
}

bool RangeTable::covers(std::int64_t begin, std::int64_t end) const {
  if (begin >= end) return true;
  // The last span starting at or before begin must reach end (spans do not touch).
  auto it = std::upper_bound(coverage_.begin(), coverage_.end(), Span{begin, INT64_MAX});
  if (it == coverage_.begin()) return false;
  --it;
  return it->first <= begin && end <= it->second;
}

std::int64_t RangeTable::units_covered() const {
  std::int64_t n = 0;
  for (const Span& s : coverage_) n += s.second - s.first;
  return n;
}

std::vector<std::size_t> RangeTable::free_slots() const {
  std::vector<std::size_t> free;
  for (std::size_t j = 0; j < slots_.size(); ++j)
    if (!slots_[j]) free.push_back(j);
  return free;
}

std::size_t RangeTable::valid() const {
  return static_cast<std::size_t>(
      std::count_if(slots_.begin(), slots_.end(), [](const auto& s) { return s.has_value(); }));
}

}  // namespace discount
