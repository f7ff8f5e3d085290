//===- Runtime.cpp - Loading and launching compiled kernels ---------------===//
#include "sparse-mla/Runtime/Runtime.h"

#include <dlfcn.h>
#include <fstream>
#include <sstream>

using namespace sparse_mla::runtime;

namespace sparse_mla::runtime {

// The few driver entry points we use, with the driver API's C signatures.
struct Driver {
  void *handle = nullptr;
  int (*cuInit)(unsigned);
  int (*cuGetErrorName)(int, const char **);
  int (*cuGetErrorString)(int, const char **);
  int (*cuCtxGetCurrent)(void **);
  int (*cuCtxSetCurrent)(void *);
  int (*cuDeviceGet)(int *, int);
  int (*cuDevicePrimaryCtxRetain)(void **, int);
  int (*cuModuleLoadData)(void **, const void *);
  int (*cuModuleGetFunction)(void **, void *, const char *);
  int (*cuFuncSetAttribute)(void *, int, int);
  int (*cuLaunchKernel)(void *, unsigned, unsigned, unsigned, unsigned,
                        unsigned, unsigned, unsigned, void *, void **, void **);
};

} // namespace sparse_mla::runtime

namespace {
constexpr int kMaxDynamicSharedSizeBytes = 8; // CU_FUNC_ATTRIBUTE_...

template <typename F>
void bind(void *handle, F &fn, const char *name, const std::string &path) {
  fn = reinterpret_cast<F>(dlsym(handle, name));
  if (!fn)
    throw CudaError("CUDA driver " + path + " has no " + name);
}
} // namespace

Runtime::Runtime(const std::string &driverPath) : driver(new Driver) {
  std::string path = driverPath;
  if (path.empty())
    if (const char *env = std::getenv("SPARSE_MLA_LIBCUDA"))
      path = env;
  if (path.empty())
    path = "libcuda.so.1";
  driver->handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!driver->handle) {
    const char *why = dlerror();
    throw CudaError("cannot open the CUDA driver " + path + ": " +
                    (why ? why : "unknown error") +
                    " (is an NVIDIA driver installed?)");
  }
  Driver &d = *driver;
  bind(d.handle, d.cuInit, "cuInit", path);
  bind(d.handle, d.cuGetErrorName, "cuGetErrorName", path);
  bind(d.handle, d.cuGetErrorString, "cuGetErrorString", path);
  bind(d.handle, d.cuCtxGetCurrent, "cuCtxGetCurrent", path);
  bind(d.handle, d.cuCtxSetCurrent, "cuCtxSetCurrent", path);
  bind(d.handle, d.cuDeviceGet, "cuDeviceGet", path);
  bind(d.handle, d.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", path);
  bind(d.handle, d.cuModuleLoadData, "cuModuleLoadData", path);
  bind(d.handle, d.cuModuleGetFunction, "cuModuleGetFunction", path);
  bind(d.handle, d.cuFuncSetAttribute, "cuFuncSetAttribute", path);
  bind(d.handle, d.cuLaunchKernel, "cuLaunchKernel", path);
  check(d.cuInit(0), "cuInit");
}

Runtime::~Runtime() {
  // Modules stay loaded until the process ends: contexts may already be gone
  // at static destruction, and unloading then would fail.
  if (driver && driver->handle)
    dlclose(driver->handle);
}

void Runtime::check(int result, const std::string &what) const {
  if (result == 0)
    return;
  const char *name = nullptr, *text = nullptr;
  driver->cuGetErrorName(result, &name);
  driver->cuGetErrorString(result, &text);
  std::ostringstream os;
  os << what << " failed: " << (name ? name : "CUDA error") << " (" << result
     << ")";
  if (text)
    os << ": " << text;
  throw CudaError(os.str());
}

void *Runtime::primaryContext(int device) {
  void *&ctx = contexts[device];
  if (!ctx) {
    int dev = 0;
    check(driver->cuDeviceGet(&dev, device),
          "cuDeviceGet(" + std::to_string(device) + ")");
    check(driver->cuDevicePrimaryCtxRetain(&ctx, dev),
          "cuDevicePrimaryCtxRetain(" + std::to_string(device) + ")");
  }
  return ctx;
}

/// Makes `ctx` the calling thread's current context while it lives, and the
/// caller's own one (PyTorch's, say, of another device) current again after:
/// a module belongs to the context it was loaded in, and its kernels launch
/// only there. With none current before, `ctx` stays.
class Runtime::ContextScope {
public:
  ContextScope(const Runtime &rt, void *ctx) : rt(rt) {
    void *current = nullptr;
    rt.check(rt.driver->cuCtxGetCurrent(&current), "cuCtxGetCurrent");
    if (current != ctx) {
      rt.check(rt.driver->cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
      restore = current;
    }
  }
  ~ContextScope() {
    if (restore)
      rt.driver->cuCtxSetCurrent(restore);
  }

private:
  const Runtime &rt;
  void *restore = nullptr; // the caller's context, where it was another
};

Kernel &Runtime::getKernel(const std::string &path, const std::string &name,
                           int device) {
  std::lock_guard<std::mutex> lock(mutex);
  auto key = std::make_tuple(path, device, name);
  if (auto it = kernels.find(key); it != kernels.end())
    return it->second;
  void *ctx = primaryContext(device);
  ContextScope scope(*this, ctx);
  void *&module = modules[{path, device}];
  if (!module) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      modules.erase({path, device});
      throw CudaError("cannot read kernel file " + path);
    }
    std::string image((std::istreambuf_iterator<char>(in)),
                      std::istreambuf_iterator<char>());
    image.push_back('\0'); // PTX is loaded as a NUL-terminated string
    void *loaded = nullptr;
    int rc = driver->cuModuleLoadData(&loaded, image.data());
    if (rc != 0)
      modules.erase({path, device});
    check(rc, "cuModuleLoadData(" + path + ")");
    module = loaded;
  }
  void *fn = nullptr;
  check(driver->cuModuleGetFunction(&fn, module, name.c_str()),
        "cuModuleGetFunction(" + name + " in " + path + ")");
  Kernel &k = kernels[key];
  k.function = fn;
  k.name = name;
  k.context = ctx;
  return k;
}

void Runtime::launch(Kernel &kernel, const LaunchConfig &c, void **params) {
  std::ostringstream what;
  what << "launch of " << kernel.name << " (grid " << c.grid[0] << "x"
       << c.grid[1] << "x" << c.grid[2] << ", block " << c.block[0] << "x"
       << c.block[1] << "x" << c.block[2] << ", " << c.sharedBytes
       << " bytes of shared memory)";
  if (!kernel.function)
    throw CudaError(what.str() + ": kernel is not loaded");
  ContextScope scope(*this, kernel.context);
  {
    // Threads may launch one kernel at once: its limit is raised once, under
    // the lock, before any launch that needs it.
    std::lock_guard<std::mutex> lock(mutex);
    if (c.sharedBytes > kernel.sharedLimitSet) {
      check(driver->cuFuncSetAttribute(kernel.function, kMaxDynamicSharedSizeBytes,
                                       static_cast<int>(c.sharedBytes)),
            "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES) for " + what.str());
      kernel.sharedLimitSet = c.sharedBytes;
    }
  }
  check(driver->cuLaunchKernel(kernel.function, c.grid[0], c.grid[1], c.grid[2],
                               c.block[0], c.block[1], c.block[2], c.sharedBytes,
                               c.stream, params, nullptr),
        "cuLaunchKernel for " + what.str());
}
