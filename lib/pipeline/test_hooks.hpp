// A test-only hook: lets the end-to-end tests act while a run is certainly
// still in flight (a Ctrl-C, a signal, a kill -9, a look at the terminal),
// however fast the machine is, without waiting for wall-clock time.
//
//   DISCOUNT_TEST_HOLD=<dir>
//
// After the writer has written (and reported) the w-th slab of this run
// (w = 1, 2, ...), if <dir>/hold-<w> exists, it creates <dir>/held-<w> and
// waits, polling every 2 ms, until hold-<w> is removed or the run is stopping
// (a stop signal or another stage's error). A test creates the hold-<w> files
// it wants before it starts the run, waits for held-<w>, acts, and removes
// hold-<w> to let the run go on. Unset (outside the tests) the hook costs one
// test of an empty string per slab. Read with the job's other knobs
// (common/knobs.hpp); docs/config.md lists it as a test hook.
#pragma once

#include <functional>
#include <string>

namespace discount {

class TestHold {
 public:
  explicit TestHold(std::string dir);  // Knobs::test_hold; empty: no pauses
  void after_slab(int written, const std::function<bool()>& stopping) const {
    if (!dir_.empty()) hold(written, stopping);
  }

 private:
  void hold(int written, const std::function<bool()>& stopping) const;
  std::string dir_;
};

}  // namespace discount
