// The job's ranks. Built with MPI (DISCOUNT_ENABLE_MPI) and started by
// mpirun/srun, every rank runs the same command on its share of the slabs;
// otherwise there is one rank and every call here is a no-op. Everything MPI
// lives behind this header, so the rest of lib/ never includes mpi.h.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

namespace discount::ranks {

// Starts MPI (when built with it) for the lifetime of the object; one per
// process, before Kokkos. MPI_THREAD_SERIALIZED: the writer thread may call
// MPI-IO while no other thread calls MPI.
class Session {
 public:
  Session(int& argc, char**& argv);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
};

// After the run's one error line: the library teardown at MPI_Finalize may
// not add lines of its own. Parallel HDF5 closes itself there (H5dont_atexit
// does not reach that hook) and, after a damaged input, prints "infinite
// loop closing library"; stderr is pointed at /dev/null just before
// MPI_Finalize. No-op without MPI.
void quiet_teardown();

bool built_with_mpi();
int rank();        // 0 without MPI
int size();        // 1 without MPI
int local_rank();  // rank among the ranks of this node
int local_size();  // ranks on this node
inline bool is_root() { return rank() == 0; }
// The job's communicator for code that hands it to a library (MPI-IO): points
// at an MPI_Comm; null without MPI or with one rank.
const void* communicator();
inline bool multi() { return size() > 1; }
// The GPU this rank uses: node-local rank modulo the visible devices (0
// when there are none).
int local_device(int visible_devices);
// Kokkos options that give this rank its own GPU (device id = node-local rank
// modulo the visible devices) and its share of the cores, unless the user set
// them (--kokkos-device-id, --kokkos-num-devices, --kokkos-threads,
// OMP_NUM_THREADS). Empty with one rank per node.
std::vector<std::string> kokkos_rank_args(const std::vector<std::string>& user_args, int visible_devices,
                                          int threads_per_rank);
// This rank's share of the cores: all the launcher bound it to, or, when it
// is not bound (its mask covers the job's CPUs on this node), those CPUs
// divided by the ranks on the node.
int threads_per_rank(int process_cpus, int node_cpus);

// No rank waits for ever. Every collective below but agree() is bounded by
// `seconds` (config `ranks.timeout`): a rank that has waited that long in one
// for the others (a rank frozen, its node or link gone) prints why and exits
// with 75 (ExitCode::interrupted) at once. agree() is not: it ends the steps
// one rank does alone (collectively(): creating, publishing or verifying the
// output), which take as long as they take. What it finished is in the
// output's progress record already (recorded at each checkpoint, and before
// the first collective after its slabs), so a requeued job resumes. A
// watchdog thread, started here with several ranks, checks the waits; 0 or
// less: no bound. Takes effect on this rank; call it with the same value on
// every rank.
void set_timeout(double seconds);
// What the ranks still at work change as they go (the mark of the job's
// shared progress record): while a waiting rank sees it change, its wait
// starts again, so a rank that lags the others by more than the timeout but
// records slabs is not taken for gone. Empty: the wait alone counts.
void set_progress(std::function<std::uint64_t()> progress);
double timeout();
// Seconds this rank has spent in the collectives so far, waits included.
double collective_seconds();
// Every rank's host name, by rank (collective); {host} without MPI.
std::vector<std::string> hosts();

void barrier();
std::uint64_t min(std::uint64_t value);
int max(int value);
// Element-wise sums onto every rank (the checksum sink's per-date sums).
void sum(std::vector<double>& values);
void sum(std::vector<std::uint64_t>& values);
void sum(std::uint64_t& value);
double max(double value);
// The root's string on every rank.
void broadcast(std::string& text);

// One agreement point: every rank reports how its part went (nullptr: fine).
// When any rank failed, every rank throws: the lowest failing rank its own
// error, the others discount::Error with the same exit code and a message
// that names that rank, marked as already reported (see reported_elsewhere).
// With one rank it rethrows the error, if any.
void agree(std::exception_ptr error);
// Runs body on every rank, then agree()s on the outcome.
template <class Body>
auto collectively(Body&& body) -> decltype(body()) {
  std::exception_ptr error;
  if constexpr (std::is_void_v<decltype(body())>) {
    try {
      body();
    } catch (...) { error = std::current_exception(); }
    agree(error);
  } else {
    decltype(body()) result{};
    try {
      result = body();
    } catch (...) { error = std::current_exception(); }
    agree(error);
    return result;
  }
}

// True for an error thrown by agree() on a rank that did not fail itself:
// main() prints nothing for it (the failing rank prints the reason).
bool reported_elsewhere(const std::exception& error);
// True once agree() has thrown on this rank: every rank knows the job failed.
bool error_agreed();
// For an error that escaped without agreement on a multi-rank run: the other
// ranks may be waiting in a collective, so the whole job must end.
[[noreturn]] void abort_job(int exit_code);

}  // namespace discount::ranks
