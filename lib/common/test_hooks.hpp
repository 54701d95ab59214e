// A test-only hook: lets the end-to-end tests act while a run is certainly
// still in flight (a Ctrl-C, a signal, a kill -9, a look at the terminal),
// however fast the machine is, without waiting for wall-clock time.
//
//   DISCOUNT_TEST_HOLD=<dir>
//
// After the writer has written (and reported) the w-th slab of this run
// (w = 1, 2, ...), if <dir>/hold-<w> exists, it creates <dir>/held-<w> and
// waits, polling every 2 ms, until hold-<w> is removed or the run is stopping
// (a stop signal or another stage's error). Likewise, rank 0 about to publish
// the finished output (the rename of `<out>.partial` into `<out>`, every unit
// recorded) creates <dir>/held-publish and waits while <dir>/hold-publish
// exists. A test creates the hold files it wants before it starts the run,
// waits for held-<name>, acts, and removes hold-<name> to let the run go on.
// Unset (outside the tests) the hook costs one test of an empty string per
// slab. Read with the job's other knobs (common/knobs.hpp); docs/config.md
// lists it as a test hook.
#pragma once

#include <functional>
#include <string>

namespace discount {

class TestHold {
 public:
  explicit TestHold(std::string dir);  // Knobs::test_hold; empty: no pauses
  void after_slab(int written, const std::function<bool()>& stopping) const {
    if (!dir_.empty()) hold(std::to_string(written), stopping);
  }
  // Before the rename that publishes the output; only the removal of
  // hold-publish (or the process's end) lets it go on.
  void before_publish() const {
    if (!dir_.empty()) hold("publish", [] { return false; });
  }

 private:
  void hold(const std::string& name, const std::function<bool()>& stopping) const;
  std::string dir_;
};

}  // namespace discount
