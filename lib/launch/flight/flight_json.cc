// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/flight/flight_json.h"

#include <fmt/format.h>

#include "lib/common/call_names.h"
#include "lib/common/error.h"

namespace accel::launch::flight {

namespace {

using nlohmann::json;

constexpr const auto& kTorchDtypes = calls::kTorchDtypeNames;
static_assert(std::size(kTorchDtypes) == std::size(calls::kDtypeNames));

// A time of the record on the real-time clock (as torch's are); 0 stays 0: not yet.
int64_t real(int64_t ns, int64_t offset) { return ns ? ns + offset : 0; }

json entry(const accel::flight::Call& c, uint64_t record, const std::vector<accel::flight::Group>& groups,
           int64_t offset) {
  const std::string label = c.group < groups.size() ? groups[c.group].label : "";
  const char* dtype = c.dtype < std::size(kTorchDtypes) ? kTorchDtypes[c.dtype] : "?";
  const bool done = c.state == accel::flight::State::Completed || c.state == accel::flight::State::Failed;
  json e = {{"record_id", record},
            {"pg_id", c.group},
            {"process_group", {std::to_string(c.group), label}},
            {"collective_seq_id", c.seq},
            {"p2p_seq_id", 0},
            {"op_id", c.seq},
            {"profiling_name", fmt::format("accel:{}", c.name.empty() ? calls::kindName(c.kind) : c.name)},
            {"time_created_ns", real(c.enqueued_ns, offset)},
            {"time_discovered_started_ns", real(c.started_ns, offset)},
            {"time_discovered_completed_ns", real(c.ended_ns, offset)},
            {"input_sizes", json::array({json::array({c.count})})},
            {"input_dtypes", {dtype}},
            {"output_sizes", json::array({json::array({c.count})})},
            {"output_dtypes", {dtype}},
            {"state", accel::flight::stateName(c.state)},
            {"retired", done},
            {"is_p2p", false},
            {"reduce_op", calls::reduceOpName(c.op)},
            {"root", c.root}};
  if (c.ended_ns && c.started_ns) e["duration_ms"] = static_cast<double>(c.ended_ns - c.started_ns) / 1e6;
  return e;
}

}  // namespace

nlohmann::json flightJson(const RankRecord& r, const std::string& run_id, int round) {
  json out = {{"version", kJsonVersion}, {"run_id", run_id}, {"round", round},
              {"rank", r.rank},          {"host", r.host},   {"pid", r.pid}};
  if (!r.flight) {
    out["missing"] = r.missing;
    return out;
  }
  const auto& d = r.flight->dump;
  json pg = json::object();
  for (size_t g = 0; g < d.groups.size(); ++g) {
    pg[std::to_string(g)] = {{"name", std::to_string(g)},
                             {"desc", d.groups[g].label},
                             {"size", d.groups[g].size},
                             {"rank", d.groups[g].rank}};
  }
  json entries = json::array();
  const uint64_t first = d.written - d.calls.size();  // the records before were overwritten or not sent
  const int64_t offset = r.flight->realtime_offset_ns;
  for (size_t i = 0; i < d.calls.size(); ++i) entries.push_back(entry(d.calls[i], first + i, d.groups, offset));
  out.update({{"world_size", d.world},
              {"capacity", d.capacity},
              {"records_seen", d.written},
              {"torn", d.torn},
              {"read_ns", real(r.flight->read_ns, offset)},
              {"pg_config", pg},
              {"entries", entries}});
  return out;
}

namespace {

unsigned codeOf(const std::string& name, const char* const* names, size_t n, const char* what) {
  if (name == "?") return 255;  // written for a code none of ours names (another recorder's)
  for (size_t i = 0; i < n; ++i) {
    if (name == names[i]) return static_cast<unsigned>(i);
  }
  throw Error(fmt::format("{} '{}' is none accel records", what, name));
}

accel::flight::Call callFromJson(const json& e) {
  accel::flight::Call c;
  c.seq = e.at("collective_seq_id").get<uint64_t>();
  c.group = e.at("pg_id").get<unsigned>();
  const std::string name = e.at("profiling_name").get<std::string>();
  if (name.rfind("accel:", 0) != 0) throw Error(fmt::format("profiling_name '{}' is not accel's", name));
  try {
    c.kind = codeOf(name.substr(6), calls::kKindNames, std::size(calls::kKindNames), "collective");
  } catch (const Error&) {  // another recorder's operation, kept by its name
    c.kind = calls::kForeignKind;
    c.name = name.substr(6);
  }
  c.dtype = codeOf(e.at("input_dtypes").at(0).get<std::string>(), kTorchDtypes, std::size(kTorchDtypes), "dtype");
  c.op = codeOf(e.at("reduce_op").get<std::string>(), calls::kReduceOpNames, std::size(calls::kReduceOpNames),
                "reduce op");
  c.count = e.at("input_sizes").at(0).at(0).get<uint64_t>();
  c.root = e.at("root").get<int>();
  const std::string state = e.at("state").get<std::string>();
  bool known = false;
  for (auto s : {accel::flight::State::Scheduled, accel::flight::State::Started, accel::flight::State::Completed,
                 accel::flight::State::Failed}) {
    if (state == accel::flight::stateName(s)) c.state = s, known = true;
  }
  if (!known) throw Error(fmt::format("state '{}' is none", state));
  c.enqueued_ns = e.at("time_created_ns").get<int64_t>();
  c.started_ns = e.at("time_discovered_started_ns").get<int64_t>();
  c.ended_ns = e.at("time_discovered_completed_ns").get<int64_t>();
  return c;
}

}  // namespace

RankRecord recordFromJson(const json& j) {
  try {
    if (!j.is_object() || j.value("version", "") != kJsonVersion) {
      throw Error(fmt::format("not an accel flight record of version {}", kJsonVersion));
    }
    RankRecord r{j.at("rank").get<int>(), j.at("host").get<std::string>(), j.at("pid").get<long long>(), std::nullopt,
                 j.value("missing", "")};
    if (!j.contains("entries")) return r;
    RankFlight f;
    f.read_ns = j.at("read_ns").get<int64_t>();
    f.dump.rank = r.rank;
    f.dump.world = j.at("world_size").get<int>();
    f.dump.pid = r.pid;
    f.dump.capacity = j.at("capacity").get<uint32_t>();
    f.dump.written = j.at("records_seen").get<uint64_t>();
    f.dump.torn = j.at("torn").get<unsigned>();
    for (size_t g = 0; j.at("pg_config").contains(std::to_string(g)); ++g) {
      const json& pg = j.at("pg_config").at(std::to_string(g));
      f.dump.groups.push_back({pg.at("desc").get<std::string>(), pg.at("size").get<int>(), pg.at("rank").get<int>()});
    }
    for (const json& e : j.at("entries")) f.dump.calls.push_back(callFromJson(e));
    r.flight = std::move(f);
    return r;
  } catch (const json::exception& e) {
    throw Error(fmt::format("not a flight record: {}", e.what()));
  }
}

}  // namespace accel::launch::flight
