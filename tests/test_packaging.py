"""Every source folder with an __init__.py must be an installed package: a plain
`pip install .` silently drops any that `pyproject.toml` does not list."""

import tomllib
from pathlib import Path

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
