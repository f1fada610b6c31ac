"""Tools: an OpenAI function schema and an argument validator built from a Python function.

The signature's type hints (Optional, Literal, list, dict, pydantic models, ...) become a JSON
schema through pydantic; the docstring (Google, NumPy or Sphinx style, via docstring-parser)
gives the description and each argument's description. Arguments the model sends are
validated against the same model before the function is called.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import docstring_parser
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model
from pydantic.errors import PydanticSchemaGenerationError, PydanticUserError

from verifiers.errors import ConfigError
from verifiers.utils.callables import is_async_callable


@dataclass(slots=True)
class ToolSpec:
    """A callable tool with its schema (`name`, `description`, `parameters`, `strict`) and
    the validator of the arguments the model sends."""

    name: str
    func: Callable[..., Any]
    description: str
    parameters: dict[str, Any]
    args_model: type[BaseModel]
    is_async: bool
    skipped: tuple[str, ...] = ()

    @property
    def tool_def(self) -> dict[str, Any]:
        """The classic `vf.Tool` shape: name, description, parameters, strict."""
        return {
            "name": self.name,
            "description": self.description,
            "parameters": self.parameters,
            "strict": False,
        }

    @property
    def openai_tool(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }

    def validate(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """Validated (and coerced) keyword arguments; raises `ValidationError`. Hidden
        (skipped) arguments, injected by the environment, pass through unvalidated."""
        if self.skipped and any(name in arguments for name in self.skipped):
            hidden = {k: v for k, v in arguments.items() if k in self.skipped}
            visible = {k: v for k, v in arguments.items() if k not in self.skipped}
        else:
            hidden, visible = {}, arguments
        model = self.args_model.model_validate(visible)
        return {**{name: getattr(model, name) for name in type(model).model_fields}, **hidden}


def describe_validation_error(error: ValidationError) -> str:
    parts = []
    for item in error.errors():
        where = ".".join(str(p) for p in item.get("loc", ())) or "arguments"
        parts.append(f"{where}: {item.get('msg')}")
    return "; ".join(parts)


def build_tool(func: Callable[..., Any], args_to_skip: Iterable[str] = ()) -> ToolSpec:
    """Describe `func` as a tool; `args_to_skip` are hidden from the model (injected later)."""
    name = getattr(func, "__name__", None)
    if not name or name == "<lambda>":
        raise ConfigError(f"tool {func!r} needs a name: use a def, not a lambda")
    skip = tuple(args_to_skip)
    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError) as e:
        raise ConfigError(f"tool {name!r}: cannot read its signature ({e})") from None
    unknown = [a for a in skip if a not in sig.parameters]
    if unknown:
        raise ConfigError(f"tool {name!r}: args_to_skip names unknown parameters {unknown}")
    doc = docstring_parser.parse(inspect.getdoc(func) or "")
    arg_docs = {p.arg_name: p.description for p in doc.params if p.description}
    try:
        hints = typing.get_type_hints(func, include_extras=True)
    except Exception:  # unresolved forward references: fall back to raw annotations
        hints = {}
    fields: dict[str, Any] = {}
    for param in sig.parameters.values():
        if param.name in skip or param.name in ("self", "cls"):
            continue
        if param.kind is param.VAR_POSITIONAL:
            raise ConfigError(f"tool {name!r}: *{param.name} cannot be described to a model")
        if param.kind is param.VAR_KEYWORD:
            continue
        annotation = hints.get(param.name, param.annotation)
        if annotation is inspect.Parameter.empty:
            annotation = Any
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[param.name] = (annotation, Field(default, description=arg_docs.get(param.name)))
    try:
        model = create_model(  # type: ignore[call-overload]
            f"{name}_arguments",
            __config__=ConfigDict(extra="forbid", arbitrary_types_allowed=False),
            **fields,
        )
        schema = model.model_json_schema()
    except (PydanticSchemaGenerationError, PydanticUserError, TypeError) as e:
        bad = _unsupported_parameter(fields)
        detail = f"parameter {bad!r} has a type that cannot be described as JSON" if bad else str(e)
        raise ConfigError(f"tool {name!r}: {detail}") from None
    description = "\n\n".join(p for p in (doc.short_description, doc.long_description) if p)
    return ToolSpec(
        name=name,
        func=func,
        description=description,
        parameters=_clean_schema(schema),
        args_model=model,
        is_async=is_async_callable(func),
        skipped=skip,
    )


def _unsupported_parameter(fields: dict[str, Any]) -> str | None:
    for pname, (annotation, field) in fields.items():
        try:
            probe = create_model("probe", **{pname: (annotation, field)})  # type: ignore[call-overload]
            probe.model_json_schema()
        except Exception:
            return pname
    return None


def _clean_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Drop pydantic's titles; keep everything a model needs."""

    def strip(node: Any, in_properties: bool = False) -> Any:
        if isinstance(node, dict):
            return {
                k: strip(v, k == "properties")
                for k, v in node.items()
                if not (k == "title" and not in_properties and isinstance(v, str))
            }
        if isinstance(node, list):
            return [strip(v) for v in node]
        return node

    cleaned = strip(schema)
    cleaned.setdefault("properties", {})
    cleaned["additionalProperties"] = False
    return cleaned
