"""Independent re-computations for tests: plain Python/pandas over raw files, sharing no code with perfcampaign."""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

import numpy as np
import pandas as pd

CLF = re.compile(
    r'^(?P<host>\S+) (?P<ident>\S+) (?P<user>\S+) \[(?P<time>[^\]]+)\] "(?P<request>[^"]*)" '
    r"(?P<status>\d{3}) (?P<bytes>\S+) (?P<duration>\d+(?:\.\d+)?)$"
)


def read_clf_with_duration(path: Path, duration_to_ms: float = 1.0) -> pd.DataFrame:
    """Parse `%h %l %u %t "%r" %s %b %D` lines with a regex; unparseable lines are returned apart."""
    rows = []
    for line in Path(path).read_text().splitlines():
        match = CLF.match(line)
        if not match:
            continue
        rows.append(
            {
                "started_at": pd.Timestamp(datetime.strptime(match["time"], "%d/%b/%Y:%H:%M:%S %z")).tz_convert("UTC"),
                "label": match["request"].split(" ")[1].split("?")[0],
                "status_code": int(match["status"]),
                "elapsed_ms": float(match["duration"]) * duration_to_ms,
            }
        )
    return pd.DataFrame(rows)


def assign_iterations(frame: pd.DataFrame, windows: list[tuple[int, str, str]], resolution_s: float = 0) -> pd.Series:
    """Iteration of each row by the placement rule (docs/warehouse.md), by brute force over every window: the
    stamp t stands for [t, t + resolution_s); the window it overlaps most wins (equal: the earlier); with
    resolution 0, start <= t < end. NaN outside every window."""
    times = frame["started_at"]
    result = pd.Series(np.nan, index=frame.index)
    best = pd.Series(0.0, index=frame.index)
    for index, start, end in sorted(windows, key=lambda window: pd.Timestamp(window[1])):
        start, end = pd.Timestamp(start), pd.Timestamp(end)
        if resolution_s == 0:
            wins = (times >= start) & (times < end)
        else:
            reach = pd.Timedelta(seconds=resolution_s)
            overlap = ((times + reach).clip(upper=end) - times.clip(lower=start)).dt.total_seconds()
            wins = (overlap > 0) & (overlap > best)
            best[wins] = overlap[wins]
        result[wins] = index
    return result


def measured_iterations(frame: pd.DataFrame, iterations: list[dict], resolution_s: float) -> pd.Series:
    """Iteration of each row counted in a statistic: placed by `assign_iterations`, NaN outside every window or
    in its iteration's warm-up. The warm-up end W = start + warmup_s splits [t, t + r) as the windows do: in the
    warm-up when more of it lies before W than after (equal: the warm-up), i.e. t + r / 2 <= W (t < W when
    r = 0); an iteration without a warm-up (warmup_s 0) keeps every row placed in it."""
    windows = [(it["index"], it["start"], it["end"]) for it in iterations]
    placed = assign_iterations(frame, windows, resolution_s)
    half = pd.Timedelta(seconds=resolution_s / 2)
    for it in iterations:
        if not it.get("warmup_s"):
            continue
        warm_up_end = pd.Timestamp(it["start"]) + pd.Timedelta(seconds=it["warmup_s"])
        inside = placed == it["index"]
        in_warm_up = frame["started_at"] + half <= warm_up_end if resolution_s else frame["started_at"] < warm_up_end
        placed[inside & in_warm_up] = np.nan
    return placed


def describe(elapsed: pd.Series) -> dict[str, float]:
    """count, mean and linear-interpolated percentiles, the way the warehouse should compute them."""
    values = elapsed.to_numpy(dtype=float)
    return {
        "calls": len(values),
        "avg_ms": float(values.mean()),
        "p50_ms": float(np.percentile(values, 50)),
        "p90_ms": float(np.percentile(values, 90)),
        "p95_ms": float(np.percentile(values, 95)),
        "p99_ms": float(np.percentile(values, 99)),
        "max_ms": float(values.max()),
    }


def independent_sar(text: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(interfaces, disks): rows under the IFACE and DEV headers, by the header's names (pandas)."""
    lines = text.splitlines()
    day = lines[0].split()[3]
    blocks: dict[str, list[dict]] = {"IFACE": [], "DEV": []}
    names = None
    for line in lines[1:]:
        tokens = line.split()
        if not tokens or tokens[0] == "Average:":
            continue
        if tokens[1] in blocks:
            names = tokens[1:]
            continue
        row = dict(zip(names, tokens[1:]))
        row["sampled_at"] = pd.Timestamp(f"{day} {tokens[0]}", tz="UTC")
        blocks[names[0]].append(row)
    frames = [pd.DataFrame(blocks[name]) for name in ("IFACE", "DEV")]
    for frame in frames:
        for column in frame.columns[1:-1]:
            frame[column] = frame[column].astype(float)
    return frames[0], frames[1]


def drift_fit(middles_h: np.ndarray, values: np.ndarray, scale: float) -> tuple[float, float, float, float]:
    """An OLS line through per-window values (numpy), its slope's two-sided 95 % interval (scipy's t) and R^2;
    slope and interval times `scale` (100 / level: % of the level per hour)."""
    from scipy import stats

    slope, intercept = np.polyfit(middles_h, values, 1)
    residuals = values - (slope * middles_h + intercept)
    centred = middles_h - middles_h.mean()
    half = stats.t.ppf(0.975, len(values) - 2) * np.sqrt(residuals @ residuals / (len(values) - 2) / (centred @ centred))
    spread = (values - values.mean()) @ (values - values.mean())
    r2 = 1 - residuals @ residuals / spread if spread else 1.0
    return slope * scale, (slope - half) * scale, (slope + half) * scale, r2


def drift_verdict(low: float, high: float, tolerance: float) -> str:
    """The soak verdict as docs/warehouse.md states it: the interval inside [-T, T], entirely outside, or neither."""
    if -tolerance <= low and high <= tolerance:
        return "stable"
    return "drifting" if low > tolerance or high < -tolerance else "inconclusive"
