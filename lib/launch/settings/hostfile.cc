// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/settings/hostfile.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "lib/common/error.h"
#include "lib/common/strings.h"

namespace accel::launch::settings {

namespace {

namespace fs = std::filesystem;

constexpr const char* kLineForm = "write one host per line as `HOST slots=N`, e.g. `worker-0 slots=8`";
constexpr const char* kFilterForm = "write NAME[:SLOT[,SLOT...]] entries joined by '@', e.g. 'worker-0@worker-1:0,2'";
// Hosts a hint lists before it only counts the rest: a pool can be hundreds of machines.
constexpr size_t kListedHosts = 8;

// Text quoted in a message; a line of a file that is not a hostfile can be long.
std::string quoted(const std::string& text) {
  return "'" + (text.size() > 80 ? text.substr(0, 80) + "..." : text) + "'";
}

std::vector<std::string> words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> out;
  for (std::string word; in >> word;) out.push_back(word);
  return out;
}

// The N of `slots=N`: decimal digits only, as DeepSpeed's pattern has it.
int slotCount(const std::string& text, const std::string& host, const std::string& where) {
  const bool digits = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
  const std::string why = digits ? whyNotInteger(text, 1, kMaxHostSlots) : quoted(text) + " is not a number";
  if (!why.empty()) {
    throw UsageError(fmt::format("{}: slots of host '{}': {}", where, host, why),
                     fmt::format("give the number of GPUs '{}' runs, from 1 to {}", host, kMaxHostSlots));
  }
  return static_cast<int>(*parseInt(text));
}

// A line without its comment and surrounding blanks, non-empty: "HOST slots=N".
HostSlots parseLine(const std::string& content, const std::string& where) {
  const auto w = words(content);
  if (w.size() != 2 || !startsWith(w[1], "slots=")) {
    throw UsageError(fmt::format("{}: cannot read {}", where, quoted(content)), kLineForm);
  }
  if (startsWith(w[0], "-")) {  // ssh would read it as an option (-oProxyCommand=…), not a host
    throw UsageError(fmt::format("{}: host '{}' begins with '-'", where, w[0]), "write the host's name or address");
  }
  HostSlots h{w[0], {}, 0};
  const int count = slotCount(w[1].substr(std::string("slots=").size()), h.host, where);
  for (int slot = 0; slot < count; ++slot) h.slots.push_back(slot);
  return h;
}

// "0-3", "0,2-3": a host's slots as a hint shows them.
std::string describeSlots(const std::vector<int>& slots) {
  std::vector<std::string> runs;
  for (size_t i = 0; i < slots.size();) {
    size_t j = i;
    while (j + 1 < slots.size() && slots[j + 1] == slots[j] + 1) ++j;
    runs.push_back(j == i ? std::to_string(slots[i]) : fmt::format("{}-{}", slots[i], slots[j]));
    i = j + 1;
  }
  return join(runs, ",");
}

// "worker-0 (slots 0-3), worker-1 (slots 0-7)", the first few hosts of the pool.
std::string describePool(const std::vector<HostSlots>& pool) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < pool.size() && i < kListedHosts; ++i) {
    parts.push_back(fmt::format("{} (slots {})", pool[i].host, describeSlots(pool[i].slots)));
  }
  if (pool.size() > kListedHosts) parts.push_back(fmt::format("and {} more", pool.size() - kListedHosts));
  return pool.empty() ? "no hosts" : join(parts, ", ");
}

// What a filter asks of one host: all of its slots, or these.
struct Wanted {
  bool whole = false;
  std::set<int> slots;
};
using Request = std::map<std::string, Wanted>;

// One filter flag and its text, for messages.
struct FilterText {
  const std::string& origin;
  const std::string& text;
  [[noreturn]] void fail(const std::string& why, const std::string& hint) const {
    throw UsageError(fmt::format("{} {}: {}", origin, quoted(text), why), hint);
  }
};

