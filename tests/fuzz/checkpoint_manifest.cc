// SPDX-License-Identifier: Apache-2.0
// Fuzz target: the files a checkpoint directory holds (runtime/checkpoint/checkpoint_format.h),
// i.e. what `accel-train --resume` reads back from disk, damaged or not.
// Input: a manifest's text, or, when it starts with the part magic "ACCELCK1", a rank's part file.
// Properties:
//   - parseManifest / decodePart return or throw accel::Error, nothing else, for any bytes;
//   - a manifest that parses is written by formatManifest to text that parses to the same
//     manifest, and that text is a fixed point of parse+format;
//   - a part that decodes is encoded to bytes that decode to the same part.
#include <cstdint>
#include <cstring>
#include <string>

#include "lib/common/error.h"
#include "runtime/checkpoint/checkpoint_format.h"
#include "tests/fuzz/fuzz_support.h"

using namespace accel;

namespace {

void manifest(const std::string& text) {
  Manifest m;
  try {
    m = parseManifest(text, "ckpt/manifest");
  } catch (const Error& e) {
    FUZZ_CHECK(std::string(e.what()).find("ckpt/manifest") != std::string::npos,
               std::string("error without the file: ") + e.what());
    return;
  }
  FUZZ_CHECK(m.world > 0, "a manifest without a world size was accepted");
  const std::string written = formatManifest(m);
  Manifest again;
  try {
    again = parseManifest(written, "ckpt/manifest");
  } catch (const Error& e) {
    FUZZ_FAIL(std::string("formatManifest wrote what parseManifest refuses: ") + e.what() + "\n" + written);
  }
  FUZZ_CHECK(again == m, "the manifest reads back differently:\n" + written);
  FUZZ_CHECK(formatManifest(again) == written, "formatManifest is not a fixed point:\n" + written);
}

void part(const std::string& data) {
  CheckpointPart p;
  try {
    p = decodePart(data, "ckpt/rank0.part");
  } catch (const Error& e) {
    FUZZ_CHECK(std::string(e.what()).find("ckpt/rank0.part") != std::string::npos,
               std::string("error without the file: ") + e.what());
    return;
  }
  const std::string encoded = encodePart(p);
  FUZZ_CHECK(encoded.size() <= data.size(), "a part decoded to more than its bytes hold");
  CheckpointPart again = decodePart(encoded, "ckpt/rank0.part");
  FUZZ_CHECK(again.step == p.step && again.blobs == p.blobs, "the part reads back differently");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(fuzz::bytes(data, size));
  if (input.rfind("ACCELCK1", 0) == 0) {
    part(input);
  } else {
    manifest(input);
  }
  return 0;
}
