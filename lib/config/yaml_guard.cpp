#include "config/yaml_guard.hpp"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>

#include <sstream>
#include <unordered_map>
#include <vector>

#include "common/error.hpp"
#include "common/quote.hpp"

namespace discount {

std::string config_location(const std::string& source, const YAML::Mark& mark) {
  std::string out = printable_for_message(source);
  if (!mark.is_null()) out += ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
  return out;
}

namespace {

[[noreturn]] void fail(const std::string& source, const YAML::Mark& mark, const std::string& what) {
  throw config_error(config_location(source, mark) + ": " + what);
}

// A quote at `pos` opens a quoted scalar (not an apostrophe inside a plain
// one): only the line's start, spaces or one of : - [ { , come before it.
bool scalar_start(const std::string& text, std::size_t pos) {
  while (pos > 0 && (text[pos - 1] == ' ' || text[pos - 1] == '\t')) --pos;
  if (pos == 0 || text[pos - 1] == '\n') return true;
  const char before = text[pos - 1];
  return before == ':' || before == '-' || before == '[' || before == '{' || before == ',';
}

// The first tab at or before line `last_line` (0-based; -1: anywhere) that
// is not inside a quoted scalar or a comment on its line, or a null mark.
// Tabs may appear inside quotes and comments; elsewhere they are why the
// YAML failed (indentation with tabs is never valid YAML).
YAML::Mark first_tab(const std::string& text, int last_line) {
  int line = 0, column = 0;
  char quote = 0;
  bool comment = false;
  for (std::size_t pos = 0; pos < text.size(); ++pos) {
    const char c = text[pos];
    if (c == '\n') {
      if (last_line >= 0 && line >= last_line) break;
      ++line;
      column = 0;
      comment = false;
      continue;
    }
    if (!comment) {
      if (quote) {
        if (c == '\\' && quote == '"') {
          ++pos;
          ++column;
        } else if (c == quote) {
          quote = 0;
        }
      } else if ((c == '"' || c == '\'') && scalar_start(text, pos)) {
        quote = c;
      } else if (c == '#' && (column == 0 || text[pos - 1] == ' ' || text[pos - 1] == '\t')) {
        comment = true;
      } else if (c == '\t') {
        YAML::Mark mark;
        mark.pos = static_cast<int>(pos);
        mark.line = line;
        mark.column = column;
        return mark;
      }
    }
    ++column;
  }
  return YAML::Mark::null_mark();
}

// yaml-cpp's scanner queues every token of nested flow collections ('[[[[')
// until their keys resolve: a 1 MiB file of brackets took 250 MiB before the
// parser's depth limit spoke. Every '[' and '{' outside a comment is counted
// (inside a quoted scalar too: counting more than yaml-cpp sees is the safe
// side), far above what a job file needs and far below what costs memory.
constexpr std::size_t kMaxFlowOpenings = 1000;

void refuse_flow_flood(const std::string& text, const std::string& source) {
  std::size_t openings = 0;
  int line = 0, column = 0;
  bool comment = false;
  for (std::size_t pos = 0; pos < text.size(); ++pos, ++column) {
    const char c = text[pos];
    if (c == '\n') {
      ++line;
      column = -1;
      comment = false;
    } else if (!comment && c == '#' &&
               (pos == 0 || text[pos - 1] == ' ' || text[pos - 1] == '\t' || text[pos - 1] == '\n' ||
                text[pos - 1] == '\r')) {
      comment = true;
    } else if (!comment && (c == '[' || c == '{') && ++openings > kMaxFlowOpenings) {
      YAML::Mark mark;
      mark.pos = static_cast<int>(pos);
      mark.line = line;
      mark.column = column;
      fail(source, mark,
           "more than " + std::to_string(kMaxFlowOpenings) +
               " '[' or '{' (flow lists and mappings); a job file needs a handful");
    }
  }
}

constexpr const char* kNoAliases =
    "an alias (*name): YAML anchors and aliases are not supported in this config; write each value out";

// The event pass. One frame per open mapping or sequence.
class Guard : public YAML::EventHandler {
 public:
  explicit Guard(const std::string& source) : source_(source) {}

