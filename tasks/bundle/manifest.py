"""Perflog bundle manifest (`run.yaml`, format 1): the contract between running and analysing.

Loading validates everything up front so that a bad manifest fails before the warehouse is touched,
with an error that names the file, the field and what was expected.
"""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path, PurePosixPath
from typing import Any, Literal
from urllib.parse import urlparse
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import (
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)
from yaml import YAMLError

from tasks.bundle.hooks import HookRun
from tasks.bundle.kinds import KINDS
from tasks.bundle.load import load_matches
from tasks.bundle.soak import Soak
from tasks.bundle.strict import (
    StrictModel,
    check_keys,
    describe_validation_error,
    load_yaml,
)
from tasks.bundle.thresholds import THRESHOLDS

MANIFEST_NAME = "run.yaml"
MAX_LABELS, MAX_LABEL_CHARS = 64, 256  # labels are shown in every listing: a handful of short words

Metric = Literal["avg_ms", "p50_ms", "p90_ms", "p95_ms", "p99_ms", "max_ms", "error_rate", "error_rate_with_dropped",
                 "calls_per_s"]
# Statistics of a k6 metric, named as k6's summary names them: `rate` is the share of non-zero values of a
# Rate metric and the per-second sum of a Counter; `count` is a Counter's sum, else the number of points.
K6Stat = Literal["avg", "min", "max", "p50", "p90", "p95", "p99", "count", "rate"]
# How every percentile of a run is taken from its n sorted values: `linear` interpolates between the closest ranks
# (numpy's default, k6's), `nearest_rank` takes the value at rank ceil(q n) (numpy's inverted_cdf, Lysiro's).
PercentileMethod = Literal["linear", "nearest_rank"]


class ManifestError(ValueError):
    """A bundle manifest that cannot be used; the message names the file and the field."""


class Iteration(StrictModel):
    """One load step: rows with start <= ts < end belong to it."""

    index: int = Field(ge=0, le=2**31 - 1)  # stored as INTEGER
    start: datetime
    end: datetime
    load: dict[str, Any] = Field(default_factory=dict)
    warmup_s: float = Field(0, ge=0)  # its first seconds: kept, marked, left out of its statistics

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
        if self.warmup_s >= (self.end - self.start).total_seconds():
            raise ValueError(f"warmup_s {self.warmup_s:g} leaves nothing of the iteration to measure")
        return self


class At(StrictModel):
    """The one iteration a requirement is stated at (`at: {iteration: 3}`)."""

    iteration: int = Field(ge=0)


