// The one thread on which an embedding process (the Python module) does all
// of its Kokkos work: Kokkos is initialised, runs every job and is finalised
// there. Kokkos' OpenMP backend keeps its thread pool's master in a
// thread-local, so a kernel launched from another thread runs serially, and
// a CUDA instance made on another thread refuses to start ("HostSpace::
// execution_space is not initialized"); the CLI does all of it on main.
#pragma once

#include <functional>
#include <string>

namespace discount::embed {

// Runs `task` on the engine thread (started on first use, never joined: it
// sleeps until the process ends) and returns when it has finished. Calls
// from several threads run one after another. `task` must not throw.
// In a process that lost its engine to fork() it throws discount::Error
// (kEngineLostExitCode, engine_lost_message()) instead of waiting for ever.
void run_on_engine_thread(const std::function<void()>& task);

// A child forked (fork(), multiprocessing's "fork") after its parent had
// started the engine thread inherits none of the engine's threads (this one,
// Kokkos' OpenMP pool, a GPU context) and Kokkos cannot start again in one
// process: such a child refuses every engine call at once. A child forked
// before the parent's first call starts an engine of its own as usual.
bool engine_lost_to_fork();
std::string engine_lost_message();
// sysexits' EX_UNAVAILABLE: the engine is not available in this process.
constexpr int kEngineLostExitCode = 69;

}  // namespace discount::embed
