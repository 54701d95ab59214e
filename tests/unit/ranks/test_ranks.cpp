// The job's ranks without a launcher (lib/ranks): one rank, collectives that
// hand every value back unchanged, and agree() rethrowing this rank's error.
// Also true of an MPI build started without mpirun/srun.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <exception>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "ranks/ranks.hpp"

using namespace discount;

TEST(RankShare, ThreadsFollowTheLaunchersBinding) {
  // One rank per node here (no MPI launcher): bound to 4 of 16 CPUs -> 4;
  // unbound -> all 16.
  EXPECT_EQ(discount::ranks::threads_per_rank(4, 16), 4);
  EXPECT_EQ(discount::ranks::threads_per_rank(16, 16), 16 / discount::ranks::local_size());
  EXPECT_EQ(discount::ranks::threads_per_rank(0, 16), 0);
  // No GPU, no user options, one rank on the node: nothing to add.
  EXPECT_TRUE(discount::ranks::kokkos_rank_args({}, 0, 8).empty() || discount::ranks::local_size() > 1);
}

TEST(Ranks, OneRankWithoutALauncher) {
  EXPECT_EQ(ranks::rank(), 0);
  EXPECT_EQ(ranks::size(), 1);
  EXPECT_EQ(ranks::local_rank(), 0);
  EXPECT_EQ(ranks::local_size(), 1);
  EXPECT_TRUE(ranks::is_root());
  EXPECT_FALSE(ranks::multi());
  EXPECT_EQ(ranks::communicator(), nullptr);  // MPI-IO is not used with one rank
  EXPECT_EQ(ranks::local_device(0), 0);
  EXPECT_EQ(ranks::local_device(3), 0);
  // The only rank on its node gets no device or thread options, whatever it sees.
  EXPECT_TRUE(ranks::kokkos_rank_args({}, 4, 8).empty());
  EXPECT_TRUE(ranks::kokkos_rank_args({"--kokkos-threads=3"}, 2, 16).empty());
}

// A process bound to fewer CPUs than the node's keeps what it was given; an
// unbound one (or one given more) shares the node's CPUs among the node's ranks.
TEST(Ranks, ThreadsPerRankOnOneRank) {
  for (int node : {1, 7, 16, 129}) {
    for (int process = 1; process < node; ++process) EXPECT_EQ(ranks::threads_per_rank(process, node), process);
    EXPECT_EQ(ranks::threads_per_rank(node, node), node);
    EXPECT_EQ(ranks::threads_per_rank(node + 3, node), node);
    EXPECT_EQ(ranks::threads_per_rank(-1, node), 0);
  }
}

// One rank has no one to wait for: no watchdog, whatever the timeout; the
// host list is this host; the collectives' time is counted.
TEST(Ranks, TimeoutAndHostsOnOneRank) {
  ranks::set_timeout(0.01);
  EXPECT_EQ(ranks::timeout(), 0.0);
  const double before = ranks::collective_seconds();
  for (int i = 0; i < 100; ++i) ranks::barrier();
  EXPECT_EQ(ranks::max(3), 3);  // a watchdog with 0.01 s would have ended the test by now
  EXPECT_GE(ranks::collective_seconds(), before);
  const auto hosts = ranks::hosts();
  ASSERT_EQ(hosts.size(), 1u);
  char name[256] = {};
  ASSERT_EQ(gethostname(name, sizeof name - 1), 0);
  EXPECT_EQ(hosts[0], name);
}

TEST(Ranks, CollectivesGiveBackTheValuesOnOneRank) {
  std::mt19937_64 rng(97);
  ranks::barrier();
  for (int trial = 0; trial < 20; ++trial) {
    const std::uint64_t u = rng() | 1;  // non-zero
    EXPECT_EQ(ranks::min(u), u);
    const int i = static_cast<int>(rng() % 2001) - 1000;
    EXPECT_EQ(ranks::max(i), i);
    const double x = std::uniform_real_distribution<double>(-1e9, 1e9)(rng);
    EXPECT_EQ(ranks::max(x), x);
    std::uint64_t one = u;
    ranks::sum(one);
    EXPECT_EQ(one, u);
  }
  std::vector<double> doubles(13);  // odd length, random non-zero values
  for (auto& v : doubles) v = std::uniform_real_distribution<double>(0.5, 2.0)(rng) * (rng() % 2 ? 1 : -1);
  const auto doubles_before = doubles;
  ranks::sum(doubles);
  EXPECT_EQ(doubles, doubles_before);
  std::vector<std::uint64_t> counts(7);
  for (auto& v : counts) v = rng() | 1;
  const auto counts_before = counts;
  ranks::sum(counts);
  EXPECT_EQ(counts, counts_before);
  std::string text = "root's text \x01 with bytes";
  ranks::broadcast(text);
  EXPECT_EQ(text, "root's text \x01 with bytes");
}

// With one rank agree() passes success through and rethrows this rank's own
// error unchanged (never the "rank N failed" stand-in other ranks get).
TEST(Ranks, AgreeRethrowsThisRanksOwnError) {
  EXPECT_NO_THROW(ranks::agree(nullptr));
  try {
    ranks::agree(std::make_exception_ptr(data_error("slab 3 is damaged")));
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::data_invalid);
    EXPECT_STREQ(e.what(), "slab 3 is damaged");
    EXPECT_FALSE(ranks::reported_elsewhere(e));
  }
  EXPECT_TRUE(ranks::error_agreed());
  EXPECT_THROW(ranks::agree(std::make_exception_ptr(std::runtime_error("not ours"))), std::runtime_error);
}

TEST(Ranks, CollectivelyReturnsTheBodysResultOrItsError) {
  int calls = 0;
  EXPECT_EQ(ranks::collectively([&] {
              ++calls;
              return 41 + calls;
            }),
            42);
  ranks::collectively([&] { ++calls; });
  EXPECT_EQ(calls, 2);
  try {
    ranks::collectively([]() -> std::string { throw config_error("job.yaml: bad"); });
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::config);
    EXPECT_STREQ(e.what(), "job.yaml: bad");
  }
}
