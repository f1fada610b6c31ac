"""Each package's public names, pinned (issue 29 item 1; as httpx pins its own in
tests/test_exported_members.py).

The pins are data, one TOML file a package in tests/public_api/ (verifiers.toml,
prime_cli.toml, prime_hub.toml), and one routine checks all three:

* ``[exports]``: a module's ``__all__``, sorted, every name resolving, none private, and nothing
  else public-looking on the module but its submodules (``vf.version`` once leaked that way);
* ``[defines]``: the public functions and classes a module defines itself (the CLI's and the
  hub's modules have no ``__all__``; what they import is not theirs);
* ``errors``: every public name the errors module defines derives from one base class;
* ``[console_scripts]``: the commands the package installs and what they run;
* every package ships ``py.typed`` and a version string.

A name added to or removed from a module fails here until its package's file says so.
Environments use only these names (tests/test_environment_imports.py).
"""

from __future__ import annotations

import importlib
import tomllib
import types
from importlib import resources
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import pytest

PINS_DIR = Path(__file__).parent / "public_api"
PINS: dict[str, dict[str, Any]] = {
    path.stem: tomllib.loads(path.read_text()) for path in sorted(PINS_DIR.glob("*.toml"))
}


def _pinned(table: str) -> list[Any]:
    """(module, pinned names) for each module of `table` in every package's pins."""
    return [
        pytest.param(module, names, id=module)
        for pins in PINS.values()
        for module, names in pins.get(table, {}).items()
    ]


def defined_public_names(module: str) -> list[str]:
    """Public functions and classes `module` defines itself (not what it imports)."""
    mod = importlib.import_module(module)
    return sorted(
        name
        for name, value in vars(mod).items()
        if not name.startswith("_") and getattr(value, "__module__", None) == module
    )


def _is_submodule(package: types.ModuleType, value: object) -> bool:
    return isinstance(value, types.ModuleType) and value.__name__.startswith(package.__name__ + ".")


def test_every_package_is_pinned():
    """The three packages each have their file, and each file pins a package root."""
    assert sorted(PINS) == ["prime_cli", "prime_hub", "verifiers"]
    for package, pins in PINS.items():
        assert package in pins["exports"], package


@pytest.mark.parametrize("module, pinned", _pinned("exports"))
def test_exports_are_pinned(module: str, pinned: list[str]):
    """A public name appears or goes only with an edit of the package's pins; the pins are
    kept sorted so that a name is found (and added) in one place."""
    mod = importlib.import_module(module)
    exported = list(getattr(mod, "__all__", []))
    assert pinned == sorted(pinned), "keep the pinned names sorted"
    assert sorted(exported) == pinned
    assert len(set(exported)) == len(exported), "a name listed twice"
    assert [name for name in exported if not hasattr(mod, name)] == []
    assert [n for n in exported if n.startswith("_") and n != "__version__"] == []


@pytest.mark.parametrize("module", [p.values[0] for p in _pinned("exports")])
def test_nothing_public_outside_all(module: str):
    """What a module shows besides ``__all__`` is its submodules (module paths) or private;
    a helper imported for the module's own use must not look like API (``vf.version`` did).
    Each submodule shown is importable by its dotted path (the public module paths)."""
    mod = importlib.import_module(module)
    shown = [n for n in dir(mod) if not n.startswith("_") and n not in getattr(mod, "__all__", ())]
    assert [n for n in shown if not _is_submodule(mod, getattr(mod, n))] == []
    for name in shown:
        assert importlib.import_module(f"{module}.{name}") is getattr(mod, name)


@pytest.mark.parametrize("module, pinned", _pinned("defines"))
def test_public_modules_define_exactly_the_pinned_names(module: str, pinned: list[str]):
    assert defined_public_names(module) == pinned


@pytest.mark.parametrize("package", sorted(PINS))
def test_the_errors_are_one_hierarchy(package: str):
    """Every error the package's errors module defines derives from its one base class."""
    module, base_name = PINS[package]["errors"].split(":")
    errors = importlib.import_module(module)
    base = getattr(errors, base_name)
    names = defined_public_names(module)
    assert base_name in names
    for name in names:
        value = getattr(errors, name)
        assert isinstance(value, type) and issubclass(value, base), name


@pytest.mark.parametrize("package", sorted(PINS))
def test_console_scripts_and_version(package: str):
    pinned = PINS[package]["console_scripts"]
    installed = {e.name: e for e in entry_points(group="console_scripts") if e.name in pinned}
    assert sorted(installed) == sorted(pinned)
    for name, target in pinned.items():
        assert installed[name].value == target
        module, attr = target.split(":")
        assert installed[name].load() is getattr(importlib.import_module(module), attr)
    version = importlib.import_module(package).__version__
    assert isinstance(version, str) and version


@pytest.mark.parametrize("package", sorted(PINS))
def test_the_package_ships_type_information(package: str):
    """``py.typed`` (PEP 561): type checkers read the package's annotations in users' code."""
    assert resources.files(package).joinpath("py.typed").is_file()
