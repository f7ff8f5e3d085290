//===- RuntimeTest.cpp - Error paths and caching of the runtime -----------===//
//
// Runs against fake_cuda (a stand-in driver), so it needs no GPU.
//
//===----------------------------------------------------------------------===//
#include "sparse-mla/Runtime/CApi.h"
#include "sparse-mla/Runtime/Runtime.h"

#include <atomic>
#include <cstdlib>
#include <dlfcn.h>
#include <fstream>
#include <gtest/gtest.h>
#include <thread>

using namespace sparse_mla::runtime;

namespace {

struct Fake {
  void *handle = dlopen(FAKE_CUDA_PATH, RTLD_NOW | RTLD_LOCAL);
  int count(int which) {
    auto f = reinterpret_cast<int (*)(int)>(dlsym(handle, "fake_cuda_count"));
    return f(which);
  }
  void reset() {
    reinterpret_cast<void (*)()>(dlsym(handle, "fake_cuda_reset"))();
  }
  /// The device whose context was current: 0 now, 1 at the last load, 2 at
  /// the last launch (99 the caller's own context, -1 none).
  int context(int when) {
    return reinterpret_cast<int (*)(int)>(dlsym(handle, "fake_cuda_context"))(when);
  }
  void useCallerContext() {
    reinterpret_cast<void (*)()>(dlsym(handle, "fake_cuda_use_caller_context"))();
  }
};
enum { kRetain, kSetAttr, kLaunch, kLoad };

std::string writeFile(const std::string &name, const std::string &text) {
  std::string path = ::testing::TempDir() + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

std::string messageOf(const std::function<void()> &f) {
  try {
    f();
  } catch (const CudaError &e) {
    return e.what();
  }
  return "";
}

/// 256 threads and 200 KiB of shared memory: more than the default limit.
LaunchConfig largeSharedLaunch() {
  LaunchConfig c;
  c.block[0] = 256;
  c.sharedBytes = 200 * 1024;
  return c;
}

class RuntimeTest : public ::testing::Test {
protected:
  void SetUp() override {
    unsetenv("FAKE_CUDA_FAIL");
    fake.reset();
  }
  Fake fake;
};

TEST_F(RuntimeTest, MissingDriverIsReported) {
  std::string msg = messageOf([] { Runtime rt("/nonexistent/libcuda.so.1"); });
  EXPECT_NE(msg.find("cannot open the CUDA driver /nonexistent/libcuda.so.1"),
            std::string::npos)
      << msg;
}

TEST_F(RuntimeTest, LibraryWithoutDriverEntryPointsIsReported) {
  std::string msg = messageOf([] { Runtime rt("libm.so.6"); });
  EXPECT_NE(msg.find("has no cuInit"), std::string::npos) << msg;
}

TEST_F(RuntimeTest, FailingInitNamesTheCall) {
  setenv("FAKE_CUDA_FAIL", "cuInit", 1);
  std::string msg = messageOf([] { Runtime rt(FAKE_CUDA_PATH); });
  EXPECT_NE(msg.find("cuInit failed: CUDA_ERROR_INVALID_VALUE (1)"),
            std::string::npos)
      << msg;
}

TEST_F(RuntimeTest, MissingKernelFileIsReported) {
  Runtime rt(FAKE_CUDA_PATH);
  std::string msg =
      messageOf([&] { rt.getKernel("/nonexistent/k.ptx", "k", 0); });
  EXPECT_NE(msg.find("cannot read kernel file /nonexistent/k.ptx"),
            std::string::npos)
      << msg;
  EXPECT_EQ(rt.numModules(), 0u);
}

TEST_F(RuntimeTest, InvalidImageNamesFileAndError) {
  Runtime rt(FAKE_CUDA_PATH);
  std::string path = writeFile("bad.ptx", "not a module");
  std::string msg = messageOf([&] { rt.getKernel(path, "k", 0); });
  EXPECT_NE(msg.find("cuModuleLoadData(" + path + ") failed: "
                     "CUDA_ERROR_INVALID_IMAGE (200): device kernel image is "
                     "invalid"),
            std::string::npos)
      << msg;
  EXPECT_EQ(rt.numModules(), 0u);
}

TEST_F(RuntimeTest, ModulesAreCachedPerPathAndDevice) {
  Runtime rt(FAKE_CUDA_PATH);
  std::string path = writeFile("good.ptx", "// ptx\n");
  Kernel &a = rt.getKernel(path, "a", 0);
  Kernel &b = rt.getKernel(path, "b", 0);
  Kernel &a2 = rt.getKernel(path, "a", 0);
  EXPECT_EQ(&a, &a2);
  EXPECT_NE(&a, &b);
  EXPECT_EQ(rt.numModules(), 1u);
  EXPECT_EQ(fake.count(kLoad), 1);
  rt.getKernel(path, "a", 1);
  EXPECT_EQ(rt.numModules(), 2u);
  // Each device's primary context is retained once.
  EXPECT_EQ(fake.count(kRetain), 2);
}

TEST_F(RuntimeTest, KernelsLoadAndLaunchInTheirDevicesContext) {
  // The caller (PyTorch on device 0, say) has its own context current; a
  // kernel for device 1 is loaded and launched in device 1's primary
  // context, and the caller's context is current again after each call.
  Runtime rt(FAKE_CUDA_PATH);
  fake.useCallerContext();
  Kernel &k = rt.getKernel(writeFile("good.ptx", "// ptx\n"), "k", 1);
  EXPECT_EQ(fake.context(1), 1);
  EXPECT_EQ(fake.context(0), 99);
  rt.launch(k, LaunchConfig(), nullptr);
  EXPECT_EQ(fake.context(2), 1);
  EXPECT_EQ(fake.context(0), 99);
}

TEST_F(RuntimeTest, WithNoContextCurrentTheDevicesStays) {
  Runtime rt(FAKE_CUDA_PATH);
  Kernel &k = rt.getKernel(writeFile("good.ptx", "// ptx\n"), "k", 2);
  EXPECT_EQ(fake.context(0), 2);
  rt.launch(k, LaunchConfig(), nullptr);
  EXPECT_EQ(fake.context(2), 2);
}

TEST_F(RuntimeTest, MissingFunctionNamesKernelAndFile) {
  Runtime rt(FAKE_CUDA_PATH);
  std::string path = writeFile("good.ptx", "// ptx\n");
  std::string msg = messageOf([&] { rt.getKernel(path, "missing", 0); });
  EXPECT_NE(msg.find("cuModuleGetFunction(missing in " + path + ")"),
            std::string::npos)
      << msg;
}

TEST_F(RuntimeTest, LargeSharedMemoryIsRequestedOnce) {
  Runtime rt(FAKE_CUDA_PATH);
  Kernel &k = rt.getKernel(writeFile("good.ptx", "// ptx\n"), "k", 0);
  LaunchConfig c = largeSharedLaunch();
  rt.launch(k, c, nullptr);
  rt.launch(k, c, nullptr);
  EXPECT_EQ(fake.count(kSetAttr), 1);
  EXPECT_EQ(fake.count(kLaunch), 2);
}

TEST_F(RuntimeTest, ThreadsLaunchingOneKernelRaiseItsLimitOnce) {
  // Training frameworks launch from several threads: the shared-memory limit
  // of a kernel is set once, and every launch happens after it.
  Runtime rt(FAKE_CUDA_PATH);
  Kernel &k = rt.getKernel(writeFile("good.ptx", "// ptx\n"), "k", 0);
  LaunchConfig c = largeSharedLaunch();
  std::vector<std::thread> threads;
  std::atomic<int> ready{0};
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&] {
      ++ready;
      while (ready < 8) {
      }
      for (int i = 0; i < 10; ++i)
        rt.launch(k, c, nullptr);
    });
  for (std::thread &t : threads)
    t.join();
  EXPECT_EQ(fake.count(kSetAttr), 1);
  EXPECT_EQ(fake.count(kLaunch), 80);
  EXPECT_EQ(k.sharedLimitSet, c.sharedBytes);
}

