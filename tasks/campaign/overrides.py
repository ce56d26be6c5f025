"""What an ad-hoc run may change (the Prefect form, `--set`) and the type every value it gives must have.

Whoever can start a flow run must not choose what runs where: hosts, commands, paths, the load's env (its
target) and the store come from the campaign file in the repository (docs/security.md). A run may change the
durations, the ramp's sizes, the values of the step keys the file uses and the values of the vars it
declares. Each value has a type, known from the key or from the file's own value (`port: '18081'` is an
integer), and is checked before the run starts; it is coerced where the user's words are clear
(`--set vars.port=28081` is the string "28081" of an integer var), and refused naming the `--set` otherwise.
"""

from __future__ import annotations

import copy
import math
import re
from typing import Any

import yaml
from pydantic import ValidationError

# Dotted keys an override may set; `.*` is one key below (a var the file declares, a matrix or ramp key).
OVERRIDABLE = ("load.duration_s", "load.pause_s", "load.warmup_s", "load.soak_window_s", "load.steps",
               "load.ramp.start", "load.ramp.start.*",
               "load.ramp.factor", "load.ramp.increment", "load.ramp.max_steps", "vars.*",
               "load.matrix", "load.matrix.*")  # matrix: a step's values, as load.steps

# A text value: letters, digits and `_.+-`, not starting with `-` (no shell, URL, path, template or JMeter syntax)
WORD = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.+-]{0,63}$")
WORD_RULE = "a short word: at most 64 of A-Z a-z 0-9 _ . + -, not starting with -"
_INT = re.compile(r"^[+-]?[0-9]{1,18}$")
_NUMBER = re.compile(r"^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$")
_DURATION = re.compile(r"^([0-9]+(?:\.[0-9]+)?)\s*(ms|s|m|h)$")
_SECONDS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600}
MAX_STEPS = 100  # steps in load.steps, values of one matrix key
DURATIONS = ("load.duration_s", "load.pause_s", "load.warmup_s", "load.soak_window_s")


class OverrideError(ValueError):
    """An override that is not allowed or not of its type; the message names the `--set` as the user gave it."""


def shown(key: str, value: Any) -> str:
    """The override as the user would have typed it: `--set vars.port=abc` (control characters escaped: one line)."""
    text = value if isinstance(value, str) else yaml.safe_dump(value, default_flow_style=True, width=10**6, sort_keys=False).strip()
    text = "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in text.removesuffix("\n...").strip())
    return f"--set {key}={text[:80]}{'...' if len(text) > 80 else ''}"


def _as_int(value: Any) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and _INT.match(value.strip()):
        return int(value)
    raise OverrideError("expected a whole number")


def _as_number(value: Any) -> int | float:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return value
    if isinstance(value, str) and _NUMBER.match(value.strip()):
        return _as_int(value) if _INT.match(value.strip()) else float(value)
    raise OverrideError("expected a number")


def _as_duration(value: Any) -> float:
    """Seconds: a number, or a number with its unit (`500ms`, `90s`, `5m`, `1h`)."""
    if isinstance(value, str) and (match := _DURATION.match(value.strip())):
        return float(match.group(1)) * _SECONDS[match.group(2)]
    try:
        seconds = _as_number(value)
    except OverrideError:
        raise OverrideError("expected a duration: seconds (30, 2.5) or with a unit (500ms, 90s, 5m, 1h)") from None
    if seconds < 0:
        raise OverrideError("expected a duration of 0 or more seconds")
    return float(seconds)


def _as_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    raise OverrideError("expected true or false")


def _as_word(value: Any) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if isinstance(value, (bool, float)):
        raise OverrideError(f"YAML reads this as {yaml.safe_dump(value).split()[0]}, not as text; to give the "
                            "text, quote it twice: --set {key}='\"TEXT\"'")
    if not isinstance(value, str) or not WORD.match(value):
        raise OverrideError(f"expected {WORD_RULE}; a URL, path or command cannot be overridden, change it in "
                            "the campaign file")
    return value


_CHECKS = {"int": _as_int, "number": _as_number, "bool": _as_bool, "word": _as_word}


