#!/usr/bin/env bash
# The OpenCL driver the OpenCL target and its tests use on a machine without a GPU:
# pocl (OpenCL on the CPU, through LLVM) and oclgrind (an OpenCL device simulator the
# tests run generated kernels under to catch out-of-bounds accesses and races), both
# from Debian's packages. Does nothing when both are installed.
set -euo pipefail
if dpkg -s pocl-opencl-icd oclgrind >/dev/null 2>&1; then
    exit 0
fi
if ! command -v apt-get >/dev/null; then
    echo "install an OpenCL driver (pocl) and oclgrind with your system's package manager" >&2
    exit 1
fi
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq pocl-opencl-icd oclgrind >/dev/null