int slotIndex(const std::string& slot, const std::string& entry, const FilterText& source) {
  const std::string why = whyNotInteger(slot, 0, INT_MAX);
  if (!why.empty()) source.fail(fmt::format("a slot of entry '{}': {}", entry, why), kFilterForm);
  return static_cast<int>(*parseInt(slot));
}

// DeepSpeed's NODE_SPEC[@NODE_SPEC...]; a host named twice gets the union of what each names.
Request parseFilter(const FilterText& source) {
  if (trim(source.text).empty()) source.fail("the filter is empty", kFilterForm);
  Request request;
  for (const auto& entry : split(source.text, '@')) {
    const auto parts = split(entry, ':');
    if (parts.size() > 2 || parts[0].empty() || parts[0] != trim(parts[0])) {
      source.fail(fmt::format("cannot read entry {}", quoted(entry)), kFilterForm);
    }
    Wanted& wanted = request[parts[0]];
    if (parts.size() == 1) {
      wanted.whole = true;
      continue;
    }
    for (const auto& slot : split(parts[1], ',')) wanted.slots.insert(slotIndex(slot, entry, source));
  }
  return request;
}

const HostSlots* findHost(const std::vector<HostSlots>& pool, const std::string& name) {
  for (const auto& h : pool) {
    if (h.host == name) return &h;
  }
  return nullptr;
}

// Every host and slot the request names exists in the pool.
void checkRequest(const Request& request, const std::vector<HostSlots>& pool, const FilterText& source) {
  std::vector<std::string> names;
  for (const auto& h : pool) names.push_back(h.host);
  for (const auto& [name, wanted] : request) {
    const HostSlots* host = findHost(pool, name);
    if (!host) {
      const auto guess = didYouMean(name, names);
      source.fail(fmt::format("host '{}' is not in the hostfile", name),
                  (guess ? "did you mean '" + *guess + "'? " : "") + "the hostfile has " + describePool(pool));
    }
    for (int slot : wanted.slots) {
      if (std::find(host->slots.begin(), host->slots.end(), slot) != host->slots.end()) continue;
      const std::string at = host->line > 0 ? fmt::format(" (hostfile line {})", host->line) : "";
      source.fail(fmt::format("host '{}' has no slot {}", name, slot),
                  fmt::format("'{}' has slots {}{}", name, describeSlots(host->slots), at));
    }
  }
}

// The pool's hosts with what an include keeps or an exclude leaves; empty hosts are dropped.
std::vector<HostSlots> applyRequest(const Request& request, const std::vector<HostSlots>& pool, bool include) {
  std::vector<HostSlots> out;
  for (const auto& h : pool) {
    const auto it = request.find(h.host);
    if (it == request.end() || it->second.whole) {
      if ((it != request.end()) == include) out.push_back(h);
      continue;
    }
    HostSlots kept = h;
    const auto& named = it->second.slots;
    if (include) kept.slots.assign(named.begin(), named.end());
    if (!include) std::erase_if(kept.slots, [&](int slot) { return named.count(slot) > 0; });
    if (!kept.slots.empty()) out.push_back(std::move(kept));
  }
  return out;
}

void checkLimit(long long value, const std::string& flag) {
  if (value == -1 || value >= 1) return;
  throw UsageError(fmt::format("{} {}: it must be at least 1", flag, value),
                   fmt::format("give a count of 1 or more, or leave {} out to use them all", flag));
}

// DeepSpeed's rules on which of the five settings go together.
void checkCombination(const HostFilter& f) {
  if (!f.include.empty() && !f.exclude.empty()) {
    throw UsageError(fmt::format("{} {} and {} {} cannot both be given", f.include_origin, quoted(f.include),
                                 f.exclude_origin, quoted(f.exclude)),
                     "keep one of them: an include names what runs, an exclude what does not");
  }
  const bool filtered = !f.include.empty() || !f.exclude.empty();
  if (filtered && (f.num_nodes != -1 || f.num_gpus != -1)) {
    const std::string& origin = f.include.empty() ? f.exclude_origin : f.include_origin;
    const std::string& limit = f.num_nodes != -1 ? f.num_nodes_origin : f.num_gpus_origin;
    throw UsageError(
        fmt::format("{} cannot be given with {} (the filter says which hosts and slots run)", limit, origin),
        fmt::format("name the hosts and slots in {} instead, e.g. 'worker-0:0,1@worker-1:0,1'", origin));
  }
}

}  // namespace

