// SPDX-License-Identifier: Apache-2.0
// lib/common/strings.h's shell helpers: shellWords splits --ssh_args and $ACCEL_SSH_ARGS as a
// POSIX shell would, shellQuote writes a word a shell reads back as it was. Both against a real
// /bin/sh.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "lib/common/strings.h"
#include "tests/support/process.h"

using accel::shellQuote;
using accel::shellWords;
using Words = std::vector<std::string>;

namespace {

// The words /bin/sh makes of `text` (which must hold nothing the shell expands), each followed by
// \001 in printf's output.
Words shWords(const std::string& text) {
  const auto r = accel::test::run({"/bin/sh", "-c", "printf '%s\\001' " + text});
  REQUIRE(r.exit_code == 0);
  Words words;
  std::string word;
  for (char c : r.out) {
    if (c == '\001') {
      words.push_back(word);
      word.clear();
    } else {
      word += c;
    }
  }
  REQUIRE(word.empty());
  return words;
}

}  // namespace

TEST_CASE("shellWords: blanks separate, quotes and backslashes as a shell reads them", "[strings]") {
  CHECK(shellWords("") == Words{});
  CHECK(shellWords(" \t\n ") == Words{});
  CHECK(shellWords("a") == Words{"a"});
  CHECK(shellWords("  -o  BatchMode=no\t-v\n-4 ") == Words{"-o", "BatchMode=no", "-v", "-4"});
  CHECK(shellWords("-F '/x y/ssh config'") == Words{"-F", "/x y/ssh config"});
  CHECK(shellWords("-o \"ProxyJump=a b\"") == Words{"-o", "ProxyJump=a b"});
  CHECK(shellWords("a'b c'\"d e\"f") == Words{"ab cd ef"});  // pieces of one word
  CHECK(shellWords("''") == Words{""});
  CHECK(shellWords("a '' \"\" b") == Words{"a", "", "", "b"});
  CHECK(shellWords("a\\ b") == Words{"a b"});
  CHECK(shellWords("\\'x\\\"") == Words{"'x\""});
  CHECK(shellWords("\\\\") == Words{"\\"});
  // Inside double quotes a backslash escapes only " \ $ `; before anything else it stays.
  CHECK(shellWords("\"\\\" \\\\ \\$ \\` \\n \\a\"") == Words{"\" \\ $ ` \\n \\a"});
  // Inside single quotes nothing is special.
  CHECK(shellWords("'\\' '\"'") == Words{"\\", "\""});
  CHECK(shellWords("'a\"b'") == Words{"a\"b"});
  // Nothing is expanded.
  CHECK(shellWords("~/.ssh/key $HOME `id` *") == Words{"~/.ssh/key", "$HOME", "`id`", "*"});
}

TEST_CASE("shellWords: an open quote is nullopt", "[strings]") {
  for (const char* text : {"'", "\"", "-F 'x", "-o \"a b", "a 'b\" c", "\"a\\\"", "'a''b", "x \"'\" '"}) {
    INFO(text);
    CHECK_FALSE(shellWords(text).has_value());
  }
}

TEST_CASE("shellWords: the same words as /bin/sh", "[strings]") {
  for (const char* text :
       {"a b c", "-F '/x y/cfg' -i key", "'a b'\"c d\"e", "a\\ b \\'c\\'", "\"x \\\" y\" z", "\"\\\\a\\b\"",
        "'' a \"\"", "'it'\\''s'", "-o 'A=\"b c\"' -p 22", "\"a'b\" 'c\"d'", "\t a \t b \t", "x\\y", "\"\\$x\""}) {
    INFO(text);
    const auto ours = shellWords(text);
    REQUIRE(ours.has_value());
    CHECK(*ours == shWords(text));
  }
}

TEST_CASE("shellQuote: safe words as they are, others in single quotes", "[strings]") {
  for (const char* safe : {"abc", "/usr/bin/accel", "a-b_c.d", "key=value,x@host:22%+1", "0"}) {
    CHECK(shellQuote(safe) == safe);
  }
  CHECK(shellQuote("") == "''");
  CHECK(shellQuote("a b") == "'a b'");
  CHECK(shellQuote("it's") == "'it'\\''s'");
  CHECK(shellQuote("'") == "''\\'''");
  CHECK(shellQuote("$HOME") == "'$HOME'");
  CHECK(shellQuote("~") == "'~'");
}

TEST_CASE("shellQuote: /bin/sh and shellWords read each word back", "[strings]") {
  const std::vector<std::string> words = {
      "",      "plain",     "a b",       "it's",     "'",       "''",
      "\"",    "\\",        "\\n",       "$HOME",    "`id`",    "$(id)",
      "*",     "?",         "[a]",       "~",        "~/x",     "#not a comment",
      "a;b",   "a&b",       "a|b",       "<in",      ">out",    "(x)",
      "{a,b}", "tab\there", "new\nline", "\x01\x7f", "ünïcödé", "--ssh_args=-F '/x y/cfg'",
      "!",     "a=b c",     " lead",     "trail "};
  for (const auto& word : words) {
    INFO("[" << word << "] as " << shellQuote(word));
    const auto r = accel::test::run({"/bin/sh", "-c", "printf '%s' " + shellQuote(word)});
    CHECK(r.exit_code == 0);
    CHECK(r.out == word);
    CHECK(shellWords(shellQuote(word)) == Words{word});
  }
  // A command line of quoted words is those words.
  std::string line;
  for (const auto& word : words) line += shellQuote(word) + " ";
  CHECK(shellWords(line) == words);
}