class Requirement(StrictModel):
    """A response-time, error or throughput requirement, judged per iteration on the requests of its scope.

    The scope is the side's requests, narrowed by `label` (a glob: `*`, `?`, `[...]`; without them an exact
    label), `label_regex` (a regular expression the whole label matches), `host` and `role` (of the host
    that wrote the source). A background load's own results are never part of a side (side `background`).
    """

    id: str = Field(pattern=r"^[A-Za-z0-9._-]{1,128}$")
    metric: Literal[Metric, K6Stat]  # one list in errors: a request metric, or a k6 metric's statistic
    op: Literal["<", "<=", ">", ">="]
    threshold: float  # the spec: the requirement itself
    expect: float | None = None  # the current expectation, judged with the same op (stricter than the spec)
    side: Literal["server", "client"]
    min_calls_per_s: float | None = Field(default=None, ge=0)
    label: str | None = Field(default=None, min_length=1)
    label_regex: str | None = Field(default=None, min_length=1)
    host: str | None = Field(default=None, min_length=1)
    role: Literal["sut", "loadgen", "dependency"] | None = None
    at: At | None = None  # judged at this iteration only
    at_load: dict[str, Any] | None = Field(default=None, min_length=1)  # judged where the load has these values
    k6_metric: str | None = Field(default=None, pattern=r"^[A-Za-z0-9_]{1,128}$")  # a custom metric's name
    unit: str | None = Field(default=None, min_length=1, max_length=32)  # its unit, for people (CM-handles/s)
    slow_call_ms: float | None = Field(default=None, gt=0)  # a call of its scope at or over this is slow

    @field_validator("label_regex")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                re.compile(value)
            except re.error as exc:
                raise ValueError(f"not a regular expression: {exc}") from None
        return value

    @model_validator(mode="after")
    def _one_label_rule(self) -> "Requirement":
        if self.label is not None and self.label_regex is not None:
            raise ValueError("give label (exact or glob) or label_regex, not both")
        stats = K6Stat.__args__
        if self.k6_metric is None and self.metric in stats:
            raise ValueError(f"metric {self.metric!r} is a statistic of a k6 metric: name it with k6_metric")
        if self.k6_metric is not None and self.metric not in stats:
            raise ValueError(f"a k6 metric is judged by one of {', '.join(stats)}, not {self.metric!r}")
        if self.k6_metric is not None and self.side != "client":
            raise ValueError("a k6 metric is measured by the load tool: side client")
        if self.at is not None and self.at_load is not None:
            raise ValueError("give at (an iteration) or at_load (a load), not both")
        if self.expect is not None and (self.expect > self.threshold if self.op in ("<", "<=")
                                        else self.expect < self.threshold):
            raise ValueError(f"expect {self.expect:g} is looser than the threshold {self.op} {self.threshold:g}: the "
                             "expectation is the current figure, at or inside the spec")
        if self.slow_call_ms is not None and self.k6_metric is not None:
            raise ValueError("slow_call_ms counts slow requests: a k6 metric's points are not calls")
        if self.metric == "error_rate_with_dropped" and (self.label or self.label_regex or (
                self.side == "server" and (self.host or self.role))):
            raise ValueError("dropped calls carry no label and reached no server: error_rate_with_dropped is "
                             "judged on a whole side, or on the client side of a host or role")
        return self

    @property
    def is_whole_side(self) -> bool:
        """True when it judges every request of its side (what a load tool's own summary measures)."""
        return not (self.label or self.label_regex or self.host or self.role or self.k6_metric)

    def applies_at(self, index: int, load: dict[str, Any]) -> bool:
        """Whether an iteration is one the requirement is stated at (`at`, `at_load`; else every one)."""
        if self.at is not None:
            return index == self.at.iteration
        return self.at_load is None or load_matches(load, self.at_load)


class CapacityOptions(StrictModel):
    """How the `capacity` mart reads the run: the load key that is the load level, and what counts as scaling."""

    load_key: str | None = None  # default: vus, else nodes x threads, else users (tasks/bundle/load.py load_level)
    min_scaling: float = Field(default=0.5, gt=0, le=1)  # throughput gain / load gain an iteration must reach
    min_achieved_ratio: float = Field(default=0.9, gt=0, le=1)  # achieved / offered an open-model step must reach
    instance_key: str | None = Field(default=None, min_length=1)  # the load key counting the SUT's instances (adapters)


class HistoryOptions(StrictModel):
    """How the nightly history of the campaign is analysed (docs/history.md): when a move of a series is a change."""

    min_change_pct: float = Field(default=5.0, ge=0)  # smaller moves of a series' level are not reported
    p_value: float = Field(default=0.0001, gt=0, lt=1)  # significance of the t-test of the two segments
    min_runs: int = Field(default=5, ge=3)  # a series with fewer comparable runs claims nothing
    label_min_calls: int = Field(default=100, ge=1)  # a label is a series of its own from this many calls
    settle_runs: int = Field(default=3, ge=1)  # a change with fewer runs on a side is pending, not yet claimed
    alert_extremes: bool = False  # whether a change of max_ms (one call's time) is a regression to announce


def web_url(uri: str | None) -> str | None:
    """`uri` when a browser may open it as a page (http or https), else None: the only links a page takes
    from a bundle's text as they are."""
    return uri if uri and urlparse(uri).scheme in ("http", "https") else None


class PrefectRun(StrictModel):
    """The Prefect flow run that ran the campaign, for links to it (a run made outside Prefect has none)."""

    flow_run_id: str = Field(min_length=1, max_length=64)
    flow_run_url: str | None = Field(default=None, pattern=r"^https?://", max_length=2048)  # its page in the UI


