// The output's folder, created when missing (as `mkdir -p` does): every
// missing folder of the path gets mode 0777 less the process's umask.
#pragma once

#include <string>

namespace discount {

// Creates `dir` and its missing parents. Returns an empty string on success,
// otherwise why not ("'/a/b': Permission denied": the folder that could not
// be made and the system's reason). An existing folder is left as it is.
std::string make_folders(const std::string& dir);

}  // namespace discount
