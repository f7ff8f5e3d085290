"""Loading the compiled kernels and launching them through the C runtime.

The bundle holds, next to this file, ``lib/libsparse_mla_runtime.so`` and
``kernels/*.json`` manifests (with the PTX and cubin they name). The
environment variables SPARSE_MLA_RUNTIME and SPARSE_MLA_KERNELS point
elsewhere. Kernel arguments are passed by the names the manifest gives
them (the kernel's own): a memref of rank r as MLIR's descriptor
(allocated and aligned pointer, offset, r sizes, r strides), None for an
absent one (a null pointer and all sizes 0); scalars as their C type.
"""
import ctypes
import functools
import json
import os
import struct
import threading
from pathlib import Path


class KernelError(RuntimeError):
    """A kernel could not be loaded or launched (the message says why)."""


_HERE = Path(__file__).resolve().parent


def kernels_dir() -> Path:
    """SPARSE_MLA_KERNELS, read at each call (so that it may switch builds
    in one process), else the bundle's kernels/."""
    return _kernels_dir(os.environ.get("SPARSE_MLA_KERNELS"))


@functools.lru_cache(maxsize=None)
def _kernels_dir(variable):
    return Path(variable) if variable else _HERE / "kernels"


def load_manifest(directory=None) -> dict:
    """Kernel name -> manifest entry (with the file to load under 'file'), of
    the manifests in ``directory`` (default: kernels_dir())."""
    if not directory:
        return _default_manifest(os.environ.get("SPARSE_MLA_KERNELS"))
    return _manifest(Path(directory))


@functools.lru_cache(maxsize=None)
def _default_manifest(variable):
    return _manifest(_kernels_dir(variable))


@functools.lru_cache(maxsize=None)
def _manifest(directory: Path) -> dict:
    found = {}
    for path in sorted(directory.glob("*.json")):
        manifest = json.loads(path.read_text())
        image = manifest.get("cubin") or manifest["ptx"]
        for kernel in manifest["kernels"]:
            found[kernel["name"]] = dict(kernel, file=str(directory / image))
    return found


def target(directory=None) -> dict:
    """The numbers of the target the kernels were compiled for (the manifests'
    "target": l2_bytes, ...), from Target/Hopper.h."""
    return _target(Path(directory) if directory else kernels_dir())


@functools.lru_cache(maxsize=None)
def _target(directory: Path) -> dict:
    for path in sorted(directory.glob("*.json")):
        found = json.loads(path.read_text()).get("target")
        if found:
            return found
    raise KernelError(f"no manifest in {directory} describes the target")


@functools.lru_cache(maxsize=None)
def _library():
    path = os.environ.get("SPARSE_MLA_RUNTIME", str(_HERE / "lib" / "libsparse_mla_runtime.so"))
    try:
        lib = ctypes.CDLL(path)
    except OSError as e:
        raise KernelError(f"cannot load the sparse-mla runtime {path}: {e}") from e
    lib.smla_get_kernel.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int,
                                    ctypes.POINTER(ctypes.c_void_p)]
    lib.smla_launch.argtypes = [ctypes.c_void_p, ctypes.c_uint, ctypes.c_uint, ctypes.c_uint,
                                ctypes.c_uint, ctypes.c_uint, ctypes.c_void_p,
                                ctypes.POINTER(ctypes.c_void_p)]
    lib.smla_last_error.restype = ctypes.c_char_p
    return lib


# Each kernel parameter (a scalar or a descriptor field) is packed into an
# 8-byte slot of one buffer, and the launch gets a pointer to each slot.
_SLOT = 8
_SCALARS = {"f32": "f4x", "i32": "i4x", "i64": "q", "index": "q", "i1": "?7x"}


