#include "report/report_job.hpp"

#include <algorithm>

namespace discount {

void describe_job(RunReport& report, const InputSource& input, const Plan& plan, Range dates, Range ids) {
  InputReport& facts = report.input_facts;
  facts.datasets = input.datasets();
  facts.source = !facts.datasets.empty() && facts.datasets.front().read_path == "computed" ? "synthetic" : "hdf5";
  facts.axes.clear();
  for (Axis a : input.axes()) facts.axes.push_back(axis_name(a));
  facts.dates = input.shape().dates;
  facts.ids = input.shape().ids;
  facts.nums = input.shape().nums;
  facts.dates_selected = dates;
  facts.ids_selected = ids;
  report.plan_facts = plan;
  report.has_plan_facts = true;
}

nlohmann::json input_json(const RunReport& report) {
  const InputReport& facts = report.input_facts;
  nlohmann::json j = {{"text", report.input}};
  if (facts.source.empty()) return j;
  j["source"] = facts.source;
  // Every file a dataset is read from, in the order first met.
  nlohmann::json files = nlohmann::json::array();
  nlohmann::json datasets = nlohmann::json::object();
  for (const auto& d : facts.datasets) {
    if (!d.file.empty() && std::find(files.begin(), files.end(), d.file) == files.end()) files.push_back(d.file);
    datasets[d.role] = {{"name", d.name}, {"file", d.file},   {"shape", d.shape},
                        {"axes", d.axes}, {"dtype", d.dtype}, {"read_path", d.read_path}};
  }
  j["files"] = files;
  j["datasets"] = datasets;
  j["axes"] = facts.axes;
  j["layout"] = [&] {
    std::string text;
    for (const auto& a : facts.axes) text += (text.empty() ? "" : ",") + a;
    return text;
  }();
  j["extents"] = {{"dates", facts.dates}, {"ids", facts.ids}, {"nums", facts.nums}};
  j["selection"] = {{"dates", {facts.dates_selected.begin, facts.dates_selected.end}},
                    {"ids", {facts.ids_selected.begin, facts.ids_selected.end}}};
  return j;
}

nlohmann::json plan_json(const RunReport& report) {
  nlohmann::json j = {{"text", report.plan}};
  if (!report.has_plan_facts) return j;
  const Plan& plan = report.plan_facts;
  const PlanRequest& request = plan.request;
  j["chunk_axis"] = axis_name(request.chunk_axis);
  j["chunk_axis_auto"] = request.chunk_axis_auto;
  j["chunk_axis_reason"] = request.chunk_axis_reason;
  j["selection"] = {{"dates", request.dates}, {"ids", request.ids}, {"nums", request.nums}};
  j["slabs"] = plan.slabs.size();
  j["slab_extent"] = plan.slab_extent;
  j["slab_bytes"] = plan.slab_bytes;
  j["multiplier_bytes"] = plan.mult_bytes;
  j["multiplier_per_slab"] = plan.mult_per_slab;
  j["slab_multiplier_bytes"] = plan.slab_mult_bytes;
  j["pipeline_depth"] = request.pipeline_depth;
  j["device_copies"] = request.device_copies;
  j["buffers"] = {{"host", plan.host_buffers}, {"device", plan.device_buffers}};
  j["host_bytes"] = plan.host_bytes;
  j["device_bytes"] = plan.device_bytes;
  j["budgets"] = {{"host_bytes", request.host_budget},
                  {"device_bytes", request.device_budget},
                  {"max_slab_bytes", request.max_slab},
                  {"staging_bytes", request.staging_bytes},
                  {"read_bytes", request.read_bytes}};
  j["element_bytes"] = request.element_bytes;
  j["input_bytes"] = plan.input_bytes();
  j["output_bytes"] = plan.output_bytes();
  return j;
}

}  // namespace discount
