#!/usr/bin/env bash
# The system packages Nimble's tests use, from Debian's packages:
# - pocl (OpenCL on the CPU, through LLVM) and oclgrind (an OpenCL device simulator the
#   tests run generated kernels under to catch out-of-bounds accesses and races): the
#   OpenCL target on a machine without a GPU;
# - upstream MLIR's mlir-opt-22 (mlir-22-tools), which the tests feed Nimble's IR to check
#   that upstream MLIR reads it. Optional: where the package is not available the
#   script says so and those tests skip.
# Does nothing for what is installed already.
set -euo pipefail
wanted=()
dpkg -s pocl-opencl-icd oclgrind >/dev/null 2>&1 || wanted+=(pocl-opencl-icd oclgrind)
command -v mlir-opt-22 >/dev/null || wanted+=(mlir-22-tools)
if [ ${#wanted[@]} = 0 ]; then
    exit 0
fi
if ! command -v apt-get >/dev/null; then
    echo "install an OpenCL driver (pocl), oclgrind and mlir-opt-22 with your system's package manager" >&2
    exit 1
fi
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
$SUDO apt-get update -qq
if [[ " ${wanted[*]} " == *" pocl-opencl-icd "* ]]; then
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq pocl-opencl-icd oclgrind >/dev/null
fi
if [[ " ${wanted[*]} " == *" mlir-22-tools "* ]]; then
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq mlir-22-tools >/dev/null \
        || echo "mlir-22-tools is not available here: the upstream MLIR checks will skip" >&2
fi
