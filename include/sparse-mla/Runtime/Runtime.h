//===- Runtime.h - Loading and launching compiled kernels -------*- C++ -*-===//
//
// A small CUDA driver-API runtime for the PTX/cubin that sparse-mla-opt
// produces. The driver library is opened at run time (dlopen), so the
// runtime builds and reports errors on machines without a GPU. Every failure
// raises CudaError with the call, the CUDA error name and what was being done.
//
//===----------------------------------------------------------------------===//
#ifndef SPARSE_MLA_RUNTIME_RUNTIME_H
#define SPARSE_MLA_RUNTIME_RUNTIME_H

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

namespace sparse_mla::runtime {

class CudaError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

struct Driver;

/// A kernel of a loaded module.
struct Kernel {
  void *function = nullptr; // CUfunction
  std::string name;
  void *context = nullptr; // CUcontext: the primary context of its device
  unsigned sharedLimitSet = 0; // dynamic shared memory the function allows
                               // (under the runtime's lock)
};

struct LaunchConfig {
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  unsigned sharedBytes = 0;
  void *stream = nullptr; // CUstream; null is the legacy default stream
};

class Runtime {
public:
  /// Opens the CUDA driver: `driverPath`, else $SPARSE_MLA_LIBCUDA, else
  /// libcuda.so.1. Throws CudaError when it cannot be opened.
  explicit Runtime(const std::string &driverPath = "");
  ~Runtime();
  Runtime(const Runtime &) = delete;
  Runtime &operator=(const Runtime &) = delete;

  /// Loads (once per path and device) a PTX or cubin file into the device's
  /// primary context and returns the named kernel. Whatever context the
  /// caller has current is current again on return.
  Kernel &getKernel(const std::string &path, const std::string &name,
                    int device);

  /// Launches `kernel` in its device's context (the caller's current one is
  /// restored); `params` points to each kernel parameter's value. Threads may
  /// launch the same kernel concurrently.
  void launch(Kernel &kernel, const LaunchConfig &config, void **params);

  /// Number of modules loaded (for tests of the cache).
  size_t numModules() const { return modules.size(); }

private:
  void check(int result, const std::string &what) const;
  void *primaryContext(int device); // under `mutex`
  class ContextScope;

  std::unique_ptr<Driver> driver;
  std::mutex mutex;
  std::map<int, void *> contexts;                                // CUcontext
  std::map<std::pair<std::string, int>, void *> modules;         // CUmodule
  std::map<std::tuple<std::string, int, std::string>, Kernel> kernels;
};

} // namespace sparse_mla::runtime

#endif