class _Abi:
    """A kernel's parameters from its manifest, compiled once: the argument
    names in order, a struct format of all slots, the ranks of memrefs
    (None for scalars), the checks of their stated extents, and the grid."""

    def __init__(self, kernel):
        specs = kernel["args"]
        self.kernel = kernel["name"]
        self.names = [spec["name"] for spec in specs]
        self.name_set = frozenset(self.names)
        self.ranks = [spec["rank"] if spec["kind"] == "memref" else None for spec in specs]
        self.required = frozenset(spec["name"] for spec in specs
                                  if spec["kind"] == "memref" and not spec.get("optional"))
        self.format = "=" + "".join("q" * (3 + 2 * spec["rank"]) if spec["kind"] == "memref"
                                    else _SCALARS[spec["dtype"]] for spec in specs)
        self.slots = struct.calcsize(self.format) // _SLOT
        # (name, extents as functions of the arguments, None where any).
        self.extents = [(spec["name"], [None if e == "?" else _size(e, self.kernel)
                                        for e in spec.get("extents", ())])
                        for spec in specs if spec["kind"] == "memref"]
        self.grid = _grid(kernel) if kernel.get("grid") else None
        self.local = threading.local()

    def values(self, args):
        if args.keys() != self.name_set:
            missing = [n for n in self.names if n not in args]
            unknown = sorted(set(args) - self.name_set)
            raise KernelError(f"{self.kernel}: " + "; ".join(
                part for part in (f"missing arguments {missing}" if missing else "",
                                  f"unknown arguments {unknown}" if unknown else "") if part))
        values = []
        for name, rank in zip(self.names, self.ranks):
            arg = args[name]
            if rank is None:
                values.append(arg)
                continue
            if arg is None:
                if name in self.required:
                    raise KernelError(f"{self.kernel}: argument {name} is required (None given)")
                values += (0,) * (3 + 2 * rank)
                continue
            if arg.dim() != rank:
                raise KernelError(f"{self.kernel} argument {name} must have rank {rank}, "
                                  f"got {arg.dim()}")
            ptr = arg.data_ptr()
            values += (ptr, ptr, 0, *arg.shape, *arg.stride())
        self.check_extents(args)
        return values

    def check_extents(self, args):
        """Every given tensor's extents against those its kernel states."""
        for name, extents in self.extents:
            arg = args[name]
            if arg is None:
                continue
            shape = arg.shape
            for d, extent in enumerate(extents):
                if extent is not None and shape[d] != extent(args):
                    want = tuple("?" if e is None else e(args) for e in extents)
                    raise KernelError(f"{self.kernel}: argument {name} must have shape "
                                      f"{want}, got {tuple(shape)}")

    def pack(self, values):
        """The pointers to the slots that hold `values`: this thread's
        parameter buffer of the kernel, valid until its next launch (the
        driver copies the parameters at launch)."""
        buffer = getattr(self.local, "buffer", None)
        if buffer is None:
            slots = (ctypes.c_int64 * self.slots)()
            base = ctypes.addressof(slots)
            params = (ctypes.c_void_p * self.slots)(*range(base, base + _SLOT * self.slots, _SLOT))
            buffer = self.local.buffer = (slots, params)
        try:
            struct.pack_into(self.format, buffer[0], 0, *values)
        except (struct.error, OverflowError, TypeError) as e:
            raise KernelError(f"{self.kernel}: an argument does not fit its C type: {e}") from e
        return buffer[1]


# Manifest entry (by identity, kept alive here) -> its compiled ABI.
_ABIS = {}


def _abi(kernel: dict) -> _Abi:
    found = _ABIS.get(id(kernel))
    if found is None:
        found = _ABIS[id(kernel)] = (kernel, _Abi(kernel))
    return found[1]


def pack_args(kernel: dict, args: dict) -> list:
    """The values of the kernel parameters for ``args``, a dict by the names
    the manifest gives them (the kernel's own): tensors for memrefs (their
    descriptor: allocated and aligned pointer, offset, sizes, strides) or
    None (absent: all zeros; only for an optional one), Python numbers for
    scalars; in the kernel's order. Each tensor's stated extents are
    checked."""
    return _abi(kernel).values(args)


_OPS = {"add": lambda a, b: a + b, "mul": lambda a, b: a * b,
        "floordiv": lambda a, b: a // b, "ceildiv": lambda a, b: -(-a // b),
        "mod": lambda a, b: a % b}
# CTAs a grid may have along x, y and z.
GRID_LIMITS = (2**31 - 1, 65535, 65535)


def _size(e, kernel_name):
    """A size of the manifest (an integer, {"arg": name} a scalar, {"arg":
    name, "dim": d} a tensor's size (0 for None), or [op, lhs, rhs]) as a
    function of the arguments. A tensor's size may also be given as a shape
    (a tuple), as the plan does for buffers it has yet to make."""
    if isinstance(e, int):
        return lambda args: e
    if isinstance(e, dict):
        name, dim = e["arg"], e.get("dim")
        if dim is None:
            return lambda args: int(args[name])

        def size(args):
            arg = args[name]
            return 0 if arg is None else int(getattr(arg, "shape", arg)[dim])
        return size
    op, lhs, rhs = e
    a, b, f = _size(lhs, kernel_name), _size(rhs, kernel_name), _OPS[op]
    if op not in ("floordiv", "ceildiv", "mod"):
        return lambda args: f(a(args), b(args))

    def divide(args):
        divisor = b(args)
        if divisor == 0:
            raise KernelError(f"{kernel_name}: a size divides by zero ({e})")
        return f(a(args), divisor)
    return divide


