#!/usr/bin/env python3
"""Stamps the package that tools/build.sh assembled with its version and
commit, and packs it into an installable wheel: the Python package, every
compiled kernel (cubin, PTX, manifests) and the runtime library, which loads
with no compiler on the target machine.

  python3 tools/build_wheel.py BUNDLE/sparse_mla DIST COMMIT

The version is VERSION+g<commit> (COMMIT may end in ".dirty"), which
sparse_mla.__version__ reports and every manifest records. The
platform tag follows the symbol versions the runtime library needs (checked
here: glibc, libstdc++), so pip refuses the wheel where it would not load.
The wheel is built with the standard library alone (no setuptools, no
network), and is the same for every Python 3 (the runtime is called through
ctypes).
"""
import base64
import hashlib
import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path

VERSION = "0.2.0"
# The manylinux policies (PEP 600): the newest glibc, libstdc++ and C++ ABI
# symbol versions each allows.
POLICIES = [("manylinux_2_17", (2, 17), (3, 4, 19), (1, 3, 7)),
            ("manylinux_2_24", (2, 24), (3, 4, 22), (1, 3, 11)),
            ("manylinux_2_28", (2, 28), (3, 4, 24), (1, 3, 11))]


def needed_versions(library):
    """The newest GLIBC_, GLIBCXX_ and CXXABI_ versions `library` needs."""
    dump = subprocess.run(["objdump", "-T", str(library)], capture_output=True, text=True,
                          check=True).stdout
    newest = {}
    for name, version in re.findall(r"\((GLIBC|GLIBCXX|CXXABI)_([\d.]+)\)", dump):
        v = tuple(int(x) for x in version.split("."))
        newest[name] = max(newest.get(name, v), v)
    return newest


def platform_tag(library):
    need = needed_versions(library)
    for tag, glibc, glibcxx, cxxabi in POLICIES:
        if (need.get("GLIBC", ()) <= glibc and need.get("GLIBCXX", ()) <= glibcxx
                and need.get("CXXABI", ()) <= cxxabi):
            return tag + "_x86_64"
    sys.exit(f"build_wheel: {library} needs {need}, newer than every manylinux policy here")


def record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def main():
    package, dist, commit = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
    version = f"{VERSION}+g{commit}"
    (package / "_version.py").write_text(
        f'"""Written by tools/build_wheel.py."""\n__version__ = "{version}"\n'
        f'__commit__ = "{commit}"\n')
    for manifest in sorted((package / "kernels").glob("*.json")):
        m = json.loads(manifest.read_text())
        m["version"] = version
        manifest.write_text(json.dumps(m, indent=2, sort_keys=True) + "\n")
    tag = platform_tag(package / "lib" / "libsparse_mla_runtime.so")
    files = {}
    for path in sorted(package.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            files[f"sparse_mla/{path.relative_to(package).as_posix()}"] = path.read_bytes()
    info = f"sparse_mla-{version}.dist-info"
    files[f"{info}/METADATA"] = (
        "Metadata-Version: 2.1\nName: sparse-mla\nVersion: " + version + "\n"
        "Summary: The DeepSeek-Sparse-Attention sparse-MLA backward for NVIDIA Hopper "
        "(sm_90a), compiled from an MLIR tile dialect\n"
        "Requires-Python: >=3.9\nRequires-Dist: torch\n").encode()
    files[f"{info}/WHEEL"] = (
        "Wheel-Version: 1.0\nGenerator: sparse-mla tools/build_wheel.py\n"
        f"Root-Is-Purelib: false\nTag: py3-none-{tag}\n").encode()
    record = [record_line(name, data) for name, data in files.items()]
    files[f"{info}/RECORD"] = ("\n".join(record + [f"{info}/RECORD,,"]) + "\n").encode()
    dist.mkdir(parents=True, exist_ok=True)
    for old in dist.glob("sparse_mla-*.whl"):
        old.unlink()
    wheel = dist / f"sparse_mla-{version}-py3-none-{tag}.whl"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files.items():
            entry = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            entry.external_attr = (0o755 if name.endswith(".so") else 0o644) << 16
            z.writestr(entry, data, zipfile.ZIP_DEFLATED)
    print(f"wheel: {wheel} ({wheel.stat().st_size // 1024} KiB)")


if __name__ == "__main__":
    main()