TEST_F(RuntimeTest, LaunchFailureDescribesTheLaunch) {
  Runtime rt(FAKE_CUDA_PATH);
  Kernel &k = rt.getKernel(writeFile("good.ptx", "// ptx\n"), "my_kernel", 0);
  setenv("FAKE_CUDA_FAIL", "cuLaunchKernel", 1);
  LaunchConfig c;
  c.grid[0] = 7;
  c.block[0] = 128;
  std::string msg = messageOf([&] { rt.launch(k, c, nullptr); });
  EXPECT_NE(msg.find("cuLaunchKernel for launch of my_kernel (grid 7x1x1, "
                     "block 128x1x1, 0 bytes of shared memory) failed: "
                     "CUDA_ERROR_INVALID_VALUE"),
            std::string::npos)
      << msg;
}

TEST_F(RuntimeTest, CApiReportsErrorsThroughLastError) {
  setenv("SPARSE_MLA_LIBCUDA", FAKE_CUDA_PATH, 1);
  smla_kernel_t k = nullptr;
  EXPECT_NE(smla_get_kernel("/nonexistent.ptx", "k", 0, &k), 0);
  EXPECT_NE(std::string(smla_last_error()).find("cannot read kernel file"),
            std::string::npos);
  std::string path = writeFile("capi.ptx", "// ptx\n");
  ASSERT_EQ(smla_get_kernel(path.c_str(), "k", 0, &k), 0) << smla_last_error();
  EXPECT_STREQ(smla_last_error(), "");
  EXPECT_EQ(smla_launch(k, 1, 1, 1, 128, 0, nullptr, nullptr), 0);
  EXPECT_NE(smla_launch(nullptr, 1, 1, 1, 128, 0, nullptr, nullptr), 0);
  EXPECT_NE(std::string(smla_last_error()).find("null kernel"), std::string::npos);
}

} // namespace
