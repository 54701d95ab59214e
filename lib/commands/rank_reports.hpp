// The ranks' figures made one job's: what lib/commands does with every
// rank's report before rank 0 prints or writes it. Collective under MPI.
#pragma once

#include "report/report.hpp"

namespace discount {

// Each rank's figures added up (bytes, slabs) or maximised (seconds: ranks
// work side by side), so rank 0 reports the whole job. Collective under MPI;
// report.stages must name the same stages on every rank (empty_stages()).
void combine_rank_reports(RunReport& report);

}  // namespace discount
