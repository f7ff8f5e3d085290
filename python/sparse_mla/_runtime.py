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
    names in order, a struct format of all slots, and the ranks of memrefs
    (None for scalars)."""

    def __init__(self, kernel):
        specs = kernel["args"]
        self.kernel = kernel["name"]
        self.names = [spec["name"] for spec in specs]
        self.name_set = frozenset(self.names)
        self.ranks = [spec["rank"] if spec["kind"] == "memref" else None for spec in specs]
        self.format = "=" + "".join("q" * (3 + 2 * spec["rank"]) if spec["kind"] == "memref"
                                    else _SCALARS[spec["dtype"]] for spec in specs)
        self.slots = struct.calcsize(self.format) // _SLOT
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
                values += (0,) * (3 + 2 * rank)
                continue
            if arg.dim() != rank:
                raise KernelError(f"{self.kernel} argument {name} must have rank {rank}, "
                                  f"got {arg.dim()}")
            ptr = arg.data_ptr()
            values += (ptr, ptr, 0, *arg.shape, *arg.stride())
        return values

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
    None (absent: all zeros), Python numbers for scalars; in the kernel's
    order."""
    return _abi(kernel).values(args)


_GRID_OPS = {"add": lambda a, b: a + b, "mul": lambda a, b: a * b,
             "floordiv": lambda a, b: a // b, "ceildiv": lambda a, b: -(-a // b),
             "mod": lambda a, b: a % b}
# CTAs a grid may have along x, y and z.
GRID_LIMITS = (2**31 - 1, 65535, 65535)


def grid_of(kernel: dict, args: dict) -> list:
    """The launch grid that the kernel declares (the manifest's ``grid``:
    integers, {"arg": name} scalars, {"arg": name, "dim": d} tensor sizes (0
    for None) and [op, lhs, rhs]), evaluated on ``args``."""
    return _grid(kernel)(args)


def _grid(kernel: dict):
    """The kernel's grid as a function of the arguments."""
    def build(e):
        if isinstance(e, int):
            return lambda args: e
        if isinstance(e, dict):
            name, dim = e["arg"], e.get("dim")
            if dim is None:
                return lambda args: int(args[name])
            return lambda args: 0 if args[name] is None else int(args[name].shape[dim])
        op, lhs, rhs = e
        a, b, f = build(lhs), build(rhs), _GRID_OPS[op]
        if op not in ("floordiv", "ceildiv", "mod"):
            return lambda args: f(a(args), b(args))

        def divide(args):
            divisor = b(args)
            if divisor == 0:
                raise KernelError(f"{kernel['name']}: its grid divides by zero ({e})")
            return f(a(args), divisor)
        return divide
    axes = [build(e) for e in kernel["grid"]]
    return lambda args: [axis(args) for axis in axes]


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
