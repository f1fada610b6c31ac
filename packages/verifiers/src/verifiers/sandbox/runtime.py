"""Runtimes with extra Python packages: built once per spec into a cached virtual environment,
then mounted read-only into every sandbox that asks for it (never pip-installed per rollout)."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from pathlib import Path

from verifiers.sandbox.base import ProviderUnavailableError, RuntimeSpec

CACHE = Path(os.environ.get("VF_SANDBOX_CACHE", "/var/cache/verifiers-sandbox"))
_failed: dict[str, str] = {}  # runtime key -> why its build failed (not retried per rollout)


class RuntimeBuildError(ProviderUnavailableError):
    """A runtime's packages could not be installed; retrying per rollout would not help."""


def ensure_runtime(runtime: RuntimeSpec, cache: Path = CACHE) -> Path | None:
    """The venv directory for `runtime` (None: the plain interpreter needs none). Built under a
    file lock so concurrent processes build it once; a finished build is marked by `.ready`."""
    if not runtime.packages:
        return None
    if runtime.key() in _failed:
        raise RuntimeBuildError(_failed[runtime.key()])
    target = cache / "venvs" / runtime.key()
    if (target / ".ready").exists():
        return target
    cache.mkdir(parents=True, exist_ok=True)
    os.chmod(cache, 0o755)
    (cache / "venvs").mkdir(exist_ok=True)
    with open(cache / "venvs" / f"{runtime.key()}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (target / ".ready").exists():
            return target
        shutil.rmtree(target, ignore_errors=True)
        try:
            # --without-pip: the interpreter's ensurepip may be absent (Debian); install with
            # the host's uv or pip into the venv instead.
            _run([runtime.python, "-m", "venv", "--without-pip", str(target)])
            py = str(target / "bin" / "python")
            uv = installer()
            if uv is None:
                raise OSError("no installer found: need uv (or python -m uv)")
            _run([*uv, "pip", "install", "--quiet", "--python", py, *runtime.packages])
        except (OSError, subprocess.CalledProcessError, subprocess.TimeoutExpired) as e:
            shutil.rmtree(target, ignore_errors=True)
            detail = getattr(e, "stderr", None) or b""
            if isinstance(detail, bytes):
                detail = detail.decode(errors="replace")
            why = f"building runtime {list(runtime.packages)}: {e} {detail[-500:]}".strip()
            _failed[runtime.key()] = why
            raise RuntimeBuildError(why) from e
        for root, dirs, files in os.walk(target):  # world-readable for the sandbox uid
            for name in dirs + files:
                p = os.path.join(root, name)
                if not os.path.islink(p):
                    os.chmod(p, os.stat(p).st_mode | 0o444 | (0o111 if name in dirs else 0))
        os.chmod(target, 0o755)
        (target / ".ready").touch()
    return target


def installer() -> list[str] | None:
    """The command that runs uv here: on PATH, or as a module of this or the system Python."""
    if shutil.which("uv"):
        return [shutil.which("uv")]  # type: ignore[list-item]
    for py in (sys.executable, "python3"):
        try:
            subprocess.run([py, "-m", "uv", "--version"], check=True, capture_output=True)
            return [py, "-m", "uv"]
        except (OSError, subprocess.CalledProcessError):
            continue
    return None


def _run(argv: list[str]) -> None:
    subprocess.run(argv, check=True, capture_output=True, timeout=600)
