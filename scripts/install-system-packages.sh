#!/usr/bin/env bash
# The system packages Nimble's tests use, from Debian's packages:
# - pocl (OpenCL on the CPU, through LLVM) and oclgrind (an OpenCL device simulator the
#   tests run generated kernels under to catch out-of-bounds accesses and races): the
#   OpenCL target on a machine without a GPU;
# - upstream MLIR's mlir-opt-22 (mlir-22-tools), which the tests feed Nimble's IR to check
#   that upstream MLIR reads it, and Graphviz (`nimble.visualize` renders with its `dot`).
#   Optional: where a package is not available the script says so and those tests skip.
# Does nothing for what is installed already.
set -euo pipefail
wanted=()
dpkg -s pocl-opencl-icd oclgrind >/dev/null 2>&1 || wanted+=(pocl-opencl-icd oclgrind)
command -v mlir-opt-22 >/dev/null || wanted+=(mlir-22-tools)
command -v dot >/dev/null || wanted+=(graphviz)
if [ ${#wanted[@]} = 0 ]; then
    exit 0
fi
if ! command -v apt-get >/dev/null; then
    echo "install ${wanted[*]} with your system's package manager (mlir-opt-22 and graphviz are optional)" >&2
    if [[ " ${wanted[*]} " == *" pocl-opencl-icd "* ]]; then exit 1; fi
    exit 0
fi
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
$SUDO apt-get update -qq
if [[ " ${wanted[*]} " == *" pocl-opencl-icd "* ]]; then
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq pocl-opencl-icd oclgrind >/dev/null
fi
for optional in mlir-22-tools graphviz; do
    if [[ " ${wanted[*]} " == *" $optional "* ]]; then
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "$optional" >/dev/null \
            || echo "$optional is not available here: the tests that need it will skip" >&2
    fi
done
