"""Perflog bundle manifest (`run.yaml`, format 1): the contract between running and analysing.

Loading validates everything up front so that a bad manifest fails before the warehouse is touched,
with an error that names the file, the field and what was expected.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path, PurePosixPath
from typing import Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from tasks.bundle.kinds import KINDS
from tasks.bundle.yaml_limits import load_yaml

MANIFEST_NAME = "run.yaml"
MAX_LABELS, MAX_LABEL_CHARS = 64, 256  # labels are shown in every listing: a handful of short words

Metric = Literal["avg_ms", "p50_ms", "p90_ms", "p95_ms", "p99_ms", "max_ms", "error_rate", "calls_per_s"]


class ManifestError(ValueError):
    """A bundle manifest that cannot be used; the message names the file and the field."""


class Iteration(BaseModel):
    """One load step: rows with start <= ts < end belong to it."""

    model_config = ConfigDict(extra="forbid")
    index: int = Field(ge=0, le=2**31 - 1)  # stored as INTEGER
    start: datetime
    end: datetime
    load: dict[str, Any] = Field(default_factory=dict)

    @field_validator("start", "end")
    @classmethod
    def _aware(cls, value: datetime) -> datetime:
        if value.tzinfo is None:
            raise ValueError("needs a zone (for example 2026-12-01T02:00:00Z)")
        return value

    @model_validator(mode="after")
    def _ordered(self) -> "Iteration":
        if self.end <= self.start:
            raise ValueError(f"end {self.end.isoformat()} is not after start {self.start.isoformat()}")
        return self


class Requirement(BaseModel):
    """A response-time, error or throughput requirement, judged per iteration."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)  # `avg_ms < nan` would always "hold"
    id: str = Field(pattern=r"^[A-Za-z0-9._-]{1,128}$")
    metric: Metric
    op: Literal["<", "<=", ">", ">="]
    threshold: float
    side: Literal["server", "client"]
    min_calls_per_s: float | None = Field(default=None, ge=0)


class CapacityOptions(BaseModel):
    """How the `capacity` mart reads the run: the load key that is the load level, and what counts as scaling."""

    model_config = ConfigDict(extra="forbid")
    load_key: str | None = None  # default: vus, else nodes x threads, else users (tasks/ramp.py load_level)
    min_scaling: float = Field(default=0.5, gt=0, le=1)  # throughput gain / load gain an iteration must reach


class Source(BaseModel):
    """One raw file of the bundle; kind-specific options stay as extra fields for the kind's reader."""

    model_config = ConfigDict(extra="allow")
    kind: str
    host: str = Field(pattern=r"^[A-Za-z0-9._:-]{1,128}$")
    path: str
    iteration: int | None = None
    role: Literal["sut", "loadgen", "dependency"] | None = None
    max_rejected_pct: float = Field(default=1.0, ge=0, le=100)

    @field_validator("kind")
    @classmethod
    def _known_kind(cls, value: str) -> str:
        if value not in KINDS:
            raise ValueError(f"unknown kind {value!r}; expected one of {', '.join(KINDS)}")
        return value

    @field_validator("path")
    @classmethod
    def _inside_bundle(cls, value: str) -> str:
        posix = PurePosixPath(value.replace("\\", "/"))
        if posix.is_absolute() or value.startswith("~") or ".." in posix.parts or not posix.parts:
            raise ValueError(f"path {value!r} must be relative and stay inside the bundle")
        return value

    @property
    def options(self) -> dict[str, Any]:
        """The kind-specific options (fields this model does not declare)."""
        return dict(self.model_extra or {})

    @property
    def default_role(self) -> str:
        """The role given, else `loadgen` for load-tool results and `sut` for everything else."""
        return self.role or KINDS[self.kind].default_role

    @property
    def side(self) -> str | None:
        """Which side a request log describes: the server's, the load tool's, or a background load's own
        results (a source that declares `declared_rate_per_s`), kept apart from the measured load; None
        for files that hold no requests."""
        side = KINDS[self.kind].requests_side
        if side is not None and self.options.get("declared_rate_per_s") is not None:
            return "background"
        return side


