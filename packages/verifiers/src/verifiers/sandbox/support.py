"""What the local tiers put into a sandbox besides /usr: the agent's code (and its bytecode,
compiled once by the sandbox's interpreter) and the generated /etc of `contract`, as bytes
for providers that write them in (bwrap, the zygote) and as a host directory for those that
mount one (gVisor, whose mount table shows no host path)."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from verifiers.sandbox import contract

SANDBOX_UID = int(os.environ.get("VF_SANDBOX_UID", "61000"))
AGENT_SRC = Path(__file__).with_name("agent.py")
ZYGOTE_SRC = Path(__file__).with_name("zygote.py")
# Import (from the precompiled .pyc) rather than run the agent as a script.
AGENT_BOOT = "import sys; sys.path.insert(0, '/opt/agent'); import agent; agent.main()"
SANDBOX_PYTHON = "/usr/bin/python3"
# Bytecode compiled by the sandbox's interpreter, named as it is inside (no host path).
COMPILE = (
    "import py_compile, sys; py_compile.compile(sys.argv[1], dfile=sys.argv[2], doraise=True, "
    "invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)"
)


@functools.cache
def bytecode() -> dict[str, bytes]:
    """module name -> its .pyc (the agent and the zygote), compiled once per process by the
    sandbox's interpreter; `unchecked-hash`, so a copy written into a fresh sandbox is used
    whatever the source file's mtime. Empty for a module whose compile failed (its source is
    used then)."""
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, src in (("agent", AGENT_SRC), ("zygote", ZYGOTE_SRC)):
            path = Path(tmp) / f"{name}.py"
            path.write_bytes(src.read_bytes())
            subprocess.run(
                [SANDBOX_PYTHON, "-I", "-c", COMPILE, str(path), f"/opt/agent/{name}.py"],
                capture_output=True, check=False, env={},
            )  # fmt: skip
            for pyc in (Path(tmp) / "__pycache__").glob(f"{name}.*.pyc"):
                out[name] = pyc.read_bytes()
                out[f"{name}.tag"] = pyc.name.encode()
    return out


def agent_files() -> dict[str, bytes]:
    """/opt/agent's files (relative name -> bytes): agent.py and its bytecode."""
    out = {"agent.py": AGENT_SRC.read_bytes()}
    code = bytecode()
    if "agent" in code:
        out[f"__pycache__/{code['agent.tag'].decode()}"] = code["agent"]
    return out


def make_support_dir(prefix: str = "vf-sbx-") -> Path:
    """A host directory, world-readable, holding the generated /etc (`etc/`) and the agent
    (`agent/`), for providers that mount them read-only (their mount table must not show the
    host path: gVisor's does not)."""
    d = Path(tempfile.mkdtemp(prefix=prefix))
    os.chmod(d, 0o755)
    etc = d / "etc"
    etc.mkdir()
    for name, data in contract.etc_files(network=False).items():
        (etc / name).write_bytes(data)
    for name, target in contract.etc_links().items():
        (etc / name).symlink_to(target)
    for path in contract.SYSTEM_ETC:  # a copy: a bind inside a bind source does not carry
        if os.path.isdir(path):
            shutil.copytree(path, etc / os.path.basename(path), symlinks=True)
        else:
            shutil.copy(path, etc / os.path.basename(path))
    for rel, data in agent_files().items():
        (d / "agent" / rel).parent.mkdir(parents=True, exist_ok=True)
        (d / "agent" / rel).write_bytes(data)
    for p in [etc, *etc.iterdir(), d / "agent", *(d / "agent").rglob("*")]:
        if not p.is_symlink():
            os.chmod(p, 0o755 if p.is_dir() else 0o644)
    return d
