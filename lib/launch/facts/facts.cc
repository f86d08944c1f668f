// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/facts/facts.h"

namespace accel::launch::facts {

std::string Machine::variable(const std::string& name) const {
  auto it = env.find(name);
  return it == env.end() ? "" : it->second;
}

bool Network::namesThisMachine(const std::string& host) const {
  const std::string address = resolve(host);
  return !address.empty() && (net::isLoopback(address) || !interfaceOf(address).empty());
}

}  // namespace accel::launch::facts
