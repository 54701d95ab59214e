// The one thread on which an embedding process (the Python module) does all
// of its Kokkos work: Kokkos is initialised, runs every job and is finalised
// there. Kokkos' OpenMP backend keeps its thread pool's master in a
// thread-local, so a kernel launched from another thread runs serially, and
// a CUDA instance made on another thread refuses to start ("HostSpace::
// execution_space is not initialized"); the CLI does all of it on main.
#pragma once

#include <functional>

namespace discount::embed {

// Runs `task` on the engine thread (started on first use, never joined: it
// sleeps until the process ends) and returns when it has finished. Calls
// from several threads run one after another. `task` must not throw.
void run_on_engine_thread(const std::function<void()>& task);

}  // namespace discount::embed
