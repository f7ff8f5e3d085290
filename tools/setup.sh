#!/usr/bin/env bash
# Installs what the build and the tests need on a Debian machine, only what
# is missing: MLIR 22 with its tools, CMake, Ninja, GoogleTest and binutils
# from apt (as root, or through sudo), torch, numpy and pytest from PyPI.
set -euo pipefail
packages=(llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools libzstd-dev libgtest-dev
          cmake ninja-build g++ binutils python3-venv)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
modules=()
for m in torch numpy pytest; do
  python3 -c "import $m" 2>/dev/null || modules+=("$m")
done
if [ ${#modules[@]} -gt 0 ]; then
  echo "setup: pip installing ${modules[*]}"
  python3 -m pip install -q "${modules[@]}"
fi
