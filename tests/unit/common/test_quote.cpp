// Quoting and printable excerpts of untrusted text for messages (common/quote.hpp).
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <tuple>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>

#include "common/error.hpp"
#include "common/quote.hpp"
#include "common/threads.hpp"
#include "config/config.hpp"
#include "config/config_file.hpp"

using namespace discount;

TEST(Quote, EscapesAndBounds) {
  EXPECT_EQ(quote_for_message("plain"), "'plain'");
  EXPECT_EQ(quote_for_message(std::string("a\nb\tc\rd\0e", 9)), "'a\\nb\\tc\\rd\\x00e'");
  EXPECT_EQ(quote_for_message("\x1b[2J"), "'\\x1B[2J'");
  EXPECT_EQ(quote_for_message("caf\xc3\xa9 \xe2\x82\xac"), "'caf\xc3\xa9 \xe2\x82\xac'");  // UTF-8 kept
  EXPECT_EQ(quote_for_message("\xc3"), "'\\xC3'");                                         // cut short
  EXPECT_EQ(quote_for_message("\xc0\xaf"), "'\\xC0\\xAF'");                                // overlong
  EXPECT_EQ(quote_for_message("\xed\xa0\x80"), "'\\xED\\xA0\\x80'");                       // surrogate
  EXPECT_EQ(quote_for_message("a\xe2\x80\xae"
                              "b"),
            "'a\\u202Eb'");                               // bidi override
  EXPECT_EQ(quote_for_message("\xc2\x85"), "'\\u0085'");  // C1 control
  EXPECT_EQ(quote_for_message(std::string(200, 'x')), "'" + std::string(200, 'x') + "'");
  EXPECT_EQ(quote_for_message(std::string(201, 'x')), "'" + std::string(200, 'x') + "...' (201 bytes)");
  // Never cut inside an escape or a UTF-8 sequence.
  EXPECT_EQ(quote_for_message("abc\x01", 5), "'abc...' (4 bytes)");
  EXPECT_EQ(quote_for_message("ab\xc3\xa9\xc3\xa9", 3), "'ab\xc3\xa9...' (6 bytes)");
  EXPECT_EQ(printable_for_message(std::string(10, '\x7f'), 8), "\\x7F\\x7F...");
  const std::string big(50u << 20, 'z');
  EXPECT_EQ(quote_for_message(big).size(), std::string("'").size() + 200 + 4 + std::string(" (52428800 bytes)").size());
}

TEST(PrintableExcerpt, LockHolderTextEscapesBinaryAndCuts) {
  EXPECT_EQ(printable_for_message("pid 12 on host a", 100), "pid 12 on host a");
  EXPECT_EQ(printable_for_message(std::string("\x89HDF\r\n\x1a\n\0", 9), 100), "\\x89HDF\\r\\n\\x1A\\n\\x00");
  const std::string cut = printable_for_message(std::string(500, '\xff'), 100);
  EXPECT_LE(cut.size(), 103u);
  EXPECT_EQ(cut.substr(cut.size() - 3), "...");
  for (const char c : cut) EXPECT_TRUE(c >= 0x20 && c < 0x7f);
}
