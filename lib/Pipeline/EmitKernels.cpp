//===- EmitKernels.cpp - PTX, cubin and manifest of the kernels -----------===//
#include "sparse-mla/Pipeline/Pipeline.h"
#include "sparse-mla/Dialect/Tile/IR/TileDialect.h"
#include "sparse-mla/Target/Hopper.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

namespace sparse_mla {
#define GEN_PASS_DEF_EMITKERNELSPASS
#include "sparse-mla/Pipeline/Passes.h.inc"
} // namespace sparse_mla

using namespace mlir;

namespace {

/// ptxas -v figures of one kernel.
struct PtxasInfo {
  int64_t registers = -1, spillStores = 0, spillLoads = 0, stack = 0;
};

static std::optional<std::string> findPtxas() {
  if (auto p = llvm::sys::findProgramByName("ptxas"))
    return *p;
  SmallVector<StringRef> dirs;
  std::string cudaHome;
  if (const char *env = std::getenv("CUDA_HOME"))
    cudaHome = std::string(env) + "/bin";
  if (!cudaHome.empty())
    dirs.push_back(cudaHome);
  dirs.push_back("/usr/local/cuda/bin");
  if (auto p = llvm::sys::findProgramByName("ptxas", dirs))
    return *p;
  return std::nullopt;
}

static int64_t numberBefore(StringRef line, StringRef what) {
  size_t at = line.find(what);
  if (at == StringRef::npos)
    return -1;
  StringRef head = line.take_front(at).rtrim();
  size_t start = head.find_last_not_of("0123456789");
  int64_t v = 0;
  head.drop_front(start == StringRef::npos ? 0 : start + 1).getAsInteger(10, v);
  return v;
}

static std::map<std::string, PtxasInfo> parsePtxasLog(StringRef log) {
  std::map<std::string, PtxasInfo> info;
  std::string current;
  SmallVector<StringRef> lines;
  log.split(lines, '\n');
  for (StringRef line : lines) {
    size_t q = line.find("Function properties for ");
    if (q != StringRef::npos) {
      current = line.drop_front(q + strlen("Function properties for ")).trim().str();
      continue;
    }
    q = line.find("Compiling entry function '");
    if (q != StringRef::npos) {
      current = line.drop_front(q + strlen("Compiling entry function '"))
                    .split('\'').first.str();
      continue;
    }
    if (current.empty())
      continue;
    PtxasInfo &i = info[current];
    if (line.contains("bytes stack frame")) {
      i.stack = numberBefore(line, "bytes stack frame");
      i.spillStores = numberBefore(line, "bytes spill stores");
      i.spillLoads = numberBefore(line, "bytes spill loads");
    }
    if (line.contains("registers"))
      i.registers = numberBefore(line, "registers");
  }
  return info;
}

/// The manifest's entries (tile-record-manifest) as JSON: integers, strings,
/// booleans, arrays and objects.
static llvm::json::Value toJSON(Attribute a) {
  if (auto flag = dyn_cast<BoolAttr>(a))
    return flag.getValue();
  if (auto i = dyn_cast<IntegerAttr>(a))
    return i.getInt();
  if (auto s = dyn_cast<StringAttr>(a))
    return s.str();
  if (auto d = dyn_cast<DictionaryAttr>(a)) {
    llvm::json::Object o;
    for (NamedAttribute n : d)
      o[n.getName().getValue()] = toJSON(n.getValue());
    return o;
  }
  llvm::json::Array array;
  for (Attribute e : cast<ArrayAttr>(a))
    array.push_back(toJSON(e));
  return array;
}

struct EmitKernelsPass : public sparse_mla::impl::EmitKernelsPassBase<EmitKernelsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (output.empty()) {
      emitError(module.getLoc(), "sparse-mla-emit-kernels needs output=<prefix>");
      return signalPassFailure();
    }
    std::string ptx;
    module.walk([&](gpu::BinaryOp bin) {
      for (Attribute a : bin.getObjects())
        ptx = cast<gpu::ObjectAttr>(a).getObject().getValue().str();
    });
    if (ptx.empty()) {
      emitError(module.getLoc(), "no gpu.binary with PTX to emit");
      return signalPassFailure();
    }
    if (failed(write(output + ".ptx", ptx)))
      return signalPassFailure();

