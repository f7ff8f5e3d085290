"""Loading the compiled kernels and launching them through the C runtime.

The bundle holds, next to this file, ``lib/libsparse_mla_runtime.so`` and
``kernels/*.json`` manifests (with the PTX and cubin they name). The
environment variables SPARSE_MLA_RUNTIME and SPARSE_MLA_KERNELS point
elsewhere. Kernel arguments are passed by the names the manifest gives
them (the kernel's own): a memref of rank r as MLIR's descriptor
(allocated and aligned pointer, offset, r sizes, r strides); scalars as
their C type.
"""
import ctypes
import functools
import json
import os
from pathlib import Path


class KernelError(RuntimeError):
    """A kernel could not be loaded or launched (the message says why)."""


_HERE = Path(__file__).resolve().parent


def kernels_dir() -> Path:
    return Path(os.environ.get("SPARSE_MLA_KERNELS", _HERE / "kernels"))


def load_manifest(directory=None) -> dict:
    """Kernel name -> manifest entry (with the file to load under 'file'), of
    the manifests in ``directory`` (default: kernels_dir(), read at each
    call, so that SPARSE_MLA_KERNELS may switch builds in one process)."""
    return _manifest(Path(directory) if directory else kernels_dir())


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


_SCALARS = {"f32": ctypes.c_float, "i32": ctypes.c_int32, "i64": ctypes.c_int64,
            "index": ctypes.c_int64, "i1": ctypes.c_bool}


def pack_args(kernel: dict, args: dict) -> list:
    """The ctypes values of the kernel parameters for ``args``, a dict by the
    names the manifest gives them (the kernel's own): tensors for memrefs,
    Python numbers for scalars."""
    specs = kernel["args"]
    names = [spec["name"] for spec in specs]
    missing = [n for n in names if n not in args]
    unknown = sorted(set(args) - set(names))
    if missing or unknown:
        raise KernelError(f"{kernel['name']}: " + "; ".join(
            part for part in (f"missing arguments {missing}" if missing else "",
                              f"unknown arguments {unknown}" if unknown else "") if part))
    values = []
    for name, spec in zip(names, specs):
        arg = args[name]
        if spec["kind"] == "memref":
            if arg.dim() != spec["rank"]:
                raise KernelError(f"{kernel['name']} argument {name} must have rank "
                                  f"{spec['rank']}, got {arg.dim()}")
            ptr = ctypes.c_void_p(arg.data_ptr())
            values += [ptr, ctypes.c_void_p(arg.data_ptr()), ctypes.c_int64(0)]
            values += [ctypes.c_int64(s) for s in arg.shape]
            values += [ctypes.c_int64(s) for s in arg.stride()]
        else:
            values.append(_SCALARS[spec["dtype"]](arg))
    return values


_GRID_OPS = {"add": lambda a, b: a + b, "mul": lambda a, b: a * b,
             "floordiv": lambda a, b: a // b, "ceildiv": lambda a, b: -(-a // b),
             "mod": lambda a, b: a % b}
# CTAs a grid may have along x, y and z.
GRID_LIMITS = (2**31 - 1, 65535, 65535)


def grid_of(kernel: dict, args: dict) -> list:
    """The launch grid that the kernel declares (the manifest's ``grid``:
    integers, {"arg": name} scalars, {"arg": name, "dim": d} tensor sizes and
    [op, lhs, rhs]), evaluated on ``args``."""
    def value(e):
        if isinstance(e, int):
            return e
        if isinstance(e, dict):
            arg = args[e["arg"]]
            return int(arg.shape[e["dim"]]) if "dim" in e else int(arg)
        op, lhs, rhs = e
        a, b = value(lhs), value(rhs)
        if op in ("floordiv", "ceildiv", "mod") and b == 0:
            raise KernelError(f"{kernel['name']}: its grid divides by zero ({e})")
        return _GRID_OPS[op](a, b)
    return [value(e) for e in kernel["grid"]]


def launch(name: str, args: dict, device_index: int, stream: int, grid=None,
           directory=None) -> None:
    """Launches kernel ``name`` on a CUDA stream with ``args`` by name. The
    grid is the one the kernel declares, computed from the arguments; only a
    kernel that declares none takes ``grid`` (up to 3 dims). An empty grid
    launches nothing."""
    kernel = load_manifest(directory).get(name)
    if kernel is None:
        raise KernelError(f"no compiled kernel {name} in {directory or kernels_dir()}")
    values = pack_args(kernel, args)
    if kernel.get("grid"):
        if grid is not None:
            raise KernelError(f"{name} declares its grid; do not pass one")
        grid = grid_of(kernel, args)
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
    params = (ctypes.c_void_p * len(values))(*[ctypes.addressof(v) for v in values])
    if lib.smla_launch(handle, grid[0], grid[1], grid[2], kernel["threads"],
                       kernel["shared_bytes"], ctypes.c_void_p(stream), params):
        raise KernelError(lib.smla_last_error().decode())
