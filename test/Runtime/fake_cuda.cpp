//===- fake_cuda.cpp - A stand-in CUDA driver for runtime tests -----------===//
//
// Implements the driver entry points the runtime uses. FAKE_CUDA_FAIL names
// one entry point that then fails with CUDA_ERROR_INVALID_VALUE (1); a module
// image must start with "//" (PTX) or the ELF magic, else loading fails with
// CUDA_ERROR_INVALID_IMAGE (200). Counters let tests see what was called;
// setting an attribute takes 20 ms, so that concurrent launches that race
// to raise a kernel's shared-memory limit overlap. Each device has its own
// primary context; fake_cuda_context tells which device's context was
// current now, at the last module load and at the last launch.
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
// Current per thread, as the driver's is.
thread_local void *currentCtx = nullptr;
std::atomic<void *> loadCtx{nullptr}, launchCtx{nullptr};
int fakeCtx[8], callerCtx, fakeModule, fakeFunction;
/// The device of a primary context, 99 for the caller's own, -1 for none.
int deviceOf(void *ctx) {
  if (ctx == &callerCtx)
    return 99;
  for (int d = 0; d < 8; ++d)
    if (ctx == &fakeCtx[d])
      return d;
  return -1;
}
} // namespace

extern "C" {
int fake_cuda_count(int which) { return counters[which]; }
void fake_cuda_reset() {
  for (std::atomic<int> &c : counters)
    c = 0;
  currentCtx = loadCtx = launchCtx = nullptr;
}
/// 0: now, 1: at the last module load, 2: at the last launch.
int fake_cuda_context(int when) {
  return deviceOf(when == 0 ? currentCtx : when == 1 ? loadCtx.load() : launchCtx.load());
}
/// Makes a context of the caller's (not a primary one of ours) current.
void fake_cuda_use_caller_context() { currentCtx = &callerCtx; }

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
int cuDevicePrimaryCtxRetain(void **c, int dev) {
  ++counters[kRetain];
  *c = &fakeCtx[dev];
  return 0;
}
int cuModuleLoadData(void **m, const void *image) {
  ++counters[kLoad];
  loadCtx = currentCtx;
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
  launchCtx = currentCtx;
  return fails("cuLaunchKernel") ? 1 : 0;
}
}
