"""Server settings: environment variables ``PRIME_HUB_*`` and an optional TOML config file.

Precedence (highest first): explicit keyword arguments, environment variables, the TOML file
named by ``PRIME_HUB_CONFIG`` (top-level keys are the field names), defaults.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from .upstream_url import split_credentials


class _TomlSource(PydanticBaseSettingsSource):
    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        path = os.environ.get("PRIME_HUB_CONFIG")
        if not path:
            return {}
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
        return {k: v for k, v in data.items() if k in self.settings_cls.model_fields}


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="PRIME_HUB_", extra="ignore")

    data_dir: Path = Field(
        default=Path("./prime-hub-data"),
        description="Directory for the default SQLite database and local artifacts.",
    )
    database_url: str | None = Field(
        default=None,
        description="SQLAlchemy URL; default sqlite:///<data_dir>/hub.db. "
        "PostgreSQL: postgresql+psycopg://user:pass@host/db",
    )
    storage: Literal["local", "s3"] = Field(
        default="local", description="Where artifacts live: local (artifact_dir) or s3."
    )
    artifact_dir: Path | None = Field(default=None, description="Default <data_dir>/artifacts.")
    s3_bucket: str | None = Field(default=None, description="Bucket for storage=s3.")
    s3_endpoint_url: str | None = Field(
        default=None, description="S3-compatible endpoint (MinIO, R2, ...); unset: AWS."
    )
    s3_region: str = Field(default="us-east-1", description="Region for S3 requests.")
    s3_access_key_id: str | None = Field(
        default=None, description="Unset: boto3's usual credential chain."
    )
    s3_secret_access_key: str | None = Field(
        default=None, description="Unset: boto3's usual credential chain."
    )
    s3_prefix: str = Field(default="", description="Key prefix for every stored object.")
    s3_presign_expiry: int = Field(default=900, description="Seconds a presigned URL is valid.")
    s3_redirect_downloads: bool = Field(
        default=True, description="Answer file downloads with a 302 to a presigned URL."
    )
    base_url: str | None = Field(
        default=None,
        description="Public URL of the hub (used in URLs handed to clients); "
        "default: taken from each request.",
    )
    host: str = Field(default="127.0.0.1", description="Address `serve` binds.")
    port: int = Field(default=8000, description="Port `serve` binds.")
    workers: int = Field(default=1, description="Server processes `serve` starts.")
    max_upload_bytes: int = Field(default=100 * 1024 * 1024, description="Per file.")
    max_uncompressed_bytes: int = Field(
        default=1024 * 1024 * 1024, description="Declared uncompressed size limit of an archive."
    )
    max_rollouts_bytes: int = Field(
        default=1024 * 1024 * 1024,
        description="Uncompressed size limit of one evaluation's pushed rollouts "
        "(results.jsonl); a push past it is refused with 413. Stored gzip-compressed.",
    )
    index_cache_seconds: float = Field(
        default=1.0,
        description="Anonymous index pages are cached in-process; every this many seconds one "
        "request checks the database's change counter (writes through the same process "
        "invalidate at once; 0 disables the cache).",
    )
    listing_cache_seconds: float = Field(
        default=10.0,
        description="Listings (the JSON API's and the CLI's, the home and owner pages) are "
        "served from memory while the database's change counter is unchanged (read on every "
        "request, so any process's change shows on the next request), at most this many "
        "seconds (download counts move without a change); 0 disables it.",
    )
    listing_inline_ms: float = Field(
        default=5.0,
        ge=0,
        description="On SQLite, a listing rebuilt after a change whose previous build took "
        "less than this runs on the event loop rather than in a worker thread, whose hop "
        "costs about as much as such a build; 0 always uses the thread. (PostgreSQL: always "
        "the thread, as a read there waits on the network.)",
    )
    allow_anonymous_read: bool = Field(
        default=True, description="Public environments are readable without a token."
    )
    upstream_index_url: str = Field(
        default="https://pypi.org/simple/",
        description="Pass-through for names the hub does not host: the hub's /simple/<name>/ "
        "(global and per owner) redirects to this PEP 503 index's page for <name>. A name the "
        "hub hosts (any owner, any visibility) is answered only by the hub. Empty disables the "
        "pass-through (air-gapped hubs): unknown names are 404 and the printed install commands "
        "use uv's index priority instead. A user:password@ in the URL is used only by the hub's "
        "own name checks, never put into a redirect.",
    )
    allowed_upstream_names: list[str] = Field(
        default=[],
        description="The admin's allow-list for registering names: a new environment whose "
        "name the upstream index serves is refused (it would shadow that package for every "
        "install through this hub) unless the name matches an entry here (fnmatch patterns "
        "such as 'acme-*'; '*' allows every name). The hub asks the upstream at the first "
        "publish of a name and caches the answer; when it cannot ask (no pass-through, or "
        "the upstream does not answer), only names matching an entry may be registered. "
        "local_only_names are always allowed.",
    )
    upstream_name_cache_seconds: float = Field(
        default=3600.0,
        description="How long the upstream's answer about a name (served or not) is reused.",
    )
    upstream_check_timeout_seconds: float = Field(
        default=10.0, description="Time limit of one name check against the upstream index."
    )
    local_only_names: list[str] = Field(
        default=["verifiers", "prime"],
        description="Names never passed through to the upstream index, hosted or not (PyPI's "
        "'verifiers' and 'prime' are different projects from the hub's SDK and CLI). Since only "
        "the hub can serve them, each has one owner hub-wide: the first to publish it.",
    )
    unlisted_names: list[str] = Field(
        default=["verifiers", "prime"],
        description="Packages the hub serves but does not list among environments (the SDK and "
        "other libraries environments depend on): absent from search, owner pages and the "
        "list APIs; their own page, index and downloads work as usual.",
    )
    create_tables: bool = Field(default=True, description="Run migrations at start-up.")

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return init_settings, env_settings, _TomlSource(settings_cls)

    @field_validator("upstream_index_url")
    @classmethod
    def _check_upstream(cls, v: str) -> str:
        v = v.strip()
        if v and not v.startswith(("http://", "https://")):
            raise ValueError("upstream_index_url must be an http(s) URL, or empty to disable")
        return v

    @property
    def upstream(self) -> str | None:
        """The pass-through index URL (ending in '/') without any credentials, or None when
        disabled. The one source of every redirect's Location: what it returns is public."""
        url = split_credentials(self.upstream_index_url)[0]
        return (url if url.endswith("/") else url + "/") if url else None

    @property
    def upstream_auth(self) -> tuple[str, str] | None:
        """The credentials written into ``upstream_index_url``, for the hub's own requests."""
        return split_credentials(self.upstream_index_url)[1]

    @property
    def resolved_database_url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite:///{(self.data_dir / 'hub.db').resolve()}"

    @property
    def resolved_artifact_dir(self) -> Path:
        return (self.artifact_dir or self.data_dir / "artifacts").resolve()
