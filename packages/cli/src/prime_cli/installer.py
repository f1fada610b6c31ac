"""Installing environments from the hub into a Python environment with uv or pip.

Rules (see the README):

* The environment package itself is never resolved by name from any index: the exact file the
  hub lists for the version is downloaded, its SHA-256 checked against the hub's record, and
  that file is handed to the installer. A same-named package on another index cannot win.
* ``verifiers`` is also the hub's name, not PyPI's (the PyPI project ``verifiers`` is a
  different, upstream package). If the target already has a ``verifiers``, it is pinned as
  installed (a constraint), so no index can replace it; if not, the newest matching wheel the
  hub hosts is installed the same hash-checked way; if the hub hosts none, the install stops.
* Every other dependency resolves through the hub's own index (the environment owner's), so a
  name the hub hosts comes from the hub and nowhere else. Names it does not host reach the
  upstream index through the hub's pass-through (a redirect); a hub without one is put first
  for uv (``first-index``: a name the hub has is taken from the hub only) and is the only index
  for pip, which cannot prefer one index over another. Indexes and find-links from the user's
  pip/uv configuration are switched off for the install: they could outbid the hub.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from email.parser import HeaderParser
from pathlib import Path
from typing import Any
from urllib.parse import quote, urljoin, urlsplit, urlunsplit

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name, parse_wheel_filename
from packaging.version import InvalidVersion, Version

from .client import HubClient, Progress
from .config import cache_dir
from .errors import InstallError, UsageError
from .refs import EnvRef, normalize

SDK = "verifiers"  # a name the hub is authoritative for, whatever public indexes offer
PASS_THROUGH_KEY = "_upstream-pass-through"  # PEP 691 meta key on the hub's index pages
JSON_PAGE = "application/vnd.pypi.simple.v1+json"


@dataclass(frozen=True)
class Target:
    python: Path
    how: str  # why this interpreter was chosen

    def __str__(self) -> str:
        return f"{self.python} ({self.how})"


def _python_in(env_dir: Path) -> Path:
    return env_dir / "bin" / "python"


def find_target(python: str | None = None, cwd: Path | None = None) -> Target:
    """`--python`, else the active virtualenv, else the nearest project's `.venv`."""
    if python:
        p = Path(python).expanduser()
        if p.is_dir():
            p = _python_in(p)
        if not p.exists():
            raise UsageError(f"--python {python}: no such interpreter")
        return Target(p.absolute(), "--python")
    for var in ("VIRTUAL_ENV", "UV_PROJECT_ENVIRONMENT", "CONDA_PREFIX"):
        if os.environ.get(var):
            p = _python_in(Path(os.environ[var]))
            if p.exists():
                return Target(p, f"${var}")
    here = (cwd or Path.cwd()).absolute()
    for d in (here, *here.parents):
        if (d / ".venv" / "pyvenv.cfg").exists():
            return Target(_python_in(d / ".venv"), f"project environment {d / '.venv'}")
    raise InstallError(
        "no Python environment to install into: activate a virtualenv, work inside a project "
        "with a .venv (uv venv creates one), or pass --python PATH"
    )


_PROBE = """
import importlib.metadata as m, importlib.util as u, json, sys
out = {"python": ".".join(map(str, sys.version_info[:3])), "pip": u.find_spec("pip") is not None,
       "dists": {}}
for name in sys.argv[1:]:
    try:
        out["dists"][name] = m.version(name)
    except m.PackageNotFoundError:
        pass
print(json.dumps(out))
"""


def probe(target: Target, names: list[str]) -> dict[str, Any]:
    r = subprocess.run(
        [str(target.python), "-I", "-c", _PROBE, *names], capture_output=True, text=True
    )
    if r.returncode != 0:
        raise InstallError(f"cannot run {target.python}: {r.stderr.strip()[-200:]}")
    found: dict[str, Any] = json.loads(r.stdout)  # the object _PROBE prints
    return found


@dataclass
class Artifact:
    ref: EnvRef
    version: str
    filename: str
    sha256: str
    url: str
    yanked: bool = False
    path: Path | None = None
    requires: list[Requirement] = field(default_factory=list)

    @property
    def dist(self) -> str:
        return canonicalize_name(self.ref.name)


def pick_file(ref: EnvRef, version: dict[str, Any]) -> Artifact:
    files = version.get("files") or []
    wheels = [f for f in files if f["filename"].endswith(".whl")]
    pure = [f for f in wheels if f["filename"].endswith("-none-any.whl")]
    sdists = [f for f in files if f.get("kind") == "sdist"]
    chosen = (pure or wheels or sdists or [None])[0]
    if chosen is None:
        raise InstallError(f"{ref.slug} {version['version']} has no installable file")
    return Artifact(
        ref=ref,
        version=version["version"],
        filename=chosen["filename"],
        sha256=chosen["sha256"],
        url=chosen["url"],
        yanked=bool(version.get("yanked")),
    )


