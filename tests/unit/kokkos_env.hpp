// Kokkos lives for the whole test binary: one ScopeGuard in a gtest
// environment, so every view is released before finalize.
#pragma once

#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include <cstdlib>
#include <memory>

namespace discount_test {

class KokkosEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    ::setenv("OMP_PROC_BIND", "false", 0);
    int argc = 1;
    char name[] = "discount_tests";
    char* argv[] = {name, nullptr};
    guard_ = std::make_unique<Kokkos::ScopeGuard>(argc, argv);
  }
  void TearDown() override { guard_.reset(); }

 private:
  std::unique_ptr<Kokkos::ScopeGuard> guard_;
};

inline ::testing::Environment* const kokkos_environment =
    ::testing::AddGlobalTestEnvironment(new KokkosEnvironment);

}  // namespace discount_test
