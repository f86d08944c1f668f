// SPDX-License-Identifier: Apache-2.0
#include "lib/model/memory_table.h"

#include <algorithm>
#include <cstdio>
#include <numeric>

#include <fmt/format.h>

#include "lib/common/error.h"
#include "lib/common/strings.h"

namespace accel {

namespace {

// Python's len() of UTF-8 text: its code points.
size_t codePoints(const std::string& s) {
  return static_cast<size_t>(std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

std::string repeat(const std::string& piece, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) out += piece;
  return out;
}

// Python's str.center: the odd space goes left when the width is odd, as CPython pads.
std::string center(const std::string& s, size_t width) {
  size_t len = codePoints(s);
  if (len >= width) return s;
  size_t margin = width - len;
  size_t left = margin / 2 + (margin & width & 1);
  return std::string(left, ' ') + s + std::string(margin - left, ' ');
}

// '%Ns' % s: right-justified to N code points.
std::string rjust(const std::string& s, size_t width) {
  size_t len = codePoints(s);
  return len >= width ? s : std::string(width - len, ' ') + s;
}

// Python's repr(round(x, 2)): printf rounds the exact binary value half to even, as round does.
std::string pythonRound2(double x) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.2f", x);
  return pythonFloatRepr(std::strtod(buffer, nullptr));
}

}  // namespace

const std::vector<std::string>& estimateDtypes() {
  static const std::vector<std::string> dtypes = {"float32", "float16", "int8", "int4"};
  return dtypes;
}

void checkEstimateDtypes(const std::vector<std::string>& dtypes) {
  const auto& valid = estimateDtypes();
  for (const auto& d : dtypes) {
    if (std::find(valid.begin(), valid.end(), d) == valid.end()) {
      std::string hint = "valid dtypes: " + join(valid, ", ");
      if (auto guess = didYouMean(d, valid)) hint = "did you mean '" + *guess + "'? " + hint;
      throw UsageError("--dtypes: unknown dtype '" + d + "'", hint);
    }
  }
}

std::string convertBytes(double size, bool python_int) {
  for (const char* unit : {"bytes", "KB", "MB", "GB", "TB"}) {
    if (size < 1024.0) {
      return (python_int ? fmt::format("{}", static_cast<uint64_t>(size)) : pythonRound2(size)) + " " + unit;
    }
    size /= 1024.0;
    python_int = false;
  }
  return pythonRound2(size) + " PB";
}

std::vector<DtypeRow> dtypeRows(const ModelSizes& sizes, const std::vector<std::string>& dtypes) {
  const double total = sizes.total.bytes();
  const double largest = sizes.largest.size.bytes();
  std::vector<DtypeRow> rows;
  for (const auto& dtype : dtypes) {
    DtypeRow row;
    row.dtype = dtype;
    row.largest_layer = largest;
    row.total = total;
    if (dtype == "float32") {
      row.training = 4 * total;
      row.largest_int = !sizes.largest.size.python_float;
      row.total_int = !sizes.total.python_float;
    } else if (dtype == "float16") {
      row.training = 2 * total;
    }
    row.training_int = !sizes.total.python_float;
    const double divisor = dtype == "float16" ? 2 : dtype == "int8" ? 4 : dtype == "int4" ? 8 : 1;
    row.largest_layer /= divisor;
    row.total /= divisor;
    rows.push_back(row);
  }
  return rows;
}

std::string asciiTable(const std::vector<std::string>& headers, const std::vector<std::vector<std::string>>& rows,
                       const std::string& title) {
  const std::string bar = "─";
  std::vector<size_t> widths;
  for (size_t i = 0; i < headers.size(); ++i) {
    size_t w = codePoints(headers[i]);
    for (const auto& row : rows) w = std::max(w, codePoints(row[i]));
    widths.push_back(w);
  }
  const std::vector<size_t> pattern_widths = widths;  // estimate.py builds its %Ns pattern before widening
  size_t diff = 0;
  auto makeRow = [&](const std::string& left, const std::string& middle, const std::string& right) {
    std::vector<std::string> parts;
    for (size_t w : widths) parts.push_back(repeat(bar, w));
    return left + join(parts, middle) + repeat(bar, diff) + right;
  };
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out = "│";
    for (size_t i = 0; i < cells.size(); ++i) out += rjust(center(cells[i], widths[i]), pattern_widths[i]) + "│";
    return out + "\n";
  };
  const size_t title_len = codePoints(title);
  if (title_len > std::accumulate(widths.begin(), widths.end(), size_t{0})) {
    const size_t separator_len = codePoints(makeRow("├", "┼", "┤"));
    diff = title_len > separator_len ? title_len - separator_len : separator_len - title_len;
    widths.back() += diff;
  }
  const std::string separator = makeRow("├", "┼", "┤");
  std::string table =
      makeRow("┌", bar, "┐") + "\n│" + center(title, codePoints(separator) - 2) + "│\n" + makeRow("├", "┬", "┤") + "\n";
  widths.back() += diff;
  table += line(headers) + separator + "\n";
  for (const auto& row : rows) table += line(row);
  std::vector<std::string> bottom;
  for (size_t w : widths) bottom.push_back(repeat(bar, w));
  return table + "└" + join(bottom, "┴") + "┘";
}

std::string accelerateTable(const ModelSizes& sizes, const std::vector<std::string>& dtypes,
                            const std::string& model_name) {
  std::vector<std::vector<std::string>> cells;
  for (const DtypeRow& row : dtypeRows(sizes, dtypes)) {
    cells.push_back({row.dtype, convertBytes(row.largest_layer, row.largest_int),
                     convertBytes(row.total, row.total_int),
                     row.training < 0 ? "N/A" : convertBytes(row.training, row.training_int)});
  }
  return asciiTable({"dtype", "Largest Layer", "Total Size", "Training using Adam"}, cells,
                    "Memory Usage for loading `" + model_name + "`");
}

}  // namespace accel
