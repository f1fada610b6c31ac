"""The upload rules as pure functions (`prime_hub.core.upload_rules`, issue 29 item 4): what
a publish may add, in-process, with no database, store or server. The end-to-end tests
(test_publish.py, test_direct_uploads.py, test_leftovers.py) check the same rules through
HTTP on both backends; these pin each rule's decision and message alone."""

from __future__ import annotations

import pytest
from packaging.version import Version

from prime_hub.core.upload_rules import (
    check_declared,
    check_staged_file,
    clean_tags,
    files_to_add,
    primary_artifact,
    uploaded_filename,
    version_of_upload,
)
from prime_hub.errors import BadRequest, Conflict, InvalidPackage
from prime_hub.validation import ArtifactInfo


def wheel(name: str = "my-env", version: str = "1.0.0", sha: str = "a" * 64) -> ArtifactInfo:
    fn = f"{name.replace('-', '_')}-{version}-py3-none-any.whl"
    return ArtifactInfo("wheel", fn, sha, 10, name=name, version=version, summary="w")


def sdist(name: str = "my-env", version: str = "1.0.0", sha: str = "b" * 64) -> ArtifactInfo:
    fn = f"{name.replace('-', '_')}-{version}.tar.gz"
    return ArtifactInfo("sdist", fn, sha, 10, name=name, version=version, summary="s")


def test_an_upload_publishes_one_version_of_its_environment():
    assert version_of_upload("My_Env", [wheel(), sdist()]) == Version("1.0.0")
    assert version_of_upload("my-env", [wheel(version="1.0")]) == Version("1.0.0")


@pytest.mark.parametrize(
    ("files", "error", "message"),
    [
        ([], BadRequest, "nothing to publish"),
        ([wheel(name="other")], InvalidPackage, "not the environment 'my-env'"),
        ([wheel(), sdist(version="1.1.0")], InvalidPackage, "the same version"),
        ([wheel(), wheel(sha="c" * 64)], BadRequest, "sent twice"),
        ([ArtifactInfo("source", "x.tar.gz", "d" * 64, 1)], BadRequest, "a wheel or an sdist"),
        ([wheel(version="not a version")], InvalidPackage, "not a valid PEP 440"),
    ],
)
def test_an_upload_that_is_not_one_version_is_refused(files, error, message):
    with pytest.raises(error, match=message):
        version_of_upload("my-env", files)


def test_files_to_add_skips_identical_files_and_adds_new_ones():
    w, s = wheel(), sdist()
    v = Version("1.0.0")
    new = dict(has_sdist=False, used_names=(), env_name="my-env", version=v)
    assert files_to_add([w, s], published={}, **new) == [w.filename, s.filename]
    # a retried upload of the same bytes adds nothing; the sdist joins the wheel's version
    assert files_to_add([w, s], published={w.filename: w.sha256}, **new) == [s.filename]


@pytest.mark.parametrize(
    ("files", "published", "has_sdist", "used", "message"),
    [
        ([wheel()], {wheel().filename: "f" * 64}, False, (), "immutable"),
        ([wheel()], {}, False, (wheel().filename,), "never reused"),
        ([sdist()], {wheel().filename: wheel().sha256}, True, (), "already has a source dist"),
    ],
)
def test_files_to_add_refuses_changed_reused_and_second_sdist(
    files, published, has_sdist, used, message
):
    with pytest.raises(Conflict, match=message):
        files_to_add(
            files,
            published=published,
            has_sdist=has_sdist,
            used_names=used,
            env_name="my-env",
            version=Version("1.0.0"),
        )


def test_the_primary_artifact_is_a_wheel_else_the_sdist_else_the_first():
    w, s = wheel(), sdist()
    other = ArtifactInfo("source", "x.zip", "e" * 64, 1)
    assert primary_artifact([s, w]) is w
    assert primary_artifact([other, s]) is s
    assert primary_artifact([other]) is other


def test_declared_facts_must_match_the_file():
    w = wheel()
    check_declared(w, "MY_ENV", "1.0", w.sha256.upper())  # normalised names and versions
    with pytest.raises(InvalidPackage, match="but the upload says 'other'"):
        check_declared(w, "other", None, None)
    with pytest.raises(InvalidPackage, match="but the upload says 2.0"):
        check_declared(w, None, "2.0", None)
    with pytest.raises(InvalidPackage, match="does not match the declared"):
        check_declared(w, None, None, "0" * 64)


def test_uploaded_file_names_lose_their_directories():
    assert uploaded_filename("C:\\Users\\me\\x.whl") == "x.whl"
    assert uploaded_filename("../../etc/x.whl") == "x.whl"
    for empty in ("", "dir/", "a\\"):
        with pytest.raises(BadRequest, match="no file name"):
            uploaded_filename(empty)


def test_staged_files_have_plain_names_within_the_limit():
    check_staged_file("x.whl", 100, 100)
    check_staged_file("x.whl", None, 100)  # size unknown until the bytes arrive
    with pytest.raises(BadRequest, match="larger than the limit 100"):
        check_staged_file("x.whl", 101, 100)
    for bad in ("a/x.whl", "a\\x.whl", ".hidden"):
        with pytest.raises(InvalidPackage, match="invalid file name"):
            check_staged_file(bad, 1, 100)


def test_tags_are_cleaned_deduplicated_and_bounded():
    assert clean_tags([" Math ", "math", "", "x" * 51, "Code"]) == ["math", "code"]
    assert clean_tags([f"t{i}" for i in range(30)]) == [f"t{i}" for i in range(20)]