    std::map<std::string, PtxasInfo> info;
    std::optional<std::string> ptxas = findPtxas();
    if (ptxas) {
      SmallString<128> log;
      llvm::sys::fs::createTemporaryFile("ptxas", "log", log);
      std::string ptxFile = output + ".ptx", cubin = output + ".cubin";
      std::string arch = "-arch=" + chip;
      SmallVector<StringRef> args{*ptxas, arch, "-v", ptxFile, "-o", cubin};
      std::optional<StringRef> redirects[] = {std::nullopt, StringRef(log),
                                              StringRef(log)};
      std::string err;
      int rc = llvm::sys::ExecuteAndWait(*ptxas, args, std::nullopt, redirects,
                                         0, 0, &err);
      auto buf = llvm::MemoryBuffer::getFile(log);
      StringRef text = buf ? (*buf)->getBuffer() : StringRef();
      if (rc != 0) {
        emitError(module.getLoc(), "ptxas failed (")
            << rc << "): " << err << "\n" << text;
        return signalPassFailure();
      }
      info = parsePtxasLog(text);
      llvm::sys::fs::remove(log);
    }

    llvm::json::Array kernels;
    auto manifests = module->getAttrOfType<ArrayAttr>(sparse_mla::tile::kKernelsManifestAttr);
    for (Attribute a : manifests ? manifests : ArrayAttr::get(&getContext(), {})) {
      auto d = cast<DictionaryAttr>(a);
      std::string name = d.getAs<StringAttr>("name").str();
      llvm::json::Value args = toJSON(d.getAs<ArrayAttr>("args"));
      llvm::json::Value grid = toJSON(d.getAs<ArrayAttr>("grid"));
      llvm::json::Object params;
      for (NamedAttribute p : d.getAs<DictionaryAttr>("params"))
        params[p.getName().getValue()] = cast<IntegerAttr>(p.getValue()).getInt();
      llvm::json::Object k{
          {"name", name},
          {"params", std::move(params)},
          {"threads", d.getAs<IntegerAttr>("threads").getInt()},
          {"shared_bytes", d.getAs<IntegerAttr>("shared_bytes").getInt()},
          {"cluster", d.getAs<IntegerAttr>("cluster").getInt()},
          {"grid", std::move(grid)},
          {"args", std::move(args)}};
      if (info.count(name)) {
        PtxasInfo &i = info[name];
        k["registers"] = i.registers;
        k["spill_stores"] = i.spillStores;
        k["spill_loads"] = i.spillLoads;
        k["stack_bytes"] = i.stack;
      }
      kernels.push_back(std::move(k));
    }
    llvm::json::Object root{
        {"chip", chip},
        {"ptx", llvm::sys::path::filename(output + ".ptx").str()},
        {"kernels", std::move(kernels)},
        {"target",
         llvm::json::Object{
             {"l2_bytes", sparse_mla::hopper::kL2Bytes},
             {"shared_bytes_per_cta", sparse_mla::hopper::kSharedBytesPerCTA},
             {"reserved_shared_bytes_per_cta",
              sparse_mla::hopper::kReservedSharedBytesPerCTA},
             {"max_registers_per_thread",
              sparse_mla::hopper::kMaxRegistersPerThread}}}};
    if (ptxas)
      root["cubin"] = llvm::sys::path::filename(output + ".cubin").str();
    std::string json;
    llvm::raw_string_ostream os(json);
    os << llvm::formatv("{0:2}", llvm::json::Value(std::move(root))) << "\n";
    if (failed(write(output + ".json", json)))
      return signalPassFailure();
  }

  LogicalResult write(const std::string &path, StringRef text) {
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    if (ec)
      return emitError(getOperation().getLoc(), "cannot write ")
             << path << ": " << ec.message();
    os << text;
    return success();
  }
};

} // namespace
