"""Settings tables refuse fields they do not know, and settings files name what is missing,
with one wording (`verifiers.utils.config_files`, shared by vf-eval configs, mixtures and Ray
placements since issue 29 item 5)."""

from pathlib import Path

import pytest

from verifiers.envs.mixture import PoolSpec
from verifiers.errors import ConfigError
from verifiers.ray.pool import Placement
from verifiers.utils.config_files import read_toml, reject_unknown_fields


def test_an_unknown_field_is_named_with_the_valid_ones():
    with pytest.raises(ConfigError) as e:
        reject_unknown_fields({"b": 1, "zz": 2, "a": 3}, {"a", "b", "c"}, "here", "pool")
    assert str(e.value) == "here: unknown pool field(s) zz; valid: a, b, c"
    reject_unknown_fields({"a": 1}, ("a", "b"), "here")  # known fields pass


def test_placement_and_pool_overrides_reject_misspelt_fields():
    with pytest.raises(ConfigError, match=r"members\['x'\]: unknown placement field\(s\) num_cpu;"):
        Placement().with_overrides({"num_cpu": 2}, "members['x']")
    assert Placement().with_overrides({"num_cpus": 2}, "w").num_cpus == 2
    with pytest.raises(ConfigError, match=r"mix.toml: unknown pool field\(s\) easy;"):
        PoolSpec.from_mapping({"easy": 0.5}, "mix.toml")


def test_read_toml_names_a_missing_file_and_bad_syntax(tmp_path: Path):
    with pytest.raises(ConfigError, match="mixture config not found: .*absent.toml"):
        read_toml(tmp_path / "absent.toml", "mixture config")
    bad = tmp_path / "bad.toml"
    bad.write_text("a = = 1\n")
    with pytest.raises(ConfigError, match="bad.toml is not valid TOML"):
        read_toml(bad, "mixture config")
    good = tmp_path / "good.toml"
    good.write_text("[mixture]\nseed = 3\n")
    assert read_toml(good, "mixture config") == {"mixture": {"seed": 3}}
