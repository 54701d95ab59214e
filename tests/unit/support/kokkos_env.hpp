// Kokkos lives for the whole test binary: one ScopeGuard in a gtest
// environment, so every view is released before finalize.
#pragma once

#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>

#include "backend/kokkos_threads.hpp"

namespace discount_test {

class KokkosEnvironment : public ::testing::Environment {
 public:
  // ctest runs several test binaries at once (-j 4 on the GPU node). With
  // no thread count given, each one's OpenMP backend took every core: on the
  // 16-core H200 node (2026-12-02, `ctest --preset cuda -j 4` without
  // OMP_NUM_THREADS) the host kernel tests, thousands of small parallel
  // regions each, ran past 250 s instead of 1 s. So a test binary takes at
  // most kDefaultThreads unless OMP_NUM_THREADS or KOKKOS_NUM_THREADS says
  // otherwise.
  static constexpr unsigned kDefaultThreads = 4;
  void SetUp() override {
    ::setenv("OMP_PROC_BIND", "false", 0);
    std::string threads_flag;
    if (!std::getenv("OMP_NUM_THREADS") && !std::getenv("KOKKOS_NUM_THREADS")) {
      const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
      threads_flag =
          std::string(discount::kokkos_thread_flag()) + "=" + std::to_string(std::min(kDefaultThreads, cores));
    }
    char name[] = "discount_tests";
    char* argv[] = {name, threads_flag.empty() ? nullptr : threads_flag.data(), nullptr};
    int argc = threads_flag.empty() ? 1 : 2;
    guard_ = std::make_unique<Kokkos::ScopeGuard>(argc, argv);
  }
  void TearDown() override { guard_.reset(); }

 private:
  std::unique_ptr<Kokkos::ScopeGuard> guard_;
};

inline ::testing::Environment* const kokkos_environment = ::testing::AddGlobalTestEnvironment(new KokkosEnvironment);

}  // namespace discount_test
