"""The base of every model read from a person's file (campaigns, manifests): an unknown key is an error.

The error names the key, the line it is on and the nearest key that is valid there, because a misspelt
key that is ignored silently (`old_gen_slope_max_pct_per_h` for `old_gen_growth_max_pct_per_h`) changes
a run's verdict without anyone noticing.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError, model_validator
from pydantic_core import PydanticCustomError

from tasks.bundle.yaml_limits import load_yaml_and_node

NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"  # campaigns, stages, background processes

Lines = dict[tuple, int]  # a key's or list item's place in the data (as pydantic's `loc`) -> its line


def unknown_key(key: Any, valid: Iterable[str]) -> PydanticCustomError:
    """The error for one unknown key, with the nearest valid key when one is close."""
    near = difflib.get_close_matches(str(key), list(valid), n=1, cutoff=0.6)
    hint = f"; did you mean {near[0]!r}?" if near else f"; valid keys: {', '.join(sorted(valid))}"
    return PydanticCustomError("unknown_key", "unknown key {key}{hint}", {"key": repr(key), "hint": hint, "name": key})


def check_keys(data: dict, valid: Iterable[str]) -> None:
    """Raise `unknown_key` for the first key (in file order) that is not valid."""
    valid = set(valid)
    for key in data:
        if key not in valid:
            raise unknown_key(key, valid)


class StrictModel(BaseModel):
    """A model that refuses keys it does not declare (a misspelt key must not be ignored silently)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)  # a NaN threshold or duration compares false

    @classmethod
    def valid_keys(cls, data: dict) -> set[str] | None:
        """The keys this model reads (None: not checked); a model with extras (a source's options) widens it."""
        return {name for name, info in cls.model_fields.items()} | {
            info.alias for info in cls.model_fields.values() if info.alias
        }

    @model_validator(mode="before")
    @classmethod
    def _known_keys(cls, data: Any) -> Any:
        valid = cls.valid_keys(data) if isinstance(data, dict) else None
        if valid is not None:
            check_keys(data, valid)
        return data


def load_yaml(text: str) -> tuple[Any, Lines]:
    """The data of a YAML document and the line (1-based) of every mapping key and list item in it."""
    data, root = load_yaml_and_node(text)  # refused past the size and alias limits before anything is built
    lines: Lines = {}

    def walk(node: yaml.Node, place: tuple) -> None:
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                key = key_node.value if isinstance(key_node, yaml.ScalarNode) else None
                lines[place + (key,)] = key_node.start_mark.line + 1
                walk(value_node, place + (key,))
        elif isinstance(node, yaml.SequenceNode):
            for number, item in enumerate(node.value):
                lines[place + (number,)] = item.start_mark.line + 1
                walk(item, place + (number,))

    if root is not None:
        walk(root, ())
    return data, lines


def _line_of(loc: tuple, lines: Lines) -> int | None:
    """The line of the deepest part of `loc` found in the file; parts pydantic adds (a union's tag) are skipped."""
    place: tuple = ()
    for part in loc:
        if place + (part,) in lines:
            place += (part,)
    return lines.get(place) if place else None


def describe_validation_error(error: ValidationError, lines: Lines | None = None) -> str:
    """One line per problem: its line in the file when known, the dotted field and what was expected.

    The input value is never repeated (it may be a secret pasted in the wrong place).
    """
    described = []
    for item in error.errors():
        loc = tuple(item["loc"])
        if item["type"] == "unknown_key":
            loc += (item["ctx"]["name"],)
        field = ".".join(str(part) for part in loc) or "(top level)"
        line = _line_of(loc, lines or {})
        described.append(f"  {f'line {line}: ' if line else ''}{field}: {item['msg']}")
    return "\n".join(described)
