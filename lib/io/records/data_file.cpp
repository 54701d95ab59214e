#include "io/records/data_file.hpp"

#include "io/posix/slab_write.hpp"

namespace discount {

void DataFile::write_box(const std::array<std::int64_t, 3>& start, const std::array<std::int64_t, 3>& count,
                         const void* buffer, std::size_t element, const PieceHook& hook) {
  if (writer)
    writer->write_box(start, count, buffer);
  else
    discount::write_box(fd.get(), direct.get(), offset, dims, start, count, buffer, element, "writing '" + path + "'",
                        hook);
  dirty = true;
}

}  // namespace discount