class Source(StrictModel):
    """One raw file of the bundle; kind-specific options stay as extra fields for the kind's reader."""

    model_config = ConfigDict(extra="allow")
    kind: str
    host: str = Field(pattern=r"^[A-Za-z0-9._:-]{1,128}$")
    path: str
    iteration: int | None = None
    role: Literal["sut", "loadgen", "dependency"] | None = None
    max_rejected_pct: float = Field(default=1.0, ge=0, le=100)

    @classmethod
    def valid_keys(cls, data: dict) -> set[str] | None:
        """The declared fields and the options of the source's kind (docs/bundle-format.md); None (not
        checked) for an unknown kind, which is the error to report then."""
        kind = KINDS.get(data.get("kind"))
        return super().valid_keys(data) | set(kind.valid_options) if kind else None

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

    @model_validator(mode="after")
    def _background_labels(self) -> Source:
        labels = self.options.get("background_labels")
        if labels is not None and (not isinstance(labels, list) or not labels
                                   or not all(isinstance(label, str) and label for label in labels)):
            raise ValueError(f"background_labels: expected a list of label globs such as ['*/health'], got {labels!r}")
        return self

    @property
    def background_labels(self) -> list[str] | None:
        """Globs of the labels whose calls are background traffic in the whole run (docs/bundle-format.md)."""
        return self.options.get("background_labels")

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


class Manifest(StrictModel):
    """The whole `run.yaml`."""

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
    percentile_method: PercentileMethod = "linear"
    capacity: CapacityOptions = Field(default_factory=CapacityOptions)
    history: HistoryOptions = Field(default_factory=HistoryOptions)
    hooks: list[HookRun] = Field(default_factory=list)  # stage hooks run around the iterations
    soak: Soak | None = None  # a soak's windows and the run its target came from (tasks/bundle/soak.py)
    prefect: PrefectRun | None = None  # the flow run that ran it, when it ran under Prefect

    @field_validator("thresholds", mode="before")
    @classmethod
    def _known_thresholds(cls, value: Any) -> Any:
        return check_threshold_names(value)

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
        for number, req in enumerate(self.requirements):
            if req.at is not None and req.at.iteration not in indexes:
                raise ValueError(f"requirements.{number}.at.iteration: {req.at.iteration} is not an iteration index")
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


def check_threshold_names(value: Any) -> Any:
    """A `thresholds:` map may only name thresholds something reads (tasks/bundle/thresholds.py)."""
    if isinstance(value, dict):
        check_keys(value, THRESHOLDS)
    return value


def load_manifest(bundle_dir: Path) -> Manifest:
    """Read and validate `run.yaml`, and check that every source file exists inside the bundle."""
    if not Path(bundle_dir).is_dir():
        raise ManifestError(f"{bundle_dir}: not a folder (a bundle is a folder with {MANIFEST_NAME})")
    path = Path(bundle_dir) / MANIFEST_NAME
    try:
        raw, lines = load_yaml(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ManifestError(f"{path}: no manifest (a bundle is a folder with {MANIFEST_NAME})") from None
    except UnicodeDecodeError as exc:
        raise ManifestError(f"{path}: not UTF-8 text (byte {exc.start}): save the manifest as UTF-8") from None
    except OSError as exc:
        raise ManifestError(f"{path}: cannot be read: {exc.strerror}") from None
    except YAMLError as exc:
        raise ManifestError(f"{path}: not valid YAML: {exc}") from None
    if not isinstance(raw, dict):
        raise ManifestError(f"{path}: expected a mapping at the top level")
    try:
        manifest = Manifest.model_validate(raw)
    except ValidationError as exc:
        raise ManifestError(f"{path}: invalid manifest\n{describe_validation_error(exc, lines)}") from None
    root = Path(bundle_dir).resolve()
    for number, source in enumerate(manifest.sources):
        file = (root / source.path).resolve()
        if not file.is_relative_to(root):
            raise ManifestError(f"{path}: sources.{number}.path {source.path!r} leaves the bundle")
        if not file.is_file():
            raise ManifestError(f"{path}: sources.{number}.path {source.path!r}: no such file in the bundle")
    return manifest