std::vector<HostSlots> parseHostfile(const std::string& text, const std::string& path) {
  std::vector<HostSlots> hosts;
  std::map<std::string, int> first_line;  // host -> the line that lists it
  const auto lines = split(text, '\n');
  for (size_t i = 0; i < lines.size(); ++i) {
    const int n = static_cast<int>(i + 1);
    const std::string content = trim(lines[i].substr(0, lines[i].find('#')));
    if (content.empty()) continue;
    HostSlots h = parseLine(content, fmt::format("{}:{}", path, n));
    h.line = n;
    if (const auto [it, fresh] = first_line.emplace(h.host, n); !fresh) {
      throw UsageError(
          fmt::format("{}:{}: host '{}' is listed twice (lines {} and {})", path, n, h.host, it->second, n),
          "keep one line per host, with the slots it runs");
    }
    hosts.push_back(std::move(h));
  }
  if (hosts.empty()) {
    throw UsageError(fmt::format("{}: the hostfile lists no hosts (every line is blank or a comment)", path),
                     kLineForm);
  }
  return hosts;
}

std::vector<HostSlots> readHostfile(const std::string& path, const std::string& origin) {
  std::error_code ec;
  const auto status = fs::status(path, ec);
  const std::string named = fmt::format("{} {}", origin, quoted(path));
  if (status.type() == fs::file_type::not_found) {
    throw UsageError(named + ": no such file", "check the path; a hostfile lists `HOST slots=N` per line");
  }
  if (ec) throw UsageError(fmt::format("{}: cannot read it: {}", named, ec.message()), "check the path");
  if (status.type() == fs::file_type::directory) {
    throw UsageError(named + ": is a directory", "name the hostfile itself, not its folder");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw UsageError(fmt::format("{}: cannot read it: {}", named, std::strerror(errno)), "check its permissions");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw UsageError(named + ": reading it failed", "check the file");
  return parseHostfile(text.str(), path);
}

std::vector<HostSlots> selectHosts(const std::vector<HostSlots>& pool, const HostFilter& filter) {
  checkLimit(filter.num_nodes, filter.num_nodes_origin);
  checkLimit(filter.num_gpus, filter.num_gpus_origin);
  checkCombination(filter);
  std::vector<HostSlots> hosts = pool;
  const bool include = !filter.include.empty();
  if (include || !filter.exclude.empty()) {
    const FilterText source{include ? filter.include_origin : filter.exclude_origin,
                            include ? filter.include : filter.exclude};
    const Request request = parseFilter(source);
    checkRequest(request, pool, source);
    hosts = applyRequest(request, pool, include);
    if (hosts.empty()) source.fail("no host is left to run on", "the hostfile has " + describePool(pool));
  }
  if (hosts.empty()) throw UsageError("no hosts to run on", kLineForm);
  if (filter.num_nodes > static_cast<long long>(hosts.size())) {
    throw UsageError(fmt::format("{} {}: the hostfile has only {} host{}", filter.num_nodes_origin, filter.num_nodes,
                                 hosts.size(), hosts.size() == 1 ? "" : "s"),
                     fmt::format("ask for at most {}, or add hosts to the hostfile", hosts.size()));
  }
  if (filter.num_nodes > 0) hosts.resize(static_cast<size_t>(filter.num_nodes));
  for (auto& h : hosts) {
    if (filter.num_gpus > 0 && static_cast<long long>(h.slots.size()) > filter.num_gpus) {
      h.slots.resize(static_cast<size_t>(filter.num_gpus));
    }
  }
  return hosts;
}

}  // namespace accel::launch::settings
