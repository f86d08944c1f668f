// SPDX-License-Identifier: Apache-2.0
// A non-owning reference to a callable, for a function that calls it before returning: unlike
// std::function it never allocates, so it can sit on paths that run once per collective. The
// callable must outlive the FunctionRef (pass a lambda as an argument, never store one).
#pragma once

#include <memory>
#include <type_traits>
#include <utility>

namespace accel {

template <typename Signature> class FunctionRef;

template <typename R, typename... Args> class FunctionRef<R(Args...)> {
 public:
  template <typename F, typename = std::enable_if_t<!std::is_same_v<std::decay_t<F>, FunctionRef> &&
                                                    std::is_invocable_r_v<R, F&, Args...>>>
  FunctionRef(F&& f)  // NOLINT(google-explicit-constructor): passed as an argument like a lambda
      : object_(const_cast<void*>(static_cast<const void*>(std::addressof(f)))),
        call_([](void* object, Args... args) -> R {
          return (*static_cast<std::remove_reference_t<F>*>(object))(std::forward<Args>(args)...);
        }) {}

  R operator()(Args... args) const { return call_(object_, std::forward<Args>(args)...); }

 private:
  void* object_;
  R (*call_)(void*, Args...);
};

}  // namespace accel
