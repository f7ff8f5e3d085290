//===- CApi.cpp - C interface of the sparse-mla runtime -------------------===//
#include "sparse-mla/Runtime/CApi.h"
#include "sparse-mla/Runtime/Runtime.h"

using namespace sparse_mla::runtime;

namespace {
thread_local std::string lastError;

/// One runtime per process, opened on first use; a failure to open the
/// driver is reported by every call.
Runtime &runtime() {
  static std::unique_ptr<Runtime> instance;
  static std::string openError;
  static std::once_flag once;
  std::call_once(once, [] {
    try {
      instance = std::make_unique<Runtime>();
    } catch (const std::exception &e) {
      openError = e.what();
    }
  });
  if (!instance)
    throw CudaError(openError);
  return *instance;
}

template <typename F> int guarded(F &&f) {
  try {
    f();
    lastError.clear();
    return 0;
  } catch (const std::exception &e) {
    lastError = e.what();
    return 1;
  }
}
} // namespace

extern "C" int smla_get_kernel(const char *path, const char *name, int device,
                               smla_kernel_t *out) {
  return guarded([&] {
    if (!path || !name || !out)
      throw CudaError("smla_get_kernel: null argument");
    *out = reinterpret_cast<smla_kernel_t>(&runtime().getKernel(path, name, device));
  });
}

extern "C" int smla_launch(smla_kernel_t kernel, unsigned gx, unsigned gy,
                           unsigned gz, unsigned bx, unsigned shared,
                           void *stream, void **params) {
  return guarded([&] {
    if (!kernel)
      throw CudaError("smla_launch: null kernel");
    LaunchConfig c;
    c.grid[0] = gx;
    c.grid[1] = gy;
    c.grid[2] = gz;
    c.block[0] = bx;
    c.sharedBytes = shared;
    c.stream = stream;
    runtime().launch(*reinterpret_cast<Kernel *>(kernel), c, params);
  });
}

extern "C" const char *smla_last_error(void) { return lastError.c_str(); }
