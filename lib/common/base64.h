// SPDX-License-Identifier: Apache-2.0
// Base64 (RFC 4648, with padding), as etcd's JSON gateway carries keys and values. Pure.
#pragma once

#include <optional>
#include <string>

namespace accel {

std::string base64Encode(const std::string& bytes);
// The bytes, or nothing where `text` is not padded base64.
std::optional<std::string> base64Decode(const std::string& text);

}  // namespace accel
