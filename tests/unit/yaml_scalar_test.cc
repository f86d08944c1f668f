// SPDX-License-Identifier: Apache-2.0
#include <catch2/catch.hpp>

#include "lib/common/strings.h"
#include "lib/config/yaml_quoting.h"
#include "lib/config/yaml_scalar.h"

using namespace accel;

TEST_CASE("plain scalars are typed as PyYAML types them", "[yaml]") {
  for (const char* word : {"NO", "no", "No", "off", "OFF", "false", "False"}) {
    auto r = resolvePlainScalar(word);
    CHECK(r.kind == ScalarKind::Bool);
    CHECK_FALSE(r.boolean);
  }
  for (const char* word : {"yes", "YES", "on", "true", "TRUE"}) {
    CHECK(resolvePlainScalar(word).boolean);
  }
  CHECK(resolvePlainScalar("y").kind == ScalarKind::String);  // not a bool in PyYAML
  CHECK(resolvePlainScalar("").kind == ScalarKind::Null);
  CHECK(resolvePlainScalar("~").kind == ScalarKind::Null);
  CHECK(resolvePlainScalar("29500").integer == 29500);
  CHECK(resolvePlainScalar("0x1f").integer == 31);
  CHECK(resolvePlainScalar("017").integer == 15);  // YAML 1.1 octal
  CHECK(resolvePlainScalar("1_000").integer == 1000);
  CHECK(resolvePlainScalar("1:30").integer == 90);
  CHECK(resolvePlainScalar("1e8").kind == ScalarKind::String);  // YAML 1.1 floats need a dot
  CHECK(resolvePlainScalar("1.0e+8").real == 1e8);
  CHECK(resolvePlainScalar("1.0").real == 1.0);
  CHECK(resolvePlainScalar(".inf").kind == ScalarKind::Float);
  CHECK(resolvePlainScalar("2024-01-02").kind == ScalarKind::Timestamp);
  CHECK(resolvePlainScalar("10.0.0.1").kind == ScalarKind::String);
  CHECK(resolvePlainScalar("0,1").kind == ScalarKind::String);
  CHECK(resolvePlainScalar("99999999999999999999").kind == ScalarKind::String);
  CHECK(resolvePlainScalar("._5").kind == ScalarKind::String);  // PyYAML 6: a digit after the dot
  CHECK(resolvePlainScalar(".5e+3").kind == ScalarKind::Float);
  CHECK(resolvePlainScalar("190:20:30.15").kind == ScalarKind::Float);
  CHECK(resolvePlainScalar("1:60").kind == ScalarKind::String);
  CHECK(resolvePlainScalar("2024-1-2 3:04:05.1 +5:30").kind == ScalarKind::Timestamp);
  CHECK(resolvePlainScalar("-.nan").kind == ScalarKind::String);
  CHECK(resolvePlainScalar("08").kind == ScalarKind::String);  // not octal, not decimal
  CHECK(formatYamlString("99999999999999999999") == "'99999999999999999999'");
  CHECK(formatYamlString("0b_") == "'0b_'");
  CHECK(isJsonNumber("-1.5E-3"));
  CHECK_FALSE(isJsonNumber("01"));
  CHECK_FALSE(isJsonNumber("1."));
}

TEST_CASE("strings are quoted exactly when PyYAML quotes them", "[yaml]") {
  CHECK(formatYamlString("MULTI_GPU") == "MULTI_GPU");
  CHECK(formatYamlString("NO") == "'NO'");
  CHECK(formatYamlString("no") == "'no'");
  CHECK(formatYamlString("all") == "all");
  CHECK(formatYamlString("1") == "'1'");
  CHECK(formatYamlString("0,1") == "0,1");
  CHECK(formatYamlString("10.0.0.1") == "10.0.0.1");
  CHECK(formatYamlString("1.5") == "'1.5'");
  CHECK(formatYamlString("") == "''");
  CHECK(formatYamlString("null") == "'null'");
  CHECK(formatYamlString("2024-01-02") == "'2024-01-02'");
  CHECK(formatYamlString("/home/user/hostfile") == "/home/user/hostfile");
  CHECK(formatYamlString("~/hostfile") == "~/hostfile");
  CHECK(formatYamlString("a: b") == "'a: b'");
  CHECK(formatYamlString("a #b") == "'a #b'");
  CHECK(formatYamlString("a#b") == "a#b");
  CHECK(formatYamlString("- x") == "'- x'");
  CHECK(formatYamlString("-x") == "-x");
  CHECK(formatYamlString("*x") == "'*x'");
  CHECK(formatYamlString(" lead") == "' lead'");
  CHECK(formatYamlString("it's") == "it's");
  CHECK(formatYamlString("'q'") == "'''q'''");
  CHECK(formatYamlString("tab\there") == "\"tab\\there\"");
  CHECK(formatYamlString("two\nlines") == "\"two\\nlines\"");
  CHECK(formatYamlString("caf\xC3\xA9") == "\"caf\\xE9\"");
  CHECK(formatYamlString("\xE2\x9E\x94") == "\"\\u2794\"");
  CHECK(formatYamlString("reduce-overhead") == "reduce-overhead");
  CHECK(formatYamlString("BertLayer,BertEmbeddings") == "BertLayer,BertEmbeddings");
}

TEST_CASE("floats are written as Python repr plus PyYAML's .0 rule", "[yaml]") {
  CHECK(formatYamlFloat(1.0) == "1.0");
  CHECK(formatYamlFloat(0.1) == "0.1");
  CHECK(formatYamlFloat(1e-5) == "1.0e-05");
  CHECK(formatYamlFloat(1e17) == "1.0e+17");
  CHECK(formatYamlFloat(1.5e17) == "1.5e+17");
  CHECK(formatYamlFloat(123456.75) == "123456.75");
  CHECK(formatYamlFloat(0.0001) == "0.0001");
  CHECK(formatYamlFloat(-2.5) == "-2.5");
  CHECK(formatYamlFloat(1e16) == "1.0e+16");
  CHECK(formatYamlFloat(1e15) == "1000000000000000.0");
  CHECK(pythonFloatRepr(0.3) == "0.3");
}

TEST_CASE("string helpers", "[strings]") {
  CHECK(editDistance("kitten", "sitting") == 3);
  CHECK(didYouMean("num_proccesses", {"num_processes", "num_machines"}) == "num_processes");
  CHECK(didYouMean("MULTI_GPUS", {"NO", "MULTI_GPU"}) == "MULTI_GPU");
  CHECK(didYouMean("xyzzy", {"config", "env"}) == std::nullopt);
  CHECK(didYouMean("CONFIG", {"config"}) == "config");
  CHECK(parseInt("42") == 42);
  CHECK(parseInt("+7") == 7);
  CHECK(parseInt("4x") == std::nullopt);
  CHECK(parseInt("") == std::nullopt);
  CHECK(parseDouble("1.5") == 1.5);
  CHECK(parseDouble("nan") == std::nullopt);
  CHECK(split("a,,b", ',') == std::vector<std::string>{"a", "", "b"});
  CHECK(trim("  a b \n") == "a b");
}
