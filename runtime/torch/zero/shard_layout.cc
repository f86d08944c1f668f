// SPDX-License-Identifier: Apache-2.0
#include "runtime/torch/zero/shard_layout.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include <fmt/format.h>

#include "lib/common/error.h"

namespace accel {

namespace {

using ModulePtr = std::shared_ptr<torch::nn::Module>;
using ImplKey = const c10::TensorImpl*;

std::string joined(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

std::string childPath(const std::string& parent, const std::string& name) {
  return parent.empty() ? name : parent + "." + name;
}

struct UnitChooser {
  const UnitRules& rules;
  std::vector<std::pair<std::string, ModulePtr>> chosen;
  std::set<std::string> matched, seen_classes;

  void byClass(const ModulePtr& m, const std::string& path) {
    for (const auto& child : m->named_children()) {
      const std::string p = childPath(path, child.key());
      seen_classes.insert(child.value()->name());
      bool hit = false;
      for (const auto& c : rules.classes) {
        if (classMatches(child.value()->name(), c)) matched.insert(c), hit = true;
      }
      if (hit) {
        chosen.emplace_back(p, child.value());
      } else {
        byClass(child.value(), p);
      }
    }
  }

  // Parameters under `m` that no deeper unit took; `m` becomes a unit when they reach the bound.
  int64_t bySize(const ModulePtr& m, const std::string& path, bool root) {
    int64_t free = 0;
    for (const auto& p : m->named_parameters(false)) free += p.value().requires_grad() ? p.value().numel() : 0;
    for (const auto& child : m->named_children()) free += bySize(child.value(), childPath(path, child.key()), false);
    if (root || free < rules.min_params) return free;
    chosen.emplace_back(path, m);
    return 0;
  }

  // A child without parameters of its own (a ModuleList, a Sequential) stands for its children.
  void byChild(const ModulePtr& m, const std::string& path) {
    for (const auto& child : m->named_children()) {
      const std::string p = childPath(path, child.key());
      bool trainable = false, own = false;
      for (const auto& t : child.value()->parameters(true)) trainable = trainable || t.requires_grad();
      for (const auto& t : child.value()->parameters(false)) own = own || t.requires_grad();
      if (!trainable) continue;
      if (own || child.value()->children().empty()) {
        chosen.emplace_back(p, child.value());
      } else {
        byChild(child.value(), p);
      }
    }
  }
};

// Stage 3 gathers a unit's parameters into their own memory: a tensor two modules register is
// one memory that two units would gather and free on their own schedules.
void refuseShared(torch::nn::Module& root) {
  std::map<ImplKey, std::string> owner;
  std::function<void(torch::nn::Module&, const std::string&)> walk = [&](torch::nn::Module& m,
                                                                         const std::string& path) {
    for (const auto& p : m.named_parameters(false)) {
      const std::string name = childPath(path, p.key());
      auto [it, fresh] = owner.emplace(p.value().unsafeGetTensorImpl(), name);
      if (!fresh) {
        throw UsageError(fmt::format("parameter '{}' is also registered as '{}': a parameter shared by two modules "
                                     "cannot be sharded under ZeRO stage 3",
                                     it->second, name),
                         "untie the weights (give each module its own parameter), or use stage 2");
      }
    }
    for (const auto& child : m.named_children()) walk(*child.value(), childPath(path, child.key()));
  };
  walk(root, "");
}

}  // namespace

std::vector<int64_t> ShardedParam::shardShape(int rank) const {
  std::vector<int64_t> shape = full.dim() == 0 ? std::vector<int64_t>{1} : full.sizes().vec();
  shape[0] = rowsOf(rank);
  return shape;
}

bool classMatches(const std::string& module_class, const std::string& wanted) {
  std::string base =
      module_class.substr(module_class.rfind(':') == std::string::npos ? 0 : module_class.rfind(':') + 1);
  const std::string impl = "Impl";
  return base == wanted ||
         (base.size() > impl.size() && base.ends_with(impl) && base.substr(0, base.size() - impl.size()) == wanted) ||
         module_class == wanted;
}

ShardLayout buildShardLayout(torch::nn::Module& module, int world, const UnitRules& rules) {
  if (rules.refuse_shared) refuseShared(module);
  ModulePtr root = module.shared_from_this();
  UnitChooser chooser{rules, {}, {}, {}};
  if (!rules.classes.empty()) {
    chooser.byClass(root, "");
    std::vector<std::string> missing;
    for (const auto& c : rules.classes) {
      if (!chooser.matched.count(c)) missing.push_back(c);
    }
    if (!missing.empty()) {
      throw UsageError(
          fmt::format("fsdp_transformer_layer_cls_to_wrap: the model has no module of class {}", joined(missing)),
          "name classes the model has: " + joined({chooser.seen_classes.begin(), chooser.seen_classes.end()}));
    }
  } else if (rules.min_params > 0) {
    chooser.bySize(root, "", true);
  } else {
    chooser.byChild(root, "");
  }

  ShardLayout layout;
  std::map<ImplKey, size_t> index;
  for (const auto& p : module.named_parameters(true)) {
    if (!p.value().requires_grad()) continue;
    ShardedParam sp;
    sp.name = p.key();
    sp.full = p.value();
    sp.rows = sp.full.dim() == 0 ? 1 : sp.full.size(0);
    sp.row_numel = sp.rows == 0 ? 0 : sp.full.numel() / sp.rows;
    sp.chunk_rows = (sp.rows + world - 1) / world;
    index.emplace(sp.full.unsafeGetTensorImpl(), layout.params.size());
    layout.params.push_back(std::move(sp));
  }
  std::vector<bool> claimed(layout.params.size(), false);
  layout.units.push_back({"", {}, 0});
  for (const auto& [path, m] : chooser.chosen) {
    ShardUnit unit{path, {}, 0};
    for (const auto& p : m->parameters(true)) {
      auto it = index.find(p.unsafeGetTensorImpl());
      if (it == index.end() || claimed[it->second]) continue;
      claimed[it->second] = true;
      unit.params.push_back(it->second);
    }
    if (!unit.params.empty()) layout.units.push_back(std::move(unit));
  }
  for (size_t i = 0; i < layout.params.size(); ++i) {
    if (!claimed[i]) layout.units[0].params.push_back(i);
  }
  for (size_t u = 0; u < layout.units.size(); ++u) {
    ShardUnit& unit = layout.units[u];
    std::sort(unit.params.begin(), unit.params.end());
    for (size_t i : unit.params) {
      ShardedParam& sp = layout.params[i];
      sp.unit = u;
      sp.offset = unit.shard_numel;
      unit.shard_numel += sp.chunk_rows * sp.row_numel;
    }
  }
  return layout;
}

}  // namespace accel
