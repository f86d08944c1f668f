// SPDX-License-Identifier: Apache-2.0
// The table `accelerate estimate-memory` prints, character for character: its box-drawing
// layout (estimate.py's create_ascii_table, widths in code points as Python's len counts them),
// its rows per dtype and its byte formatting (convert_bytes).
#pragma once

#include <string>
#include <vector>

#include "lib/model/memory_estimate.h"

namespace accel {

// The dtypes of Accelerate's --dtypes, in its default order.
const std::vector<std::string>& estimateDtypes();
// Throws accel::UsageError naming the valid dtypes when one of `dtypes` is not among them.
void checkEstimateDtypes(const std::vector<std::string>& dtypes);

// convert_bytes: the largest unit below 1024 of bytes, KB, MB, GB, TB (else PB), the number as
// Python prints round(size, 2); `python_int` when the amount is a Python int (printed whole).
std::string convertBytes(double size, bool python_int);

// One row's amounts: Accelerate's float32 figures scaled by the dtype (float16 a half, int8 a
// quarter, int4 an eighth); training with Adam is 4x the float32 total in float32, 2x in
// float16, and not estimated ("N/A") for int8 and int4.
struct DtypeRow {
  std::string dtype;
  double largest_layer = 0;
  double total = 0;
  double training = -1;  // -1: N/A
  // Which amounts Accelerate holds as Python ints (printed whole below 1024 bytes): the float32
  // row's, and float16's training figure (2 * an int); a scaled amount is a float.
  bool largest_int = false, total_int = false, training_int = false;
};
std::vector<DtypeRow> dtypeRows(const ModelSizes& sizes, const std::vector<std::string>& dtypes);

std::string asciiTable(const std::vector<std::string>& headers, const std::vector<std::vector<std::string>>& rows,
                       const std::string& title);
// The whole table for `model_name` (the path as typed), without a final newline.
std::string accelerateTable(const ModelSizes& sizes, const std::vector<std::string>& dtypes,
                            const std::string& model_name);

}  // namespace accel