  void OnDocumentStart(const YAML::Mark& mark) override {
    if (++documents_ > 1) fail(source_, mark, "a second YAML document ('---' again); a job file holds one document");
  }
  void OnDocumentEnd() override {}

  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override { node(mark, anchor, Kind::null, ""); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { fail(source_, mark, kNoAliases); }
  void OnAnchor(const YAML::Mark& mark, const std::string& name) override {
    fail(source_, mark,
         "an anchor (&" + printable_for_message(name, 60) +
             "): YAML anchors and aliases are not supported in this config; write each value out");
  }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor, const std::string& value) override {
    node(mark, anchor, Kind::scalar, value);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    node(mark, anchor, Kind::sequence, "");
    frames_.emplace_back(false);
  }
  void OnSequenceEnd() override { frames_.pop_back(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    node(mark, anchor, Kind::map, "");
    frames_.emplace_back(true);
  }
  void OnMapEnd() override { frames_.pop_back(); }

 private:
  enum class Kind { null, scalar, sequence, map };

  struct Frame {
    explicit Frame(bool map) : is_map(map) {}
    bool is_map = false;
    bool key_next = true;   // a mapping's next node is a key
    std::string key;        // a mapping's current key
    std::size_t items = 0;  // a sequence's items so far
    std::unordered_map<std::string, YAML::Mark> keys;
  };

  // "input.file", "compute.tile[1]": the open frames' current entries.
  std::string path_to(const std::string& last_key) const {
    std::string path;
    for (std::size_t f = 0; f + 1 < frames_.size(); ++f) {
      const Frame& frame = frames_[f];
      if (frame.is_map)
        path += (path.empty() ? "" : ".") + frame.key;
      else
        path += "[" + std::to_string(frame.items - 1) + "]";
    }
    return path + (path.empty() ? "" : ".") + last_key;
  }

  void node(const YAML::Mark& mark, YAML::anchor_t anchor, Kind kind, const std::string& value) {
    if (anchor != YAML::NullAnchor)
      fail(source_, mark, "an anchor (&name): YAML anchors and aliases are not supported in this config");
    if (++nodes_ > kMaxConfigNodes)
      fail(
          source_, mark,
          "more than " + std::to_string(kMaxConfigNodes) + " YAML nodes; a job file holds a few dozen keys and values");
    if (frames_.empty()) return;  // the document's root
    Frame& frame = frames_.back();
    if (!frame.is_map) {
      ++frame.items;
      return;
    }
    if (!frame.key_next) {
      frame.key_next = true;
      return;
    }
    frame.key_next = false;
    if (kind == Kind::sequence || kind == Kind::map)
      fail(source_, mark,
           std::string("a complex key (a ") + (kind == Kind::map ? "mapping" : "list") +
               " used as a key, as with '? [a, b]'); keys in this config are plain names");
    if (kind == Kind::null)
      fail(source_, mark, "an empty or null key; keys in this config are plain names such as 'input'");
    const auto [first, inserted] = frame.keys.emplace(value, mark);
    if (!inserted)
      fail(source_, mark,
           "duplicate key " + quote_for_message(path_to(value)) + " (first given at " +
               config_location(source_, first->second) + "); remove one of the two");
    frame.key = value;
  }

  const std::string& source_;
  std::vector<Frame> frames_;
  std::size_t documents_ = 0;
  std::size_t nodes_ = 0;
};

}  // namespace

YAML::Node load_guarded_yaml(const std::string& text, const std::string& source) {
  refuse_flow_flood(text, source);
  try {
    std::istringstream stream(text);
    YAML::Parser parser(stream);
    Guard guard(source);
    while (parser.HandleNextDocument(guard)) {}
    return YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    // yaml-cpp names what a tab broke ("illegal map value"), not the tab.
    const YAML::Mark tab = first_tab(text, e.mark.is_null() ? -1 : e.mark.line);
    if (!tab.is_null()) fail(source, tab, "a tab character; YAML indents with spaces (replace the tab with spaces)");
    // yaml-cpp 0.8 appends the anchor's name to this message; 0.7 does not.
    if (e.msg.rfind(YAML::ErrorMsg::UNKNOWN_ANCHOR, 0) == 0) fail(source, e.mark, kNoAliases);
    fail(source, e.mark, "YAML syntax error: " + printable_for_message(e.msg));
  }
}

}  // namespace discount
