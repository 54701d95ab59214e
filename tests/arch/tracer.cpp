// Call-edge tracer for tests/arch/crossings.py, linked only into its
// -finstrument-functions build (never the product). Each thread keeps a
// shadow stack; an edge (caller, callee) counts inside a root function
// (CROSSINGS_ROOTS, hex addresses) on its thread, or on any thread while a
// root runs; a thread's first function gets caller 0. The distinct edges go
// to CROSSINGS_OUT at exit, "caller callee" in hex, one a line.
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <utility>
#include <vector>

#define NO_TRACE __attribute__((no_instrument_function))

namespace {

using Edge = std::pair<std::uintptr_t, std::uintptr_t>;

struct Store {
  std::mutex mutex;
  std::set<Edge> edges;
  std::vector<std::uintptr_t> roots;
};

NO_TRACE Store& store() {
  static Store* s = new Store;  // never destroyed: threads may still trace while exit handlers run
  return *s;
}

std::atomic<int> roots_active{0};  // root frames open on any thread
std::atomic<bool> finished{false};

struct ThreadState {
  std::vector<std::uintptr_t> stack;
  std::set<Edge> seen;  // edges this thread has already handed to the store
  int in_root = 0;      // root frames open on this thread
};
thread_local ThreadState* state = nullptr;

// Read on the first call that sees CROSSINGS_ROOTS: calls made before main
// (static constructors, the preinit entry) may not see the environment yet.
NO_TRACE void load_roots(Store& s) {
  static std::atomic<bool> loaded{false};
  if (loaded) return;
  const char* text = std::getenv("CROSSINGS_ROOTS");
  if (!text) return;
  std::lock_guard<std::mutex> lock(s.mutex);
  if (loaded) return;
  while (*text) {
    char* end = nullptr;
    const unsigned long long value = std::strtoull(text, &end, 16);
    if (end == text) break;
    s.roots.push_back(static_cast<std::uintptr_t>(value));
    text = *end == ',' ? end + 1 : end;
  }
  loaded = true;
}

NO_TRACE bool is_root(Store& s, std::uintptr_t fn) {
  for (std::uintptr_t r : s.roots)
    if (r == fn) return true;
  return false;
}

NO_TRACE void write_edges() {
  finished = true;
  const char* path = std::getenv("CROSSINGS_OUT");
  if (!path) return;
  Store& s = store();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (FILE* f = std::fopen(path, "a")) {
    for (const Edge& e : s.edges)
      std::fprintf(f, "%zx %zx\n", static_cast<std::size_t>(e.first), static_cast<std::size_t>(e.second));
    std::fclose(f);
  }
}

}  // namespace

extern "C" NO_TRACE void __cyg_profile_func_enter(void* fn, void* /*call_site*/) {
  if (finished) return;
  if (!state) state = new ThreadState;  // leaked on purpose: thread_local destructors run after exit hooks
  Store& s = store();
  const auto callee = reinterpret_cast<std::uintptr_t>(fn);
  const std::uintptr_t caller = state->stack.empty() ? 0 : state->stack.back();
  load_roots(s);
  const bool root = is_root(s, callee);
  if ((state->in_root > 0 || (roots_active.load() > 0 && !root)) && state->seen.insert({caller, callee}).second) {
    std::lock_guard<std::mutex> lock(s.mutex);
    s.edges.insert({caller, callee});
  }
  if (root) {
    ++state->in_root;
    ++roots_active;
  }
  state->stack.push_back(callee);
}

extern "C" NO_TRACE void __cyg_profile_func_exit(void* fn, void* /*call_site*/) {
  if (!state || state->stack.empty()) return;
  state->stack.pop_back();
  Store& s = store();
  if (is_root(s, reinterpret_cast<std::uintptr_t>(fn))) {
    --state->in_root;
    --roots_active;
  }
}

namespace {
// Registered before main: runs after every handler registered later.
struct AtExit {
  NO_TRACE AtExit() { std::atexit(write_edges); }
} at_exit;
}  // namespace
