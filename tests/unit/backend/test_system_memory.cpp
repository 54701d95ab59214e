// backend/system_memory and the GPU runtime as a build sees them: the host's
// free memory is known and bounded by what the machine has; without a GPU
// backend (host_runtime.cpp) every GPU fact answers "no GPU".
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>

#include "backend/gpu_runtime.hpp"
#include "backend/launch_limits.hpp"
#include "backend/system_memory.hpp"

TEST(SystemMemory, HostAvailableIsKnownAndAtMostPhysicalMemory) {
  const std::uint64_t available = discount::host_available_bytes();
  const auto physical =
      static_cast<std::uint64_t>(::sysconf(_SC_PHYS_PAGES)) * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  EXPECT_GT(available, 0u);
  EXPECT_LE(available, physical);
}

TEST(SystemMemory, AddressSpaceRoomIsNeverZero) {
  discount::AddressSpace a;
  a.limit = 100;
  a.in_use = 80;
  a.reserved = 30;
  EXPECT_EQ(a.room(), 1u);  // over the limit already: one byte, never a division by zero
  a.reserved = 10;
  EXPECT_EQ(a.room(), 10u);
}

TEST(GpuRuntime, ABuildWithoutAGpuAnswersNoGpu) {
  if (discount::gpu::compiled_in()) GTEST_SKIP() << "this build has a GPU backend";
  EXPECT_EQ(discount::gpu::device_count(), 0);
  EXPECT_EQ(discount::gpu::free_bytes(0), 0u);
  EXPECT_TRUE(discount::gpu::device_name().empty());
  EXPECT_EQ(discount::gpu::create_stream(), nullptr);
  int x = 0;
  EXPECT_FALSE(discount::gpu::register_host(&x, sizeof x, false));
  EXPECT_EQ(discount::visible_devices(), 0);
  EXPECT_EQ(discount::device_free_bytes(0), 0u);
}

TEST(LaunchLimits, BlockZIsCudas) { EXPECT_EQ(discount::kMaxBlockZ, 64); }
