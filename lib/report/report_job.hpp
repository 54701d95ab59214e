// The JSON report's structured `input` and `plan` objects (schema_version 2):
// what the input holds (files, datasets, shapes, dtypes, axis order, the
// selection) and how the job is cut (chunk axis, slabs, slab bytes, buffers,
// budgets). The text forms stay beside them for people.
#pragma once

#include <nlohmann/json.hpp>

#include "report/report.hpp"

namespace discount {

// Copies the input's facts and the plan into `report`. `dates` and `ids`:
// the selection, absolute in the source (PipelineSpec's).
void describe_job(RunReport& report, const InputSource& input, const Plan& plan, Range dates, Range ids);

nlohmann::json input_json(const RunReport& report);
nlohmann::json plan_json(const RunReport& report);

}  // namespace discount
