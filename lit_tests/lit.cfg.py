# lit configuration for Nimble's FileCheck tests. Run: lit lit_tests (or lit -v lit_tests).
import os
import shutil

import lit.formats

config.name = "Nimble"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".nb"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = config.test_source_root
config.excludes = ["lit.cfg.py", "generate_checks.py", "Inputs"]

# The tools come from the environment Nimble is installed in.
for tool in ("nimble-opt", "filecheck"):
    path = shutil.which(tool)
    if path is None:
        lit_config.fatal(f"'{tool}' not found on PATH: install Nimble with its test extra")
config.environment["PATH"] = os.environ["PATH"]
config.substitutions.append(("%python", shutil.which("python") or "python3"))
# The CPU a test that names none compiles for (runtime/cpu_target.py): the host, or
# $NIMBLE_CPU (`NIMBLE_CPU=haswell lit lit_tests` checks that every test whose output
# depends on the CPU names one with --cpu).
if "NIMBLE_CPU" in os.environ:
    config.environment["NIMBLE_CPU"] = os.environ["NIMBLE_CPU"]