def fetch(client: HubClient, art: Artifact, progress: Progress | None = None) -> Path:
    """The verified file in the cache (keyed by its SHA-256, so a cached file is never stale)."""
    dest = cache_dir() / "files" / art.sha256[:2] / art.sha256 / art.filename
    if dest.exists() and _sha256(dest) != art.sha256.lower():
        dest.unlink()  # damaged or altered since it was cached: fetch it again
    if not dest.exists():
        client.download(art.url, dest, art.sha256, progress)
    art.path = dest
    art.requires = wheel_requirements(dest) if dest.suffix == ".whl" else []
    return dest


def _sha256(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def wheel_requirements(wheel: Path) -> list[Requirement]:
    with zipfile.ZipFile(wheel) as zf:
        meta = next(
            (n for n in zf.namelist() if n.count("/") == 1 and n.endswith(".dist-info/METADATA")),
            None,
        )
        if meta is None:
            raise InstallError(f"{wheel.name} has no METADATA")
        headers = HeaderParser().parsestr(zf.read(meta).decode("utf-8", "replace"))
    out = []
    for raw in headers.get_all("Requires-Dist") or []:
        try:
            req = Requirement(raw)
        except InvalidRequirement:
            continue
        if req.marker is None or req.marker.evaluate({"extra": ""}):
            out.append(req)
    return out


def sdk_from_hub(client: HubClient, spec: SpecifierSet) -> Artifact | None:
    """The newest non-yanked wheel of `verifiers` on the hub's index that satisfies `spec`."""
    page = client.simple_project(SDK)
    if not page:
        return None
    best: tuple[Version, dict[str, Any]] | None = None
    for f in page.get("files", []):
        if not f["filename"].endswith(".whl") or f.get("yanked"):
            continue
        try:
            _, ver, _, _ = parse_wheel_filename(f["filename"])
        except (ValueError, InvalidVersion):
            continue
        if ver in spec and (best is None or ver > best[0]):
            best = (ver, f)
    if best is None:
        return None
    f = best[1]
    return Artifact(
        ref=EnvRef("-", SDK),
        version=str(best[0]),
        filename=f["filename"],
        sha256=f["hashes"]["sha256"],
        url=urljoin(client.hub_url + "/", f["url"]),
    )


@dataclass
class Plan:
    files: list[Path]
    constraints: list[str]
    notes: list[str]


def plan(
    client: HubClient,
    artifacts: list[Artifact],
    installed: dict[str, str],
    progress: Progress | None = None,
) -> Plan:
    files = [a.path for a in artifacts if a.path is not None]
    constraints: list[str] = []
    notes: list[str] = []
    wanted = [r for a in artifacts for r in a.requires if canonicalize_name(r.name) == SDK]
    if not wanted:
        return Plan(files, constraints, notes)
    spec = SpecifierSet()
    for r in wanted:
        spec &= r.specifier
    have = installed.get(SDK)
    if have is not None:
        if Version(have) not in spec:
            raise InstallError(
                f"the environment needs {SDK}{spec}, but the target has {SDK} {have}; upgrade "
                f"the SDK there first ({SDK} never comes from PyPI, whose '{SDK}' is another project)"
            )
        constraints.append(f"{SDK}=={have}")
        notes.append(f"{SDK} {have} already installed: kept")
        return Plan(files, constraints, notes)
    sdk = sdk_from_hub(client, spec)
    if sdk is None:
        raise InstallError(
            f"the environment needs {SDK}{spec or ''}, which is not installed in the target, and "
            f"the hub hosts no matching {SDK} wheel (PyPI's '{SDK}' is a different project, so "
            f"it is never used): install the SDK into the target first"
        )
    files.append(fetch(client, sdk, progress))
    notes.append(f"{SDK} {sdk.version} from the hub (sha256 {sdk.sha256[:12]}…)")
    return Plan(files, constraints, notes)


@dataclass(frozen=True)
class HubIndex:
    """The hub index an install resolves dependencies through."""

    url: str  # as shown to the user: no credentials
    pass_through: bool  # the hub redirects names it does not host to its upstream index
    token: str | None = None

    @property
    def authenticated_url(self) -> str:
        """The URL with the token as HTTP Basic credentials (private hub dependencies)."""
        if not self.token:
            return self.url
        parts = urlsplit(self.url)
        netloc = f"__token__:{quote(self.token, safe='')}@{parts.netloc}"
        return urlunsplit(parts._replace(netloc=netloc))


def hub_index(client: HubClient, artifacts: list[Artifact]) -> HubIndex:
    """The owner's index (the hub-wide one when the environments have several owners), and
    whether the hub passes other names through, read from the environment's own index page."""
    first = artifacts[0]
    page = client.request(
        "GET",
        f"/{first.ref.owner}/simple/{normalize(first.ref.name)}/",
        headers={"Accept": JSON_PAGE},
        subject=first.ref.slug,
    )
    pass_through = (page.get("meta") or {}).get(PASS_THROUGH_KEY) is True
    owners = {a.ref.owner for a in artifacts}
    path = f"/{first.ref.owner}/simple/" if len(owners) == 1 else "/simple/"
    return HubIndex(client.hub_url + path, pass_through, client.token)


# Where pip and uv look for packages besides the command line: each could outbid the hub.
_PIP_SOURCES = ("PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS", "PIP_NO_INDEX")
_UV_SOURCES = (
    "UV_INDEX",
    "UV_EXTRA_INDEX_URL",
    "UV_FIND_LINKS",
    "UV_INDEX_STRATEGY",
    "UV_NO_INDEX",
    "UV_CONFIG_FILE",
)
_UV_DEFAULT = ("UV_DEFAULT_INDEX", "UV_INDEX_URL")


def installer_env(
    tool: str, index: HubIndex, base: dict[str, str], empty_dir: Path
) -> dict[str, str]:
    """The installer's environment: the hub's index and nothing that could outbid it.

    The index URL (with the token) travels in the environment, not on the command line, where
    other users of the machine could read it."""
    if tool == "pip":
        env = {k: v for k, v in base.items() if k not in _PIP_SOURCES}
        # pip's environment variables override its config files, but empty ones are ignored:
        # the extra index is the hub again and the find-links an empty folder, so the config
        # files' own ones (pip would merge them with the hub, best version wins) are replaced
        url = index.authenticated_url
        env.update(PIP_INDEX_URL=url, PIP_EXTRA_INDEX_URL=url, PIP_FIND_LINKS=str(empty_dir))
        return env
    drop = _UV_SOURCES + (_UV_DEFAULT if index.pass_through else ())
    env = {k: v for k, v in base.items() if k not in drop}
    if index.pass_through:
        env["UV_DEFAULT_INDEX"] = index.authenticated_url
    else:  # the hub first; the user's default index (PyPI unless set) for the rest
        env["UV_INDEX"] = index.authenticated_url
    return env


def choose_tool(tool: str, target: Target, has_pip: bool) -> str:
    if tool not in ("auto", "uv", "pip"):
        raise UsageError(f"--with must be auto, uv or pip, not {tool!r}")
    if tool in ("auto", "uv") and shutil.which("uv"):
        return "uv"
    if tool == "uv":
        raise InstallError("uv is not on PATH (install it, or use --with pip)")
    if not has_pip:
        raise InstallError(
            f"{target.python} has no pip and uv is not on PATH: install uv, or run "
            f"`{target.python} -m ensurepip`"
        )
    return "pip"


def _summary(output: str) -> str:
    lines = [x.strip() for x in output.splitlines() if x.strip()]
    start = next(
        (i for i, x in enumerate(lines) if x.lower().startswith(("error", "×", "x "))),
        max(0, len(lines) - 3),
    )
    return " ".join(lines[start : start + 4])[:400] or "no output"


def run_installer(
    tool: str,
    target: Target,
    files: list[Path],
    constraints: list[str],
    index: HubIndex,
    echo: Callable[[str], None] | None = None,
) -> None:
    with tempfile.TemporaryDirectory(prefix="prime-install-") as tmp:
        extra: list[str] = []
        if constraints:
            cfile = Path(tmp) / "constraints.txt"
            cfile.write_text("\n".join(constraints) + "\n")
            extra = ["--constraint", str(cfile)]
        if tool == "uv":
            cmd = [shutil.which("uv") or "uv", "pip", "install", "--python", str(target.python)]
            cmd += ["--no-config", "--index-strategy", "first-index"]  # no configured extras
        else:
            cmd = [str(target.python), "-m", "pip", "install", "--disable-pip-version-check"]
        cmd += extra + [str(f) for f in files]
        if echo:
            echo(f"$ {' '.join(cmd)}  (index: {index.url})")
        empty = Path(tmp) / "no-links"
        empty.mkdir()
        env = installer_env(tool, index, dict(os.environ), empty)
        r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        hint = ""
        if tool == "pip" and not index.pass_through:
            hint = (
                " (this hub passes no names through to an upstream index, and pip cannot "
                "prefer the hub over another index: install the other dependencies first, or "
                "use --with uv)"
            )
        raise InstallError(f"{tool} could not install: {_summary(r.stderr + r.stdout)}{hint}")


def uninstall(tool: str, target: Target, names: list[str]) -> None:
    if tool == "uv":
        cmd = [shutil.which("uv") or "uv", "pip", "uninstall", "--python", str(target.python)]
    else:
        cmd = [str(target.python), "-m", "pip", "uninstall", "-y", "--disable-pip-version-check"]
    r = subprocess.run(cmd + names, capture_output=True, text=True)
    if r.returncode != 0:
        raise InstallError(f"{tool} could not uninstall: {_summary(r.stderr + r.stdout)}")


def dist_name(ref: EnvRef) -> str:
    return normalize(ref.name)
