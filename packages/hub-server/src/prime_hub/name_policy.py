"""Publish-time name policy: the hub does not take a name the upstream index already serves.

Every install through the hub resolves a name the hub hosts from the hub alone (see
``index_routing``), so registering ``requests`` here would replace PyPI's ``requests`` for
everyone installing through this hub. Registering a public name asks this module: the first
publish of a public environment (the one path that creates an environment,
``Hub.ensure_environment``, and the fail-fast check before an upload is stored) and making a
private environment public (``Hub.update_environment``). A private environment is answered
only to its readers, and its name never goes upstream, so it is checked when it goes public.

* a name matching ``allowed_upstream_names`` (the admin's say; fnmatch patterns) or
  ``local_only_names`` (names the hub serves by design, such as the SDK) is accepted;
* otherwise the hub asks the upstream index for the name's PEP 503 page: 200 means served,
  so the name is refused (409); 404 or 410 means not served, so it is accepted. The answer
  is cached for ``upstream_name_cache_seconds``;
* when the hub cannot ask (no pass-through configured: air-gapped; or the upstream does not
  answer), the name is refused unless allowed: 403 without an upstream, 503 with one that
  did not answer (retrying may help).

Only the normalized name and the admin's upstream credentials go upstream; never the
publisher's token.
"""

from __future__ import annotations

import base64
import fnmatch
import threading
import time
import urllib.error
import urllib.request
from urllib.parse import urlsplit

from .errors import Conflict, Forbidden, UpstreamUnavailable
from .names import normalize
from .settings import Settings

ALLOW_SETTING = "PRIME_HUB_ALLOWED_UPSTREAM_NAMES"
_ACCEPT = "application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html;q=0.2, "
_ACCEPT += "text/html;q=0.1"


class _SameOriginRedirects(urllib.request.HTTPRedirectHandler):
    """Follow http(s) redirects only, and drop the admin's credentials on a hop to another
    origin (a mirror may redirect a project page; it must not get the upstream's password
    sent to wherever it points)."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):  # type: ignore[no-untyped-def]
        new = urlsplit(newurl)
        if new.scheme not in ("http", "https"):
            raise urllib.error.HTTPError(newurl, code, "redirect to a non-http(s) URL", headers, fp)
        out = super().redirect_request(req, fp, code, msg, headers, newurl)
        old = urlsplit(req.full_url)
        if out is not None and (new.scheme, new.netloc) != (old.scheme, old.netloc):
            out.remove_header("Authorization")
        return out


class UpstreamNames:
    """Whether names may be registered; one per hub process (answers cached in memory)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._served: dict[str, tuple[bool, float]] = {}  # name -> (served, when asked)
        self._lock = threading.Lock()
        self._opener = urllib.request.build_opener(_SameOriginRedirects())
        self.asked = 0  # requests sent upstream (the cache's effect is visible in tests)

    def allowed(self, name: str) -> bool:
        norm = normalize(name)
        if norm in {normalize(n) for n in self.settings.local_only_names}:
            return True
        return any(
            fnmatch.fnmatchcase(norm, normalize(p.strip()))
            for p in self.settings.allowed_upstream_names
            if p.strip()
        )

    def check_new_name(self, name: str) -> None:
        """Raise unless ``name`` may become a new environment on this hub."""
        if self.allowed(name):
            return
        upstream = self.settings.upstream
        if upstream is None:
            raise Forbidden(
                f"{name!r} is a new name and this hub has no upstream index to ask whether it "
                f"serves it (the pass-through is off): an admin must allow it first "
                f"({ALLOW_SETTING})"
            )
        if self._served_upstream(normalize(name), upstream):
            raise Conflict(
                f"the upstream index {upstream} serves {name!r}: a public {name!r} here would "
                "replace that package for everyone who installs through this hub. Choose "
                f"another name, or ask an admin to allow it ({ALLOW_SETTING})"
            )

    def _served_upstream(self, norm: str, upstream: str) -> bool:
        ttl = self.settings.upstream_name_cache_seconds
        with self._lock:
            hit = self._served.get(norm)
        if hit is not None and time.monotonic() - hit[1] < ttl:
            return hit[0]
        served = self._ask(norm, upstream)
        with self._lock:
            if len(self._served) > 100_000:
                self._served.clear()
            self._served[norm] = (served, time.monotonic())
        return served

    def _ask(self, norm: str, upstream: str) -> bool:
        req = urllib.request.Request(f"{upstream}{norm}/", headers={"Accept": _ACCEPT})
        auth = self.settings.upstream_auth
        if auth is not None:
            pair = f"{auth[0]}:{auth[1]}".encode()
            req.add_header("Authorization", "Basic " + base64.b64encode(pair).decode())
        self.asked += 1
        try:
            with self._opener.open(req, timeout=self.settings.upstream_check_timeout_seconds):
                return True  # a project page: the upstream serves the name (body unread)
        except urllib.error.HTTPError as e:
            e.close()
            if e.code in (404, 410):
                return False
            reason = f"it answered {e.code}"
        except (OSError, ValueError) as e:  # refused, reset, timed out, a bad redirect
            reason = f"{type(e).__name__}: {getattr(e, 'reason', e)}"
        raise UpstreamUnavailable(
            f"could not ask the upstream index {upstream} whether it serves {norm!r} "
            f"({reason}); nothing was published. Retry later, or ask an admin to allow the "
            f"name ({ALLOW_SETTING})"
        )
