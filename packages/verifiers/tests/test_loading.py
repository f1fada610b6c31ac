import textwrap

import pytest

import verifiers as vf
from verifiers.loading import environment_module_name


@pytest.fixture
def module_dir(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def write(dirpath, name, body):
    (dirpath / f"{name}.py").write_text(textwrap.dedent(body))


ENV_BODY = """
    import verifiers as vf
    from datasets import Dataset

    def load_environment(n: int = 2, flavour: str = "plain"):
        env = vf.SingleTurnEnv(dataset=Dataset.from_list([{"question": flavour}] * n))
        env.flavour = flavour
        return env
"""


@pytest.mark.parametrize(
    "env_id", ["my-loader-env", "my_loader_env", "someone/my-loader-env@0.1.0"]
)
def test_finds_module_by_dashed_or_underscored_id(module_dir, env_id):
    write(module_dir, "my_loader_env", ENV_BODY)
    env = vf.load_environment(env_id, flavour="spicy")
    assert isinstance(env, vf.SingleTurnEnv) and env.flavour == "spicy"
    assert env.env_id == env_id and env.env_args == {"flavour": "spicy"}


def test_module_name():
    assert environment_module_name("owner/My-Env@1.2") == "My_Env"


def test_entry_point_environment():
    env = vf.load_environment("arithmetic", num_examples=3)
    assert len(env.get_dataset()) == 3


def test_missing_environment_names_what_was_looked_for():
    with pytest.raises(vf.EnvironmentLoadError) as info:
        vf.load_environment("no-such-env-here")
    msg = str(info.value)
    assert "'no_such_env_here'" in msg and "verifiers.environments" in msg
    assert "prime env install" in msg


def test_missing_load_environment(module_dir):
    write(module_dir, "not_an_env_mod", "x = 1\n")
    with pytest.raises(vf.EnvironmentLoadError, match="has no load_environment"):
        vf.load_environment("not-an-env-mod")


def test_missing_dependency_of_environment(module_dir):
    write(module_dir, "env_with_dep", "import surely_not_installed_pkg\n")
    with pytest.raises(
        vf.EnvironmentLoadError, match="'surely_not_installed_pkg', which is not installed"
    ):
        vf.load_environment("env-with-dep")


def test_unknown_argument_lists_accepted_ones(module_dir):
    write(module_dir, "args_env", ENV_BODY)
    with pytest.raises(vf.ConfigError, match="does not take 'colour'.*n, flavour"):
        vf.load_environment("args-env", colour="red")


def test_loader_must_return_an_environment(module_dir):
    write(module_dir, "wrong_return_env", "def load_environment():\n    return 42\n")
    with pytest.raises(vf.EnvironmentLoadError, match="returned int"):
        vf.load_environment("wrong-return-env")


def test_ensure_keys(monkeypatch):
    monkeypatch.delenv("VF_TEST_KEY_A", raising=False)
    with pytest.raises(vf.MissingKeyError, match="VF_TEST_KEY_A"):
        vf.ensure_keys(["VF_TEST_KEY_A"])
    monkeypatch.setenv("VF_TEST_KEY_A", "x")
    vf.ensure_keys(["VF_TEST_KEY_A"])


def test_typo_of_an_installed_id_gets_did_you_mean_and_the_dashed_folder():
    """Issue 27: `vf-eval i3-mth` suggested `environments/i3_mth` (folders are dashed) and no
    'did you mean i3-math'."""
    for typo in ("i3-mth", "i3_mth"):
        with pytest.raises(vf.EnvironmentLoadError) as info:
            vf.load_environment(typo)
        msg = str(info.value)
        assert "Did you mean 'i3-math'?" in msg
        assert "`uv pip install -e environments/i3-mth`" in msg
        assert "environments/i3_mth" not in msg


def test_no_close_id_gets_no_guess():
    with pytest.raises(vf.EnvironmentLoadError) as info:
        vf.load_environment("qqqzzx")
    assert "Did you mean" not in str(info.value)
    assert "`prime env install <owner>/qqqzzx`" in str(info.value)


def test_local_checkout_folders_are_suggested_as_they_are_named(tmp_path, monkeypatch):
    """In a checkout, the folder that exists is named (dashed or not), and a close folder that
    is not installed is offered with its install command."""
    for folder in ("my-local-env", "other_local_env"):
        (tmp_path / "environments" / folder).mkdir(parents=True)
        (tmp_path / "environments" / folder / "pyproject.toml").write_text("[project]\n")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(vf.EnvironmentLoadError) as info:
        vf.load_environment("my_local_env")
    msg = str(info.value)
    assert "Did you mean" not in msg  # its own folder is not a guess
    assert "`uv pip install -e environments/my-local-env`" in msg
    with pytest.raises(vf.EnvironmentLoadError) as info:
        vf.load_environment("other-local-env")
    assert "`uv pip install -e environments/other_local_env`" in str(info.value)
    with pytest.raises(vf.EnvironmentLoadError) as info:
        vf.load_environment("my-locl-env")
    assert (
        "Did you mean 'my-local-env' (not installed: "
        "`uv pip install -e environments/my-local-env`)?" in str(info.value)
    )
