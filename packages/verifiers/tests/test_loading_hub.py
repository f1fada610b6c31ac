"""`load_environment("owner/name[@version]")` installs from the hub on first use by running the
`prime` CLI (found through $PRIME_CLI here; the end-to-end tests in tests/ use the real one)."""

import sys
import textwrap

import pytest

import verifiers as vf

ENV_MODULE = """
import verifiers as vf
from datasets import Dataset

def load_environment():
    return vf.SingleTurnEnv(dataset=Dataset.from_list([{"question": "q", "answer": "a"}]))
"""


@pytest.fixture
def fake_prime(tmp_path, monkeypatch):
    """A `prime` stand-in that records its arguments and 'installs' by writing the module."""
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    script = tmp_path / "prime"
    script.write_text(
        textwrap.dedent(
            f"""\
            #!{sys.executable}
            import sys
            open({str(tmp_path / "calls")!r}, "a").write(" ".join(sys.argv[1:]) + "\\n")
            ref = sys.argv[3]
            if "missing" in ref:
                print("error: environment someone/missing not found on http://hub", file=sys.stderr)
                raise SystemExit(1)
            name = ref.split("/")[1].split("@")[0].replace("-", "_")
            open({str(site)!r} + "/" + name + ".py", "w").write({ENV_MODULE!r})
            """
        )
    )
    script.chmod(0o755)
    monkeypatch.setenv("PRIME_CLI", str(script))
    monkeypatch.delenv("VF_HUB_INSTALL", raising=False)
    return tmp_path / "calls"


def test_installs_an_owner_name_id_on_first_use(fake_prime):
    env = vf.load_environment("someone/hubfirst-env@1.0")
    assert isinstance(env, vf.SingleTurnEnv)
    assert fake_prime.read_text().split() == [
        "env", "install", "someone/hubfirst-env@1.0", "--python", sys.executable,
    ]  # fmt: skip
    vf.load_environment("someone/hubfirst-env")  # importable now: no second install
    assert len(fake_prime.read_text().splitlines()) == 1


def test_install_failure_is_one_clear_error(fake_prime):
    with pytest.raises(vf.EnvironmentLoadError, match="failed: environment someone/missing not"):
        vf.load_environment("someone/missing")


def test_turned_off(fake_prime, monkeypatch):
    monkeypatch.setenv("VF_HUB_INSTALL", "0")
    with pytest.raises(vf.EnvironmentLoadError, match="no environment"):
        vf.load_environment("someone/hubsecond-env")
    assert not fake_prime.exists()


def test_plain_names_never_install(fake_prime):
    with pytest.raises(vf.EnvironmentLoadError):
        vf.load_environment("hubthird-env")
    assert not fake_prime.exists()
