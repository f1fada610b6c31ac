"""Pages the agent reads: the bundled corpus (Markdown with links) and HTML from the web.

A `Page` holds display text in which every link is followed by a numbered marker (`Osk River
[3]`) and the numbered `links`, listed with their URLs under the page when it is read, so the
agent can `open` them.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import orjson

from verifiers import ConfigError

__all__ = [
    "DEFAULT_BASE_URL",
    "Link",
    "Page",
    "html_to_page",
    "load_corpus",
    "markdown_to_page",
]

#: Where the bundled corpus lives. `.example` is reserved (RFC 2606): it can never be real.
DEFAULT_BASE_URL = "https://fictopedia.example/wiki/"

_MD_LINK = re.compile(r"\[([^\]\n]+)\]\(([^)\s]+)\)")


@dataclass(frozen=True, slots=True)
class Link:
    text: str
    url: str


@dataclass(frozen=True, slots=True)
class Page:
    """A readable page. `text` carries `[n]` markers after link texts; `plain` has none (it
    is what the search index holds)."""

    url: str
    title: str
    text: str
    links: tuple[Link, ...] = ()
    plain: str = field(default="", compare=False)


class _Numbering:
    """Numbers links by first appearance; the same URL keeps its number."""

    def __init__(self) -> None:
        self.links: list[Link] = []
        self._ids: dict[str, int] = {}

    def number(self, text: str, url: str) -> int:
        if url not in self._ids:
            self.links.append(Link(text, url))
            self._ids[url] = len(self.links)
        return self._ids[url]


def markdown_to_page(url: str, title: str, markdown: str, base_url: str = DEFAULT_BASE_URL) -> Page:
    """A corpus page from Markdown; relative link targets are resolved against `base_url`."""
    numbering = _Numbering()

    def marked(m: re.Match[str]) -> str:
        text, target = m.group(1), m.group(2)
        return f"{text} [{numbering.number(text, resolve_link(target, base_url))}]"

    text = _MD_LINK.sub(marked, markdown).strip()
    plain = _MD_LINK.sub(lambda m: m.group(1), markdown)
    plain = re.sub(r"^#+\s*|^\s*[-*]\s+", "", plain, flags=re.MULTILINE).strip()
    return Page(url=url, title=title, text=text, links=tuple(numbering.links), plain=plain)


def resolve_link(target: str, base_url: str) -> str:
    return target if "://" in target else urljoin(base_url, target)


def load_corpus(path: str | Path, base_url: str = DEFAULT_BASE_URL) -> list[Page]:
    """Pages from a folder of Markdown files or a JSONL file.

    A Markdown file `Slug.md` is the page `<base_url>Slug`; its first line is `# Title`. A JSONL
    file holds one object per line with `url`, `title` and `text` (Markdown). Relative links
    must name pages of the corpus; a broken link, a duplicate URL or a page without a title is a
    `ConfigError` naming the file.
    """
    path = Path(path)
    if not path.exists():
        raise ConfigError(f"deepdive corpus {path} does not exist")
    raw: list[tuple[str, str, str, str]] = []  # (where, url, title, markdown)
    if path.is_dir():
        files = sorted(path.glob("*.md"))
        if not files:
            raise ConfigError(f"deepdive corpus folder {path} holds no .md pages")
        for file in files:
            first, _, body = file.read_text(encoding="utf-8").partition("\n")
            if not first.startswith("# ") or not first[2:].strip():
                raise ConfigError(f"corpus page {file} must start with a '# Title' line")
            raw.append((str(file), urljoin(base_url, file.stem), first[2:].strip(), body))
    else:
        for n, line in enumerate(path.read_bytes().splitlines(), 1):
            if not line.strip():
                continue
            where = f"{path}:{n}"
            try:
                row = orjson.loads(line)
            except orjson.JSONDecodeError as e:
                raise ConfigError(f"{where} is not valid JSON: {e}") from None
            if not isinstance(row, dict):
                raise ConfigError(f"{where} must be a JSON object with url, title and text")
            fields = [row.get(k) for k in ("url", "title", "text")]
            values = [v for v in fields if isinstance(v, str) and v.strip()]
            if len(values) != len(fields):
                raise ConfigError(f"{where} needs non-empty string fields url, title and text")
            url, title, text = values
            raw.append((where, resolve_link(url, base_url), title, text))
    pages: list[Page] = []
    seen: dict[str, str] = {}
    for where, url, title, markdown in raw:
        if url in seen:
            raise ConfigError(f"{where} repeats the page URL {url} of {seen[url]}")
        seen[url] = where
        pages.append(markdown_to_page(url, title, markdown, base_url))
    for (where, *_), page in zip(raw, pages, strict=True):
        for link in page.links:
            if link.url.startswith(base_url) and link.url not in seen:
                raise ConfigError(f"{where} links to {link.url}, which is not in the corpus")
    return pages


# -- HTML ------------------------------------------------------------------------------------
_SKIP = {"script", "style", "noscript", "template", "svg", "head", "iframe"}
_BLOCK = {
    "address", "article", "aside", "blockquote", "br", "dd", "div", "dl", "dt", "figcaption",
    "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "li", "main", "nav",
    "ol", "p", "pre", "section", "table", "td", "th", "tr", "ul",
}  # fmt: skip


class _HTMLText(HTMLParser):
    def __init__(self, base_url: str) -> None:
        super().__init__(convert_charrefs=True)
        self.base_url = base_url
        self.numbering = _Numbering()
        self.out: list[str] = []
        self.plain: list[str] = []
        self.title = ""
        self.h1 = ""
        self._skip = 0
        self._in_title = False
        self._in_h1 = False
        self._anchor: tuple[str, list[str]] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self._in_title = True
        if tag in _SKIP:
            self._skip += 1
            return
        if tag == "h1":
            self._in_h1 = True
        if tag in _BLOCK:
            self._newline()
        if tag == "a" and not self._skip:
            href = dict(attrs).get("href") or ""
            if href and not href.startswith(("#", "javascript:", "mailto:", "tel:")):
                self._anchor = (urljoin(self.base_url, href), [])

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        if tag in _SKIP:
            self._skip = max(0, self._skip - 1)
            return
        if tag == "h1":
            self._in_h1 = False
        if tag == "a" and self._anchor is not None:
            url, words = self._anchor
            self._anchor = None
            text = " ".join(" ".join(words).split())
            if text:
                self.out.append(f" [{self.numbering.number(text, url)}]")
        if tag in _BLOCK:
            self._newline()

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
        if self._skip:
            return
        if self._in_h1:
            self.h1 += data
        if self._anchor is not None:
            self._anchor[1].append(data)
        self.out.append(data)
        self.plain.append(data)

    def _newline(self) -> None:
        self.out.append("\n")
        self.plain.append("\n")


def _tidy(chunks: Iterable[str]) -> str:
    lines = (" ".join(line.split()) for line in "".join(chunks).splitlines())
    text = "\n".join(lines)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def html_to_page(url: str, markup: str) -> Page:
    """Readable text and numbered links of an HTML document (scripts, styles, head dropped)."""
    parser = _HTMLText(url)
    parser.feed(markup)
    parser.close()
    title = " ".join((parser.title or parser.h1).split()) or _fallback_title(url)
    return Page(
        url=url,
        title=html.unescape(title),
        text=_tidy(parser.out),
        links=tuple(parser.numbering.links),
        plain=_tidy(parser.plain),
    )


def _fallback_title(url: str) -> str:
    parts = urlsplit(url)
    return (parts.path.rstrip("/").rsplit("/", 1)[-1] or parts.netloc or url).replace("_", " ")
