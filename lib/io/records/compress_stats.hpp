// What output.compression did: the figures of one part, of one process's
// parts, or (summed over the ranks) of the job; the report's compression
// object. Pure data.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

namespace discount {

struct CompressStats {
  std::string codec;  // describe_compression(); empty: nothing compressed
  std::uint64_t parts = 0, raw_bytes = 0, stored_bytes = 0;
  double seconds = 0;         // wall time, from the first chunk ready to the last part renamed
  double tail_seconds = 0;    // of which after the last slab (what the compression adds to the job)
  double busy_seconds = 0;    // thread-seconds gathering and encoding (not waiting for the writer)
  double writer_seconds = 0;  // seconds the one HDF5 thread spent in direct chunk writes
  double store_seconds = 0;   // thread-seconds the parts' writers spent storing chunks into their files
  // Where the encoders' time went besides encoding: thread-seconds waiting
  // for the slabs to make chunks ready, and for room in the HDF5 thread's
  // queue; and the wall seconds (within `seconds`) with every encoder
  // waiting for the slabs, when the stage had nothing to do.
  double slab_wait_seconds = 0, queue_wait_seconds = 0, starved_seconds = 0;
  // Wall seconds (within `seconds`) from the last chunk encoded to the last
  // part renamed: the queue stored, the files closed, made durable (fsync)
  // and renamed.
  double closing_seconds = 0;
  unsigned threads = 0;
  unsigned ranks = 0;  // the job's figures only: ranks that compressed at least one part
  // One more part compressed by the same process, after the others.
  void add(const CompressStats& part) {
    parts += part.parts;
    raw_bytes += part.raw_bytes;
    stored_bytes += part.stored_bytes;
    seconds += part.seconds;
    tail_seconds += part.tail_seconds;
    busy_seconds += part.busy_seconds;
    writer_seconds += part.writer_seconds;
    store_seconds += part.store_seconds;
    slab_wait_seconds += part.slab_wait_seconds;
    queue_wait_seconds += part.queue_wait_seconds;
    starved_seconds += part.starved_seconds;
    closing_seconds += part.closing_seconds;
    threads = std::max(threads, part.threads);
  }
};

}  // namespace discount
