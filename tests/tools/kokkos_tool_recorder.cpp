// A Kokkos Tools library for the tests: it records, one line per event, the
// regions and kernels the app announces, so a test can check what
// kokkos-tools or Nsight Systems would show. Loaded by Kokkos::initialize
// from KOKKOS_TOOLS_LIBS (Kokkos 4 and later) or KOKKOS_PROFILE_LIBRARY
// (Kokkos 3.4.01). Writes to the file named by DISCOUNT_TOOL_LOG (appended,
// flushed after every line; nothing without it). Lines are tab-separated:
//   init    <thread>
//   push    <thread>  <region>
//   pop     <thread>  <region>      the region this thread pushed last
//   unmatched-pop <thread>          a pop on a thread with no region open
//   begin_for|begin_reduce|begin_scan  <thread>  <kernel label>
//   end_for|end_reduce|end_scan        <thread>  <kernel label>
//   open    <thread>  <n> <region>... regions still open at finalize, per thread
//   finalize <thread>
// <thread> numbers the threads in the order they first call the tool.
// Every callback may run on any thread at once: one mutex guards the file
// and the shared tables; each thread has its own region stack.
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace {

std::mutex mutex;
std::FILE* out = nullptr;
std::atomic<int> next_thread{0};
std::uint64_t next_kernel = 0;
std::map<std::uint64_t, std::string> kernels;  // open kernels by id
// Each thread's open regions, by thread number; kept here, not in the thread's
// own storage, so that finalize can list what a finished thread left open.
std::map<int, std::vector<std::string>> stacks;

struct ThreadState {
  int number = next_thread++;
};

ThreadState& self() {
  thread_local ThreadState state;
  return state;
}

void line(const std::string& text) {  // call with the mutex held
  if (!out) return;
  std::fputs(text.c_str(), out);
  std::fputc('\n', out);
  std::fflush(out);
}

std::string field(const char* event, int thread) { return std::string(event) + "\t" + std::to_string(thread); }

void begin(const char* event, const char* name, std::uint64_t* id) {
  ThreadState& me = self();
  std::lock_guard<std::mutex> lock(mutex);
  *id = next_kernel++;
  kernels[*id] = name ? name : "";
  line(field(event, me.number) + "\t" + kernels[*id]);
}

void end(const char* event, std::uint64_t id) {
  ThreadState& me = self();
  std::lock_guard<std::mutex> lock(mutex);
  const auto found = kernels.find(id);
  line(field(event, me.number) + "\t" + (found == kernels.end() ? std::string("?") : found->second));
  if (found != kernels.end()) kernels.erase(found);
}

}  // namespace

extern "C" {

// The last argument is Kokkos' device-info array, unused here.
void kokkosp_init_library(const int, const std::uint64_t, const std::uint32_t, void*) {
  ThreadState& me = self();
  std::lock_guard<std::mutex> lock(mutex);
  const char* path = std::getenv("DISCOUNT_TOOL_LOG");
  if (path && *path) out = std::fopen(path, "a");
  line(field("init", me.number));
}

void kokkosp_finalize_library() {
  ThreadState& me = self();
  std::lock_guard<std::mutex> lock(mutex);
  for (const auto& [thread, regions] : stacks)
    if (!regions.empty()) {
      std::string text = field("open", thread) + "\t" + std::to_string(regions.size());
      for (const auto& r : regions) text += "\t" + r;
      line(text);
    }
  line(field("finalize", me.number));
  if (out) std::fclose(out);
  out = nullptr;
}

void kokkosp_push_profile_region(const char* name) {
  ThreadState& me = self();
  std::lock_guard<std::mutex> lock(mutex);
  auto& regions = stacks[me.number];
  regions.emplace_back(name ? name : "");
  line(field("push", me.number) + "\t" + regions.back());
}

void kokkosp_pop_profile_region() {
  ThreadState& me = self();
  std::lock_guard<std::mutex> lock(mutex);
  auto& regions = stacks[me.number];
  if (regions.empty()) {
    line(field("unmatched-pop", me.number));
    return;
  }
  line(field("pop", me.number) + "\t" + regions.back());
  regions.pop_back();
}

void kokkosp_begin_parallel_for(const char* name, const std::uint32_t, std::uint64_t* id) {
  begin("begin_for", name, id);
}
void kokkosp_end_parallel_for(const std::uint64_t id) { end("end_for", id); }
void kokkosp_begin_parallel_reduce(const char* name, const std::uint32_t, std::uint64_t* id) {
  begin("begin_reduce", name, id);
}
void kokkosp_end_parallel_reduce(const std::uint64_t id) { end("end_reduce", id); }
void kokkosp_begin_parallel_scan(const char* name, const std::uint32_t, std::uint64_t* id) {
  begin("begin_scan", name, id);
}
void kokkosp_end_parallel_scan(const std::uint64_t id) { end("end_scan", id); }

}  // extern "C"
