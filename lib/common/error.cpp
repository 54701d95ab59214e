#include "common/error.hpp"

namespace discount {

const char* exit_code_table() {
  return "Exit codes:\n"
         "   0  success (also: nothing to do, output already complete)\n"
         "  64  command-line usage error\n"
         "  65  input data invalid: wrong rank, shapes that do not broadcast, unsupported dtype,\n"
         "      NaN/Inf under nonfinite: error, a damaged or truncated file; verify found a difference\n"
         "  66  input missing: config file, input file or dataset not found, or not HDF5;\n"
         "      an input locked by another process\n"
         "  70  internal error (a bug: please report)\n"
         "  73  output cannot be created: exists without overwrite, directory missing or read-only,\n"
         "      a .partial of a different job, damaged or of an older version (use --restart),\n"
         "      another job running on the output, a finished output whose input changed,\n"
         "      or a file the run writes or deletes is one the job reads (input, linked file, config)\n"
         "  74  I/O error during the run: disk full, file size limit, write failure (partial kept)\n"
         "  75  interrupted by SIGTERM, SIGINT, SIGUSR1 or SIGHUP; progress saved; run again to resume\n"
         "  78  configuration invalid: not a regular file of at most 1 MiB, YAML syntax, anchors\n"
         "      or aliases, a second document, unknown key, wrong type or value,\n"
         "      a key given twice, budget too small for one slab or larger than the machine,\n"
         "      a report path that is a file the job reads or one of the output's files\n";
}

}  // namespace discount
