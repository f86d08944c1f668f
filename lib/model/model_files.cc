// SPDX-License-Identifier: Apache-2.0
#include "lib/model/model_files.h"

#include <filesystem>
#include <map>
#include <set>

#include <fmt/format.h>

#include "lib/common/atomic_file.h"
#include "lib/common/error.h"
#include "lib/common/strings.h"

namespace accel {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const char* kPathHint = "pass a .safetensors file, a shard index (*.safetensors.index.json) or a model directory";

// An index names shards and tensors only; anything near this size is not one.
constexpr uintmax_t kMaxIndexBytes = 100'000'000;

bool isIndexName(const std::string& name) { return endsWith(name, ".safetensors.index.json"); }

std::vector<std::string> filesEndingWith(const fs::path& dir, const std::string& suffix) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::string name = e.path().filename().string();
    if (e.is_regular_file() && endsWith(name, suffix)) out.push_back(name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The file a model directory is read from: Hugging Face's names first, then a lone candidate.
fs::path modelInDirectory(const fs::path& dir) {
  for (const char* name : {"model.safetensors.index.json", "model.safetensors"}) {
    if (fs::is_regular_file(dir / name)) return dir / name;
  }
  for (const char* suffix : {".safetensors.index.json", ".safetensors"}) {
    std::vector<std::string> found = filesEndingWith(dir, suffix);
    if (found.size() == 1) return dir / found[0];
    if (found.size() > 1) {
      throw UsageError(fmt::format("{}: several {} files and no model.safetensors.index.json: {}", dir.string(), suffix,
                                   join(found, ", ")),
                       "pass one of them");
    }
  }
  throw UsageError(dir.string() +
                       ": no safetensors model in this directory (no model.safetensors, "
                       "model.safetensors.index.json or other *.safetensors file)",
                   "accel estimate-memory reads safetensors files only; save the model with "
                   "save_pretrained(safe_serialization=True) or pass its file");
}

json readIndex(const std::string& path) {
  if (fs::file_size(path) > kMaxIndexBytes) throw UsageError(path + ": too large for a shard index", kPathHint);
  const std::string text = readFile(path);
  json index;
  try {
    index = json::parse(text);
  } catch (const json::parse_error& e) {
    throw UsageError(fmt::format("{}: byte {}: the index is not JSON", path, e.byte > 0 ? e.byte - 1 : 0),
                     "a shard index is a JSON object with a weight_map");
  }
  if (!index.is_object() || !index.contains("weight_map") || !index["weight_map"].is_object()) {
    throw UsageError(path + ": no weight_map object in this shard index",
                     "a shard index maps each tensor name to its shard file under \"weight_map\"");
  }
  for (const auto& [tensor, shard] : index["weight_map"].items()) {
    if (!shard.is_string())
      throw UsageError(fmt::format("{}: tensor '{}' maps to {}, not a file name", path, tensor, shard.dump()));
  }
  return index;
}

ModelFiles readIndexed(const std::string& index_path) {
  json map = readIndex(index_path)["weight_map"];
  const fs::path dir = fs::path(index_path).parent_path();
  std::map<std::string, std::string> first_tensor;  // shard → a tensor the index maps to it
  for (const auto& [tensor, shard] : map.items()) first_tensor.emplace(shard.get<std::string>(), tensor);
  ModelFiles model{index_path, {}};
  std::map<std::string, std::set<std::string>> held;  // shard → its tensors
  for (const auto& [shard, tensor] : first_tensor) {
    const fs::path file = dir / shard;
    if (!fs::is_regular_file(file)) {
      throw UsageError(
          fmt::format("{}: shard '{}' (holding '{}') is missing: no file {}", index_path, shard, tensor, file.string()),
          "copy every shard the index names beside it");
    }
    model.shards.push_back(readSafetensorsHeader(file.string()));
    for (const auto& t : model.shards.back().tensors) held[shard].insert(t.name);
  }
  for (const auto& [tensor, shard] : map.items()) {
    if (!held[shard.get<std::string>()].count(tensor)) {
      throw UsageError(fmt::format("{}: tensor '{}' is mapped to shard '{}', which does not hold it", index_path,
                                   tensor, shard.get<std::string>()),
                       "the index and its shards come from different saves");
    }
  }
  return model;
}

void checkUniqueTensors(const ModelFiles& model) {
  std::map<std::string, const std::string*> owner;
  for (const auto& shard : model.shards) {
    for (const auto& t : shard.tensors) {
      auto [it, fresh] = owner.emplace(t.name, &shard.path);
      if (!fresh) {
        throw UsageError(fmt::format("tensor '{}' is in two shards: {} and {}", t.name, *it->second, shard.path),
                         "the index and its shards come from different saves");
      }
    }
  }
}

}  // namespace

ModelFiles readModelFiles(const std::string& path) {
  std::error_code ec;
  fs::file_status status = fs::status(path, ec);
  if (!fs::exists(status)) throw UsageError(path + ": no such file or directory", kPathHint);
  fs::path file = fs::is_directory(status) ? modelInDirectory(path) : fs::path(path);
  ModelFiles model;
  if (isIndexName(file.filename().string()) || file.extension() == ".json") {
    model = readIndexed(file.string());
  } else {
    model.shards.push_back(readSafetensorsHeader(file.string()));
  }
  checkUniqueTensors(model);
  return model;
}

}  // namespace accel
