"""Every source folder with an __init__.py must be an installed package: a plain
`pip install .` silently drops any that `pyproject.toml` does not list."""

import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_every_package_folder_is_listed():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    packages = set(config["packages"])
    folders = {v: k for k, v in config["package-dir"].items()}
    missing = []
    for init in ROOT.rglob("__init__.py"):
        rel = init.parent.relative_to(ROOT)
        parts = rel.parts
        if not parts or parts[0] not in folders or any(p.startswith(".") for p in parts):
            continue
        name = ".".join([folders[parts[0]], *parts[1:]])
        if name not in packages:
            missing.append(name)
    assert not missing, f"add to [tool.setuptools] packages: {missing}"


def test_installed_package_imports_every_dialect():
    from nimble.registry import registry

    for name, factory in registry().dialects.items():
        assert factory().name == name


def test_every_module_imports_on_its_own():
    """Each module of the package imports first in a fresh process (an import cycle whose
    success depends on what was imported before fails here: `nimble.dialects.
    shape_functions` and the graph dialect did once `import nimble` stopped importing
    the compiler)."""
    import importlib
    import pkgutil
    import subprocess
    import sys
    from concurrent.futures import ThreadPoolExecutor

    packages = ["nimble", "nimble.fuzz", "nimble.dialects", "nimble.dialects.graph", "nimble.passes",
                "nimble.lowering", "nimble.runtime", "nimble.frontend", "nimble.frontend.onnx"]  # (pyproject's)
    names = sorted({*packages, *(f"{p}.{m.name}" for p in packages
                                 for m in pkgutil.iter_modules(importlib.import_module(p).__path__))}
                   - {"nimble.fuzz.coverage"})  # (imports atheris, a test extra)

    def imports(name: str) -> str | None:
        result = subprocess.run([sys.executable, "-c", f"import {name}"], capture_output=True, text=True,
                                timeout=120, cwd="/")  # (not the checkout: its folders shadow the package)
        return None if result.returncode == 0 else f"{name}: {result.stderr.strip().splitlines()[-1]}"

    with ThreadPoolExecutor(4) as pool:
        failures = [f for f in pool.map(imports, names) if f is not None]
    assert len(names) > 100 and not failures, "\n".join(failures)



SCRIPTS = tomllib.loads((Path(__file__).resolve().parent.parent / "pyproject.toml").read_text())["project"]["scripts"]


@pytest.mark.parametrize("prog", sorted(SCRIPTS))
def test_every_tool_says_its_version(prog, capsys):
    """`--version` prints the package's one version (nimble-opt's adds xdsl's)."""
    import importlib

    import nimble

    module, name = SCRIPTS[prog].split(":")
    with pytest.raises(SystemExit) as stop:
        getattr(importlib.import_module(module), name)(["--version"])
    assert stop.value.code in (0, None) and capsys.readouterr().out.startswith(f"{prog} {nimble.__version__}")


def test_the_nimble_command_runs_each_tool(capsys):
    """`nimble run ...` is `nimble-run ...`: every `nimble-*` script, found by its entry point."""
    from nimble.cli import main, tools

    assert set(tools()) == {name.removeprefix("nimble-") for name in SCRIPTS if name != "nimble"}
    assert main(["run", str(Path(__file__).resolve().parent.parent / "examples" / "lstm.nb"), "--dim", "2"]) == 0
    assert "result #0: float32[2, 128]" in capsys.readouterr().out
    with pytest.raises(SystemExit) as stop:
        main(["frobnicate"])
    assert stop.value.code == 2 and "invalid choice: 'frobnicate'" in capsys.readouterr().err
