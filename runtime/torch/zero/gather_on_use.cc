// SPDX-License-Identifier: Apache-2.0
// Built with NDEBUG whatever the build type, as libtorch is (component.cmake): RecordFunction's
// layout and inputs() differ without it.
#include "runtime/torch/zero/gather_on_use.h"

#include <mutex>
#include <optional>
#include <unordered_map>

#include <ATen/record_function.h>

namespace accel {

namespace {

struct Entry {
  GatherTarget* target;
  size_t unit;
};

struct Registry {
  std::mutex mutex;
  std::unordered_map<const c10::StorageImpl*, Entry> entries;
  std::optional<at::CallbackHandle> handle;
};

Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: operators may run during exit
  return *r;
}

thread_local bool t_paused = false;

void consider(const at::Tensor& t) {
  if (!t.defined() || !t.has_storage()) return;
  Registry& r = registry();
  std::optional<Entry> hit;
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    auto it = r.entries.find(t.storage().unsafeGetStorageImpl());
    if (it != r.entries.end()) hit = it->second;
  }
  if (!hit) return;
  GatherOnUsePause pause;
  hit->target->gatherForUse(hit->unit);
}

std::unique_ptr<at::ObserverContext> onOperator(const at::RecordFunction& fn) {
  if (t_paused) return nullptr;
  for (const c10::IValue& v : fn.inputs()) {
    if (v.isTensor()) {
      consider(v.toTensor());
    } else if (v.isTensorList()) {
      for (const at::Tensor& t : v.toTensorList()) consider(t);
    } else if (v.isList()) {
      for (const c10::IValue& item : v.toListRef()) {
        if (item.isTensor()) consider(item.toTensor());
      }
    }
  }
  return nullptr;
}

}  // namespace

void registerGatherOnUse(const c10::StorageImpl* storage, GatherTarget* target, size_t unit) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.entries[storage] = {target, unit};
  if (!r.handle) {
    r.handle = at::addGlobalCallback(at::RecordFunctionCallback(&onOperator)
                                         .needsInputs(true)
                                         .scopes({at::RecordScope::FUNCTION, at::RecordScope::BACKWARD_FUNCTION}));
  }
}

void unregisterGatherOnUse(const GatherTarget* target) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::erase_if(r.entries, [target](const auto& e) { return e.second.target == target; });
  if (r.entries.empty() && r.handle) {
    at::removeCallback(*r.handle);
    r.handle.reset();
  }
}

GatherOnUsePause::GatherOnUsePause() : previous_(t_paused) { t_paused = true; }
GatherOnUsePause::~GatherOnUsePause() { t_paused = previous_; }

}  // namespace accel