def kind_of(value: Any) -> str | None:
    """The type a value from the campaign file declares; None for one no override may replace (a URL, a path)."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        text = value.strip()
        return "int" if _INT.match(text) else "number" if _NUMBER.match(text) else "word" if WORD.match(value) else None
    return None


def _combined(kinds: set[str | None]) -> str | None:
    """One type for a step key the file gives several values of (`[1, 2.5]` is a number)."""
    if None in kinds:
        return None
    if kinds <= {"int", "number"}:
        return "int" if kinds == {"int"} else "number"
    return kinds.pop() if len(kinds) == 1 else "word"


def step_kinds(data: dict[str, Any]) -> dict[str, str | None]:
    """The step keys the campaign file uses (its steps, ramp start, matrix, soak target) and their types."""
    load = data.get("load") if isinstance(data.get("load"), dict) else {}
    found: dict[str, set[str | None]] = {}
    for step in [*(load.get("steps") or []), (load.get("ramp") or {}).get("start") or {}]:
        for key, value in (step.items() if isinstance(step, dict) else ()):
            found.setdefault(str(key), set()).add(kind_of(value))
    for key, values in (load.get("matrix") or {}).items():
        found.setdefault(str(key), set()).update(kind_of(v) for v in (values if isinstance(values, list) else [values]))
    if isinstance(target := load.get("target_from"), dict):
        found.setdefault(str(target.get("key", "vus")), set()).add("number")
    return {key: _combined(kinds) for key, kinds in found.items()}


def _step_value(key: str, value: Any, kinds: dict[str, str | None]) -> Any:
    if key not in kinds:
        known = ", ".join(sorted(kinds)) or "none"
        raise OverrideError(f"{key!r} is not one of this campaign's step keys ({known}): a run may change a step's "
                            "values, not add keys; the load's target and env come from the campaign file")
    if kinds[key] is None:
        raise OverrideError(f"step key {key!r} holds values no override may replace; change them in the campaign file")
    try:
        return _CHECKS[kinds[key]](value)
    except OverrideError as exc:
        raise OverrideError(f"step key {key}: {exc}") from None


def _step(value: Any, kinds: dict[str, str | None]) -> dict[str, Any]:
    if not isinstance(value, dict) or not value:
        raise OverrideError("expected a step: a mapping such as {vus: 10}")
    return {str(key): _step_value(str(key), item, kinds) for key, item in value.items()}


def _values(key: str, value: Any, kinds: dict[str, str | None]) -> list[Any]:
    if not isinstance(value, list) or not 1 <= len(value) <= MAX_STEPS:
        raise OverrideError(f"expected a list of 1 to {MAX_STEPS} values")
    return [_step_value(key, item, kinds) for item in value]


def _steps(value: Any, kinds: dict[str, str | None]) -> list[dict[str, Any]]:
    if not isinstance(value, list) or not 1 <= len(value) <= MAX_STEPS:
        raise OverrideError(f"expected a list of 1 to {MAX_STEPS} steps, e.g. [{{vus: 10}}, {{vus: 20}}]")
    return [_step(step, kinds) for step in value]


def _var(name: str, value: Any, declared: dict[str, Any]) -> str:
    kind = kind_of(declared[name])
    if kind is None:
        raise OverrideError(f"vars.{name} holds a value no override may replace (a URL, a path or a command: "
                            "where the load goes or what runs); change it in the campaign file")
    try:
        return str(_CHECKS[kind](value))
    except OverrideError as exc:
        raise OverrideError(f"{exc} (the campaign file's value is {declared[name]!r})") from None


def checked(key: str, value: Any, data: dict[str, Any]) -> Any:
    """The value an override may set `key` to, coerced to its type; OverrideError naming the `--set` if none."""
    kinds = step_kinds(data)
    parent, _, name = key.rpartition(".")
    try:
        if key in DURATIONS:
            return _as_duration(value)
        if key == "load.ramp.max_steps":
            return _as_int(value)
        if key in ("load.ramp.factor", "load.ramp.increment"):
            return _as_number(value)
        if key == "load.steps":
            return _steps(value, kinds)
        if key == "load.ramp.start":
            return _step(value, kinds)
        if parent == "load.ramp.start":
            return _step_value(name, value, kinds)
        if key == "load.matrix":
            if not isinstance(value, dict) or not value:
                raise OverrideError("expected a mapping of step keys to lists, e.g. {adapters: [1, 2]}")
            return {str(k): _values(str(k), v, kinds) for k, v in value.items()}
        if parent == "load.matrix":
            return _values(name, value, kinds)
        return _var(name, value, data.get("vars") or {})
    except OverrideError as exc:
        raise OverrideError(f"{shown(key, value)}: {str(exc).replace('{key}', key)}") from None


def _overridable(dotted: str, data: dict[str, Any]) -> bool:
    if dotted in OVERRIDABLE:
        return True
    parent, _, name = dotted.rpartition(".")
    if f"{parent}.*" not in OVERRIDABLE:
        return False
    return parent != "vars" or name in (data.get("vars") or {})  # a var's value, not a new placeholder


def checked_overrides(data: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    """Overrides such as {"load.duration_s": 5, "load.steps": [{"vus": 1}]} checked against the raw campaign
    data: only keys of OVERRIDABLE, each value coerced to its type; anything else raises OverrideError."""
    refused = [str(key) for key in overrides if not _overridable(str(key), data)]
    if refused:
        raise OverrideError(
            f"override of {', '.join(refused)} refused: a run may only change {', '.join(OVERRIDABLE)} "
            "(vars: those the campaign file declares); change anything else in the campaign file")
    return {str(key): checked(str(key), value, data) for key, value in overrides.items()}


def apply_overrides(data: dict[str, Any], values: dict[str, Any]) -> dict[str, Any]:
    """A copy of the campaign data with checked override values in place (as data: they are not templates)."""
    merged = copy.deepcopy(data)
    for dotted, value in values.items():
        target = merged
        *parents, last = dotted.split(".")
        for part in parents:
            target = target.setdefault(part, {})
            if not isinstance(target, dict):
                raise OverrideError(f"{shown(dotted, value)}: {part} is not a mapping in the campaign file")
        target[last] = value
    if "load.steps" in values:
        merged["load"].pop("ramp", None)
        merged["load"].pop("matrix", None)
    return merged


def override_problems(error: ValidationError, overrides: dict[str, Any]) -> list[str]:
    """The validation problems under an overridden key, each named by its `--set` (not a line of the file)."""
    problems = []
    for item in error.errors():
        loc = [str(part) for part in item["loc"]]
        for key, value in overrides.items():
            if loc[:len(key.split("."))] == key.split("."):
                problems.append(f"{shown(key, value)}: {'.'.join(loc)}: {item['msg']}")
                break
    return problems