class Manifest(BaseModel):
    """The whole `run.yaml`."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    format: Literal[1]
    run_id: str = Field(pattern=r"^[A-Za-z0-9._-]{1,128}$")
    campaign: str
    scenario: str = ""
    labels: dict[str, str] = Field(default_factory=dict, max_length=MAX_LABELS)
    timezone: str = "UTC"
    status: Literal["passed", "failed", "completed", "cancelled"] = "completed"
    status_reason: str | None = None
    iterations: list[Iteration] = Field(min_length=1)
    requirements: list[Requirement] = Field(default_factory=list)
    sources: list[Source] = Field(min_length=1)
    thresholds: dict[str, float] = Field(default_factory=dict)
    capacity: CapacityOptions = Field(default_factory=CapacityOptions)

    @field_validator("labels", mode="before")
    @classmethod
    def _labels_as_text(cls, value: Any) -> Any:
        if isinstance(value, dict):
            labels = {str(k): str(v) for k, v in value.items()}
            for key, text in labels.items():
                if len(key) > MAX_LABEL_CHARS or len(text) > MAX_LABEL_CHARS:
                    raise ValueError(f"label {key[:40]!r}: keys and values are at most {MAX_LABEL_CHARS} characters")
            return labels
        return value

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"unknown IANA time zone {value!r}") from None
        return value

    @model_validator(mode="after")
    def _consistent(self) -> "Manifest":
        indexes = [it.index for it in self.iterations]
        if len(set(indexes)) != len(indexes):
            raise ValueError("iterations: an index appears twice")
        ordered = sorted(self.iterations, key=lambda it: it.start)
        for before, after in zip(ordered, ordered[1:]):
            if after.start < before.end:
                raise ValueError(f"iterations: {before.index} and {after.index} overlap")
        ids = [req.id for req in self.requirements]
        if len(set(ids)) != len(ids):
            raise ValueError("requirements: an id appears twice")
        for number, source in enumerate(self.sources):
            if source.iteration is not None and source.iteration not in indexes:
                raise ValueError(f"sources.{number}.iteration: {source.iteration} is not an iteration index")
        return self

    @property
    def started_at(self) -> datetime:
        return min(it.start for it in self.iterations)

    @property
    def ended_at(self) -> datetime:
        return max(it.end for it in self.iterations)


def describe_validation_error(error: ValidationError) -> str:
    """One line per problem: the dotted field and what was expected (never the input value)."""
    lines = []
    for item in error.errors():
        field = ".".join(str(part) for part in item["loc"]) or "(top level)"
        lines.append(f"  {field}: {item['msg']}")
    return "\n".join(lines)


def load_manifest(bundle_dir: Path) -> Manifest:
    """Read and validate `run.yaml`, and check that every source file exists inside the bundle."""
    if not Path(bundle_dir).is_dir():
        raise ManifestError(f"{bundle_dir}: not a folder (a bundle is a folder with {MANIFEST_NAME})")
    path = Path(bundle_dir) / MANIFEST_NAME
    try:
        raw = load_yaml(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ManifestError(f"{path}: no manifest (a bundle is a folder with {MANIFEST_NAME})") from None
    except UnicodeDecodeError as exc:
        raise ManifestError(f"{path}: not UTF-8 text (byte {exc.start}): save the manifest as UTF-8") from None
    except OSError as exc:
        raise ManifestError(f"{path}: cannot be read: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        raise ManifestError(f"{path}: not valid YAML: {exc}") from None
    if not isinstance(raw, dict):
        raise ManifestError(f"{path}: expected a mapping at the top level")
    try:
        manifest = Manifest.model_validate(raw)
    except ValidationError as exc:
        raise ManifestError(f"{path}: invalid manifest\n{describe_validation_error(exc)}") from None
    root = Path(bundle_dir).resolve()
    for number, source in enumerate(manifest.sources):
        file = (root / source.path).resolve()
        if not file.is_relative_to(root):
            raise ManifestError(f"{path}: sources.{number}.path {source.path!r} leaves the bundle")
        if not file.is_file():
            raise ManifestError(f"{path}: sources.{number}.path {source.path!r}: no such file in the bundle")
    return manifest
