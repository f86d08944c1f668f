// SPDX-License-Identifier: Apache-2.0
// A shared library opened with dlopen for the lifetime of the object, so optional GPU and NCCL
// libraries are used when present and never needed at link time. Not thread-safe per object.
#pragma once

#include <dlfcn.h>

#include <string>

namespace accel {

class DynamicLibrary {
 public:
  explicit DynamicLibrary(const std::string& name) {
    handle_ = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle_) error_ = ::dlerror();
  }
  ~DynamicLibrary() {
    if (handle_) ::dlclose(handle_);
  }
  DynamicLibrary(const DynamicLibrary&) = delete;
  DynamicLibrary& operator=(const DynamicLibrary&) = delete;

  explicit operator bool() const { return handle_ != nullptr; }
  // dlerror()'s text when the library did not load.
  const std::string& error() const { return error_; }

  // The symbol as a function pointer of type F, or nullptr.
  template <typename F> F symbol(const char* name) const {
    return handle_ ? reinterpret_cast<F>(::dlsym(handle_, name)) : nullptr;
  }

 private:
  void* handle_ = nullptr;
  std::string error_;
};

}  // namespace accel
