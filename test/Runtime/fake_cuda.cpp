//===- fake_cuda.cpp - A stand-in CUDA driver for runtime tests -----------===//
//
// Implements the driver entry points the runtime uses. FAKE_CUDA_FAIL names
// one entry point that then fails with CUDA_ERROR_INVALID_VALUE (1); a module
// image must start with "//" (PTX) or the ELF magic, else loading fails with
// CUDA_ERROR_INVALID_IMAGE (200). Counters let tests see what was called;
// setting an attribute takes 20 ms, so that concurrent launches that race
// to raise a kernel's shared-memory limit overlap.
//
//===----------------------------------------------------------------------===//
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace {
std::atomic<int> counters[8];
enum { kRetain, kSetAttr, kLaunch, kLoad };
bool fails(const char *fn) {
  const char *f = std::getenv("FAKE_CUDA_FAIL");
  return f && std::strcmp(f, fn) == 0;
}
void *currentCtx = nullptr;
int fakeCtx, fakeModule, fakeFunction;
} // namespace

extern "C" {
int fake_cuda_count(int which) { return counters[which]; }
void fake_cuda_reset() {
  for (std::atomic<int> &c : counters)
    c = 0;
  currentCtx = nullptr;
}

int cuInit(unsigned) { return fails("cuInit") ? 1 : 0; }
int cuGetErrorName(int e, const char **s) {
  *s = e == 200 ? "CUDA_ERROR_INVALID_IMAGE" : e == 1 ? "CUDA_ERROR_INVALID_VALUE"
                                                        : "CUDA_ERROR_UNKNOWN";
  return 0;
}
int cuGetErrorString(int e, const char **s) {
  *s = e == 200 ? "device kernel image is invalid" : "invalid argument";
  return 0;
}
int cuCtxGetCurrent(void **c) {
  *c = currentCtx;
  return fails("cuCtxGetCurrent") ? 1 : 0;
}
int cuCtxSetCurrent(void *c) {
  currentCtx = c;
  return 0;
}
int cuDeviceGet(int *d, int ordinal) {
  *d = ordinal;
  return ordinal < 0 || ordinal > 7 ? 101 : 0;
}
int cuDevicePrimaryCtxRetain(void **c, int) {
  ++counters[kRetain];
  *c = &fakeCtx;
  return 0;
}
int cuModuleLoadData(void **m, const void *image) {
  ++counters[kLoad];
  const char *p = static_cast<const char *>(image);
  if (std::strncmp(p, "//", 2) != 0 && std::strncmp(p, "\x7f" "ELF", 4) != 0)
    return 200;
  *m = &fakeModule;
  return 0;
}
int cuModuleGetFunction(void **f, void *, const char *name) {
  *f = &fakeFunction;
  return std::strcmp(name, "missing") == 0 ? 500 : 0;
}
int cuFuncSetAttribute(void *, int, int) {
  ++counters[kSetAttr];
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  return fails("cuFuncSetAttribute") ? 1 : 0;
}
int cuLaunchKernel(void *, unsigned, unsigned, unsigned, unsigned, unsigned,
                   unsigned, unsigned, void *, void **, void **) {
  ++counters[kLaunch];
  return fails("cuLaunchKernel") ? 1 : 0;
}
}
