// Kokkos and OpenMP thread counts checked and bounded (common/threads.hpp).
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <tuple>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>

#include "common/error.hpp"
#include "common/quote.hpp"
#include "common/threads.hpp"
#include "config/config.hpp"
#include "config/config_file.hpp"

using namespace discount;

TEST(Threads, MalformedKokkosNumbersAreUsageErrors) {
  for (const char* bad : {"--kokkos-threads=abc", "--kokkos-num-threads=x", "--kokkos-device-id=-5x",
                          "--kokkos-threads", "--kokkos-threads=-3", "--kokkos-threads:4",
                          "--kokkos-numa=", "--kokkos-num-devices=2,x", "--kokkos-device=1.5"}) {
    try {
      check_kokkos_args({bad});
      ADD_FAILURE() << bad << " accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::usage) << bad;
      EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
    }
  }
  EXPECT_NO_THROW(check_kokkos_args({"--kokkos-threads=4", "--kokkos-num-threads=0", "--kokkos-device-id=1",
                                     "--kokkos-num-devices=2,1", "--kokkos-disable-warnings", "--kokkos-tools-args=a b",
                                     "--kokkos-map-device-id-by=mpi_rank"}));
}

TEST(Threads, CountsBeyondTheMachineAreLoweredWithOneWarning) {
  // OMP_NUM_THREADS=1000 on 2 CPUs.
  ThreadLimit t = limit_threads({}, nullptr, "1000", 2, 512);
  EXPECT_EQ(t.threads, 2);
  EXPECT_TRUE(t.requested);
  EXPECT_NE(t.warning.find("OMP_NUM_THREADS=1000"), std::string::npos) << t.warning;
  EXPECT_NE(t.warning.find("running 2"), std::string::npos) << t.warning;
  // The option wins over the environment, the last one given counts.
  t = limit_threads({"--kokkos-threads=3", "--kokkos-num-threads=1000"}, "7", "5", 16, 0);
  EXPECT_EQ(t.threads, 16);
  EXPECT_NE(t.warning.find("--kokkos-num-threads=1000"), std::string::npos) << t.warning;
  t = limit_threads({}, "7", "5", 16, 0);
  EXPECT_EQ(t.threads, 7);
  EXPECT_TRUE(t.warning.empty());
  // Kokkos 3's cap, below the machine's CPUs.
  t = limit_threads({}, nullptr, "100000000000000000000", 1024, 512);
  EXPECT_EQ(t.threads, 512);
  EXPECT_NE(t.warning.find("512 threads Kokkos' OpenMP backend supports"), std::string::npos) << t.warning;
  t = limit_threads({}, nullptr, nullptr, 1024, 512);
  EXPECT_EQ(t.threads, 512);
  EXPECT_FALSE(t.requested);
  EXPECT_FALSE(t.warning.empty());
  // Nothing asked, nothing to lower: Kokkos' own choice stands.
  t = limit_threads({}, nullptr, nullptr, 8, 512);
  EXPECT_EQ(t.threads, 0);
  EXPECT_TRUE(t.warning.empty());
  // OMP_NUM_THREADS the OpenMP runtime ignores (0, negative, garbage) is ignored here too.
  for (const char* ignored : {"0", "-4", "abc", "", " ", "4x"}) {
    t = limit_threads({}, nullptr, ignored, 8, 512);
    EXPECT_EQ(t.threads, 0) << ignored;
    EXPECT_TRUE(t.warning.empty()) << ignored;
  }
  EXPECT_EQ(limit_threads({}, nullptr, " 6 ,2", 8, 0).threads, 6);
  // A KOKKOS_NUM_THREADS that Kokkos would refuse is a usage error.
  EXPECT_THROW(limit_threads({}, "abc", nullptr, 8, 0), Error);
  // The rewritten options carry one thread count.
  EXPECT_EQ(with_thread_flag({"--kokkos-threads=9", "--kokkos-disable-warnings", "--kokkos-num-threads=1000"},
                             "--kokkos-threads", 2),
            (std::vector<std::string>{"--kokkos-disable-warnings", "--kokkos-threads=2"}));
}
