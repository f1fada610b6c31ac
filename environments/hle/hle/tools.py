"""The optional tools of HLE (upstream's ``tools=True``): a web ``search`` through the Serper
API and a ``python`` tool that evaluates arithmetic only (no code runs: the expression is
parsed and walked, so nothing but numbers and + - * / % ** can be computed)."""

from __future__ import annotations

import ast
import operator
import os
from collections.abc import Awaitable, Callable
from typing import Any

from verifiers import MissingKeyError

__all__ = ["SERPER_URL", "make_search", "python"]

SERPER_URL = "https://google.serper.dev/search"
_OPS: dict[type, Callable[..., Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
}
# 10**10**10 would hang the worker: bound exponents and operand sizes.
_MAX_EXPONENT = 10_000
_MAX_DIGITS = 10_000


def _eval(node: ast.AST) -> int | float:
    value = node.value if isinstance(node, ast.Constant) else None
    if isinstance(value, (int, float)) and not isinstance(value, bool):  # True is no number
        return value
    if isinstance(node, ast.UnaryOp) and type(node.op) in _OPS:
        return _OPS[type(node.op)](_eval(node.operand))
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        left, right = _eval(node.left), _eval(node.right)
        if isinstance(node.op, ast.Pow) and abs(right) > _MAX_EXPONENT:
            raise ValueError(f"exponent {right} is too large (at most {_MAX_EXPONENT})")
        value = _OPS[type(node.op)](left, right)
        if isinstance(value, int) and value.bit_length() > _MAX_DIGITS * 4:
            raise ValueError("the result is too large")
        return value
    raise ValueError("only numbers and the operators + - * / % ** are allowed")


def python(expr: str) -> str:
    """Evaluate an arithmetic expression (numbers with + - * / % ** and parentheses).

    Args:
        expr: the expression, e.g. "(3 + 4) ** 2 / 7".
    """
    try:
        return str(_eval(ast.parse(expr, mode="eval").body))
    except (SyntaxError, ValueError, ZeroDivisionError, OverflowError, TypeError) as e:
        return f"Error: {e}"


def _format_results(data: dict[str, Any], max_results: int, query: str) -> str:
    lines = [f"Results for: {query}"]
    for i, hit in enumerate((data.get("organic") or [])[:max_results], 1):
        lines.append(f"{i}. {hit.get('title', '')}\n   {hit.get('link', '')}")
        if hit.get("snippet"):
            lines.append(f"   {hit['snippet']}")
    if len(lines) == 1:
        lines.append("(no results)")
    return "\n".join(lines)


def make_search(
    api_key_var: str = "SERPER_API_KEY",
    max_response_chars: int = 20_000,
    url: str = SERPER_URL,
    timeout: float = 15.0,
) -> Callable[..., Awaitable[str]]:
    """The ``search`` tool; the key is read now, so a missing key fails at load time (only
    when tools are asked for)."""
    api_key = os.environ.get(api_key_var)
    if not api_key:
        raise MissingKeyError(f"tools=True needs a Serper API key in {api_key_var}")

    async def search(query: str, max_results: int = 10) -> str:
        """Search the web and return the top results (title, link, snippet).

        Args:
            query: what to search for.
            max_results: how many results to return (at most 10).
        """
        import aiohttp

        query = query.strip()
        if not query:
            return "Error: the search query is empty"
        headers = {"X-API-KEY": api_key, "Content-Type": "application/json"}
        client_timeout = aiohttp.ClientTimeout(total=timeout)
        async with aiohttp.ClientSession(timeout=client_timeout) as session:
            async with session.post(url, headers=headers, json={"q": query}) as response:
                if response.status >= 400:
                    text = await response.text()
                    return f"Error: search failed ({response.status}): {text[:200]}"
                data = await response.json(content_type=None)
        text = _format_results(data, max(1, min(int(max_results), 10)), query)
        return text if len(text) <= max_response_chars else text[:max_response_chars] + "…"

    return search
