// A small file (a JSON report) written whole or not at all: the text goes to
// a temporary file in the same folder, is made durable (fsync), and is
// renamed over the path; the folder is then synced so the rename survives a
// crash. A reader never sees a half-written file, and a failure leaves the
// old file (if any) in place and no temporary behind.
#pragma once

#include <string>

namespace discount {

// The temporary name write_file_atomically uses: `<path>.tmp.<pid>`, beside
// the file (a rename does not cross file systems).
std::string atomic_temp_path(const std::string& path);

// Throws io_error naming `what` (e.g. "report") and the OS reason.
void write_file_atomically(const std::string& path, const std::string& text, const std::string& what);

}  // namespace discount
