// output.compression in one process: the parts of a split output stream into
// their compressed selves while the run writes (io/compress/part_encoder.hpp's
// PartStream). Each written range is passed on as it is recorded, so the
// cores encode a part's chunks while the later slabs are read, multiplied
// and written; a part is renamed over only once the progress record vouches
// for all its units, so a kill leaves every part whole in one form or the
// other, and the record's done ranges exact. Under MPI the ranks compress
// their share of the parts after the last slab instead (finish_share).
#include <algorithm>

#include "io/input/chunk_reader.hpp"
#include "io/output/output.hpp"

namespace discount {

void FileOutput::start_streaming() {
  if (!spec_.compression.enabled() || !parts_.split() || spec_.ranks > 1 || state_ == State::already_complete) return;
  std::vector<PartToCompress> parts;
  for (std::size_t f = 0; f < parts_.size(); ++f) {
    if (parts_.file(f).compressed) continue;
    stream_.files.push_back(f);
    parts.push_back({parts_.part_path(f), parts_.part_dims(f)});
  }
  // Each part streaming holds its file and three chunks in flight: beyond two
  // parts per encoding thread, the parts wait for the end of the run, when
  // compress_parts() takes them a wave at a time.
  if (parts.empty() || parts.size() > 2 * static_cast<std::size_t>(ChunkReader::threads())) {
    stream_.files.clear();
    return;
  }
  stream_.parts = std::make_unique<PartStream>(parts, parts_.chunk_position(), spec_.dtype, spec_.compression,
                                               [this](std::size_t k) { parts_.release(stream_.files[k]); });
  // A resume: what earlier runs wrote is there already.
  for (const Span& done : record_.table().coverage()) stream_written(done.first, done.second);
  stream_durable();
}

void FileOutput::stream_written(std::int64_t b, std::int64_t e) {
  if (!stream_.parts) return;
  const std::vector<std::int64_t>& bounds = parts_.bounds();
  for (std::size_t k = 0; k < stream_.files.size(); ++k) {
    const std::int64_t lo = bounds[stream_.files[k]], hi = bounds[stream_.files[k] + 1];
    if (b < hi && lo < e) stream_.parts->written(k, std::max(b, lo) - lo, std::min(e, hi) - lo);
  }
}

// Runs after each checkpoint (the record's own lock held) and once more at
// the end.
void FileOutput::stream_durable() {
  if (!stream_.parts) return;
  const std::vector<std::int64_t>& bounds = parts_.bounds();
  for (std::size_t k = 0; k < stream_.files.size(); ++k)
    if (record_.covers(bounds[stream_.files[k]], bounds[stream_.files[k] + 1])) stream_.parts->durable(k);
}

void FileOutput::finish_streaming() {
  if (!stream_.parts) return;
  stream_durable();  // flush() made every unit durable
  const std::unique_ptr<PartStream> stream = std::move(stream_.parts);
  compression_.add(stream->finish());
}

}  // namespace discount