def _grid(kernel: dict):
    """The kernel's grid as a function of the arguments: each dimension's
    CTAs (its window's count, or its work axes' extents multiplied), after
    checking that a window lies in the dimension's work."""
    name = kernel["name"]
    counts, windows = [], []
    for dim in kernel["grid"]:
        counts.append(_size(dim["count"], name))
        window = dim.get("window")
        if window:
            extents = [_size(axis["extent"], name) for axis in dim["axes"]]
            windows.append((len(counts) - 1, window["name"], _size(window["from"], name),
                            extents))

    def grid(args):
        sizes = [count(args) for count in counts]
        for d, slot, start, extents in windows:
            first, work = start(args), 1
            for extent in extents:
                work *= extent(args)
            # The kernel decodes the window in 32 bits, as CTA ids are.
            if sizes[d] and not 0 <= first <= first + sizes[d] <= work < 2**32:
                raise KernelError(f"{name}: its {slot}s [{first}, {first + sizes[d]}) lie "
                                  f"outside the {work} work items of grid dimension "
                                  f"{'xyz'[d]}")
        return sizes
    return grid


def grid_of(kernel: dict, args: dict) -> list:
    """The launch grid that the kernel declares, evaluated on ``args``
    (tensors, or shapes of tensors, by name; scalars)."""
    return _grid(kernel)(args)


def extents_of(kernel: dict, name: str, args: dict) -> tuple:
    """The extents that ``kernel`` states for its tensor argument ``name``,
    evaluated on ``args`` (scalars, and tensors or shapes of tensors): the
    shape of a buffer to make for it. Raises KernelError where one is any."""
    for spec in kernel["args"]:
        if spec["name"] == name and spec["kind"] == "memref":
            if "?" in spec.get("extents", ["?"]):
                raise KernelError(f"{kernel['name']} does not state every extent of {name}")
            return tuple(_size(e, kernel["name"])(args) for e in spec["extents"])
    raise KernelError(f"{kernel['name']} has no tensor argument {name}")


def launch(name: str, args: dict, device_index: int, stream: int, grid=None,
           directory=None) -> None:
    """Launches kernel ``name`` on a CUDA stream with ``args`` by name. The
    grid is the one the kernel declares, computed from the arguments; only a
    kernel that declares none takes ``grid`` (up to 3 dims). An empty grid
    launches nothing."""
    kernel = load_manifest(directory).get(name)
    if kernel is None:
        raise KernelError(f"no compiled kernel {name} in {directory or kernels_dir()}")
    abi = _abi(kernel)
    values = abi.values(args)
    if abi.grid:
        if grid is not None:
            raise KernelError(f"{name} declares its grid; do not pass one")
        grid = abi.grid(args)
    elif grid is None:
        raise KernelError(f"{name} declares no grid: pass one")
    grid = list(grid) + [1] * (3 - len(grid))
    if 0 in grid:
        return
    for axis, n, most in zip("xyz", grid, GRID_LIMITS):
        if not 0 < n <= most:
            raise KernelError(f"{name}: a grid of {n} CTAs along {axis} (at most {most})")
    cluster = kernel.get("cluster", 1)
    if grid[0] % cluster:
        raise KernelError(f"{name} runs in clusters of {cluster} CTAs along x: its grid "
                          f"{grid} must have a multiple of {cluster} CTAs in x")
    lib = _library()
    handle = ctypes.c_void_p()
    if lib.smla_get_kernel(kernel["file"].encode(), name.encode(), device_index,
                           ctypes.byref(handle)):
        raise KernelError(lib.smla_last_error().decode())
    params = abi.pack(values)
    if lib.smla_launch(handle, grid[0], grid[1], grid[2], kernel["threads"],
                       kernel["shared_bytes"], ctypes.c_void_p(stream), params):
        raise KernelError(lib.smla_last_error().decode())


@functools.lru_cache(maxsize=None)
def resident_ctas(name: str, device_index: int) -> int:
    """CTAs of kernel ``name`` that the device runs at once: its SMs times
    the CTAs an SM holds (by shared memory, registers and threads)."""
    import torch
    kernel, limits = load_manifest()[name], target()
    props = torch.cuda.get_device_properties(device_index)
    threads = kernel["threads"]
    regs = -(-kernel.get("registers", limits["max_registers_per_thread"]) // 8) * 8
    shared = kernel["shared_bytes"] + limits["reserved_shared_bytes_per_cta"]
    per_sm = min(props.shared_memory_per_multiprocessor // shared,
                 props.regs_per_multiprocessor // (regs * threads),
                 props.max_threads_per_multi_processor // threads)
    return max(1, per_sm) * props.multi_processor_count
