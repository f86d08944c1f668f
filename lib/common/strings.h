// SPDX-License-Identifier: Apache-2.0
// Small string helpers shared by every layer. Pure functions; thread-safe.
#pragma once

#include <climits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace accel {

std::vector<std::string> split(std::string_view text, char separator);
std::string join(const std::vector<std::string>& parts, std::string_view separator);
std::string trim(std::string_view text);
std::string toLower(std::string_view text);
std::string toUpper(std::string_view text);
bool startsWith(std::string_view text, std::string_view prefix);
// A flag's dashed spelling: "num_processes" -> "num-processes" (argparse and CLI11 take both).
std::string dashed(std::string_view name);
bool endsWith(std::string_view text, std::string_view suffix);

// Levenshtein distance (insert, delete, substitute each cost 1).
size_t editDistance(std::string_view a, std::string_view b);

// The candidate closest to `word` when it is close enough to be a plausible typo
// (distance ≤ max(2, |word|/3), or one is a case-insensitive match of the other).
std::optional<std::string> didYouMean(std::string_view word, const std::vector<std::string>& candidates);

// Parses a whole string as a base-10 integer (optional sign); nullopt on anything else.
std::optional<long long> parseInt(std::string_view text);
// An optional sign and decimal digits: an integer, whether or not long long holds it.
bool isIntegerText(std::string_view text);
// Why `text` is not an integer from `min` to `max`, for a message that names the value's source
// first: "'4x' is not an integer", "'99999999999999999999' is out of range: it must be from 1 to
// 9223372036854775807" (digits past long long are out of range too); "" when it is one.
std::string whyNotInteger(std::string_view text, long long min = LLONG_MIN, long long max = LLONG_MAX);
// Parses a whole string as a finite decimal floating-point number; nullopt on anything else.
std::optional<double> parseDouble(std::string_view text);
// A duration setting: a number of seconds above 0 and at most 1e7 ("30", "2.5"); nullopt on
// anything else. Every timeout of the launcher and the runtime is read with it.
std::optional<double> parsePositiveSeconds(std::string_view text);

// Python's repr() of a float ("1.0", "1e-05", "0.1", "inf"): shortest round-trip digits,
// scientific notation when the exponent is < -4 or >= 16.
std::string pythonFloatRepr(double value);

// A word as a POSIX shell reads it back: as it is when only safe characters, else in single
// quotes (a quote inside as '\\'').
std::string shellQuote(const std::string& word);

// Splits a command-line string into words as a POSIX shell would without expanding anything:
// blanks separate, '…' and "…" quote (backslash escapes inside "…" and outside quotes).
// nullopt for an unterminated quote.
std::optional<std::vector<std::string>> shellWords(std::string_view text);

}  // namespace accel
