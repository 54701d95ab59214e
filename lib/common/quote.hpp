// Values and file names from a user's files, made safe to print in a one-line
// message: control bytes and bytes that are not UTF-8 become printable
// escapes (\n, \t, \r, \xNN; C1 controls and the line/paragraph separators
// as \uNNNN), and a long value is cut, so a 50 MB string in a config cannot
// flood the terminal or break the one-line error format.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace discount {

// At most `max_chars` printable characters of `text` (escapes counted by
// their printed length; never cut inside a UTF-8 sequence or an escape);
// "..." marks a cut. Backslashes are kept as they are.
std::string printable_for_message(std::string_view text, std::size_t max_chars = 200);

// printable_for_message in single quotes; a cut value also says how long it
// was: 'abc...' (52428800 bytes).
std::string quote_for_message(std::string_view text, std::size_t max_chars = 200);

}  // namespace discount
