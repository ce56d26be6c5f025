"""Nightly histories made from the real echo bundle (tests/data/samples/bundle-echo), with known changes.

Each night is a copy of the bundle's two access logs (server side) and of its k6 requests written as a JMeter
JTL (client side), moved to another day, with every response time scaled by the night's level of latency
and a few % of run-to-run noise. What a night changes, and how:
- latency: every elapsed value of a side x the factor (access logs rewritten in µs, so nothing rounds away);
- capacity: the same requests over a longer iteration (the manifest's end moves), so calls_per_s falls by
  the factor and nothing else moves;
- errors: a fixed random share of the requests answers 500 (JTL success=false), the share being the level;
- status: a failed run keeps its data (the flow could not finish it) and must stay out of every series;
- plan: the load of iteration 3 (another plan is another series);
- a client side without some iterations (the load generator's results of an iteration lost).
Cheap (no load runs): a night is written in ~50 ms and ingested in under a second.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from functools import cache
from pathlib import Path

import numpy as np
import yaml

ECHO = Path(__file__).parent / "data" / "samples" / "bundle-echo"
SIDES = ("server", "client")
LATENCY_METRICS = ("avg_ms", "p50_ms", "p90_ms", "p95_ms", "p99_ms", "max_ms")
FIRST_NIGHT = datetime(2026, 10, 1, tzinfo=timezone.utc)
ECHO_DAY = datetime(2026, 12, 2, tzinfo=timezone.utc)
NOISE = 0.03  # run-to-run noise of the latency level
LOG_FORMAT = '%h %l %u %t "%r" %s %b %D'


@dataclass(frozen=True)
class Night:
    """The true levels of one night (1.0: as recorded), before noise."""

    latency: dict[str, float] = field(default_factory=lambda: {"server": 1.0, "client": 1.0})
    capacity: dict[str, float] = field(default_factory=lambda: {"server": 1.0, "client": 1.0})
    errors: dict[str, float] = field(default_factory=lambda: {"server": 0.01, "client": 0.01})
    status: str = "completed"
    vus_3: int = 18
    version: str = "1.0.0"
    client_iterations: tuple[int, ...] = (1, 2, 3)  # the iterations the client's JTL has requests of


@cache
def _access_lines(host: str) -> tuple[list[str], np.ndarray]:
    """The recorded access log of a host: each line up to its %D (ms), and the %D values."""
    prefixes, elapsed = [], []
    for line in (ECHO / host / "access.log").read_text().splitlines():
        prefix, value = line.rsplit(" ", 1)
        prefixes.append(prefix)
        elapsed.append(float(value))
    return prefixes, np.array(elapsed)


@cache
def _k6_requests() -> tuple[np.ndarray, np.ndarray, list[str], np.ndarray]:
    """The recorded k6 requests: start (epoch ms), elapsed (ms), label (the request's name tag), iteration."""
    starts, elapsed, labels, iterations = [], [], [], []
    for number in (1, 2, 3):
        with gzip.open(ECHO / "loadgen" / f"k6-iter{number}.json.gz", "rt") as handle:
            for line in handle:
                if '"http_req_duration","type":"Point"' not in line:
                    continue
                data = json.loads(line)["data"]
                at = datetime.fromisoformat(data["time"][:26].rstrip("Z") + "+00:00")
                starts.append(at.timestamp() * 1000)
                elapsed.append(data["value"])
                labels.append(data["tags"]["name"])
                iterations.append(number)
    return np.array(starts), np.array(elapsed), labels, np.array(iterations)


@cache
def _fixed_uniforms(size: int, seed: int) -> np.ndarray:
    """One uniform per request, the same every night: which requests err, and each one's rounding jitter."""
    return np.random.default_rng(seed).random(size)


def write_night(root: Path, number: int, night: Night, seed: int = 1) -> Path:
    """Write night `number` (one day after the one before) as a bundle folder `root/night-NNN`."""
    rng = np.random.default_rng(seed * 1000 + number)
    shift = FIRST_NIGHT + timedelta(days=number) - ECHO_DAY
    level = {side: night.latency[side] * (1 + NOISE * rng.standard_normal()) for side in SIDES}
    bundle = root / f"night-{number:03d}"
    for host in ("app1", "app2"):
        prefixes, elapsed = _access_lines(host)
        jitter, fails = _fixed_uniforms(len(prefixes), 11), _fixed_uniforms(len(prefixes), 13 + len(host))
        micros = np.rint((elapsed + jitter - 0.5).clip(0.01) * 1000 * level["server"]).astype(int)
        day = (ECHO_DAY + shift).strftime("%d/%b/%Y")
        lines = []
        for prefix, value, fail in zip(prefixes, micros, fails < night.errors["server"]):
            prefix = prefix.replace("02/Dec/2026", day)
            lines.append((prefix.replace('" 200 ', '" 500 ') if fail else prefix) + f" {value}")
        (bundle / host).mkdir(parents=True, exist_ok=True)
        (bundle / host / "access.log").write_text("\n".join(lines) + "\n")
    starts, elapsed, labels, iterations = _k6_requests()
    jitter, fails = _fixed_uniforms(len(starts), 17), _fixed_uniforms(len(starts), 19)
    millis = np.rint(elapsed * level["client"] + jitter - 0.5).clip(0).astype(int)
    stamps = (starts + shift.total_seconds() * 1000).astype(np.int64)
    kept = np.isin(iterations, night.client_iterations)
    rows = ["timeStamp,elapsed,label,responseCode,success,bytes"]
    for stamp, value, label, fail, keep in zip(stamps, millis, labels, fails < night.errors["client"], kept):
        if not keep:
            continue
        rows.append(f"{stamp},{value},{label},{500 if fail else 200},{'false' if fail else 'true'},1024")
    (bundle / "loadgen").mkdir(parents=True, exist_ok=True)
    (bundle / "loadgen" / "result.jtl").write_text("\n".join(rows) + "\n")
    (bundle / "run.yaml").write_text(yaml.safe_dump(_manifest(number, night, shift, rng), sort_keys=False))
    return bundle


def _manifest(number: int, night: Night, shift: timedelta, rng: np.random.Generator) -> dict:
    echo = yaml.safe_load((ECHO / "run.yaml").read_text())
    iterations = []
    for iteration in echo["iterations"]:
        start, end = (datetime.fromisoformat(iteration[k].replace("Z", "+00:00")) + shift for k in ("start", "end"))
        # capacity: the same calls over a longer time; noise only ever lengthens (a shorter one cuts requests)
        stretch = max(1.0, 1.03 + 0.015 * rng.standard_normal()) / min(night.capacity.values())
        load = {"vus": night.vus_3} if iteration["index"] == 3 else iteration["load"]
        iterations.append({"index": iteration["index"], "start": start.isoformat(),
                           "end": (start + (end - start) * stretch).isoformat(), "load": load})
    return {
        "format": 1, "run_id": f"nightly-{number:03d}", "campaign": "nightly", "scenario": "echo",
        "labels": {"sut_version": night.version}, "timezone": "UTC", "status": night.status,
        **({"status_reason": "stage lost half way"} if night.status == "failed" else {}),
        "iterations": iterations,
        "sources": [
            {"kind": "access_log", "host": "app1", "path": "app1/access.log", "format": LOG_FORMAT, "duration_unit": "us"},
            {"kind": "access_log", "host": "app2", "path": "app2/access.log", "format": LOG_FORMAT, "duration_unit": "us"},
            {"kind": "jtl", "host": "loadgen", "path": "loadgen/result.jtl"},
        ],
    }
