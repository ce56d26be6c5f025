"""docker stats: files written the way docker's CLI writes them (no engine here), checked against the values.

The writer below follows docker/cli `cli/command/container/formatter_stats.go` and `stats.go` and go-units
`size.go`: memory with BytesSize (`%.4g`, base 1024, B KiB MiB GiB), network and block I/O with
HumanSizeWithPrecision(3) (`%.3g`, base 1000, B kB MB GB), CPU and memory percent with `%.2f%%`, `--` for an
invalid entry, a tabwriter with minimum width 10 and padding 3, the table redrawn every frame with
`ESC[2J ESC[H` before v28, and since v28 `ESC[H` ... `ESC[K` per line ... `ESC[J`, the v28 client writing each
frame twice (it appends the erase-line copy to the buffer it is reading).
"""

from __future__ import annotations

import json

import duckdb
import numpy as np
import pandas as pd
import pytest

from tasks.warehouse.ingest import ingest_bundle
from tests.bundles import write_bundle

QUIET = {"progress": lambda message: None}
HEADER = ["CONTAINER ID", "NAME", "CPU %", "MEM USAGE / LIMIT", "MEM %", "NET I/O", "BLOCK I/O", "PIDS"]
BINARY = ["B", "KiB", "MiB", "GiB", "TiB"]
DECIMAL = ["B", "kB", "MB", "GB", "TB"]
LIMIT = 7.7 * 1024**3
# Six frames of two containers: (cpu %, memory bytes, net in, net out, block in, block out, pids); None = `--`.
FRAMES = {
    "web": [(1.5, 150e6, 1_000, 600, 0, 0, 12), (35.25, 151.5e6, 2.5e6, 9.1e6, 4096, 0, 14),
            (40.0, 153e6, 5.2e6, 18.7e6, 4096, 8192, 14), (38.75, 154e6, 7.9e6, 27.9e6, 4096, 16384, 15),
            (41.0, 155.25e6, 10.6e6, 37.4e6, 4096, 16384, 15), (0.0, 155.5e6, 10.7e6, 37.6e6, 4096, 16384, 15)],
    "db": [(0.12, 800e6, 999.7, 0, 1.2e9, 3e6, 30), (5.0, 810e6, 1.5e6, 3.2e6, 1.2e9, 4e6, 31),
           None, (6.5, 830e6, 4.1e6, 9.9e6, 1.21e9, 9e6, 31),
           (7.25, 840e6, 5.4e6, 12.9e6, 1.21e9, 11e6, 32), (0.5, 842e6, 5.5e6, 13.0e6, 1.21e9, 11e6, 32)],
}
IDS = {"web": "3f1c2a9b8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a", "db": "9a8b7c6d5e4f" + "0" * 52}


def go_g(value: float, precision: int) -> str:
    """Go's `%.{precision}g` (Python's %g prints the same digits and the same `e+03` exponents)."""
    return f"{value:.{precision}g}"


def go_size(value: float, base: float, units: list[str], precision: int) -> str:
    """go-units CustomSize: divide while >= base, then `%.<p>g` and the unit."""
    step = 0
    while value >= base and step < len(units) - 1:
        value /= base
        step += 1
    return go_g(value, precision) + units[step]


def printed(value: float, base: float, units: list[str], precision: int) -> float:
    """The number of bytes the printed text stands for (what a reader can know at best)."""
    text = go_size(value, base, units, precision)
    number = text.rstrip("".join(set("".join(units))))
    unit = text[len(number):]
    return float(number) * base ** units.index(unit)


def fields(name: str, sample) -> dict[str, str]:
    """The entry's fields as docker's statsContext renders them (JSON keys)."""
    if sample is None:
        return {"BlockIO": "--", "CPUPerc": "--", "Container": name, "ID": IDS[name][:12], "MemPerc": "--",
                "MemUsage": "-- / --", "Name": name, "NetIO": "--", "PIDs": "--"}
    cpu, mem, net_in, net_out, block_in, block_out, pids = sample
    return {
        "BlockIO": go_size(block_in, 1000, DECIMAL, 3) + " / " + go_size(block_out, 1000, DECIMAL, 3),
        "CPUPerc": f"{cpu:.2f}%", "Container": name, "ID": IDS[name][:12], "MemPerc": f"{100 * mem / LIMIT:.2f}%",
        "MemUsage": go_size(mem, 1024, BINARY, 4) + " / " + go_size(LIMIT, 1024, BINARY, 4),
        "Name": name, "NetIO": go_size(net_in, 1000, DECIMAL, 3) + " / " + go_size(net_out, 1000, DECIMAL, 3),
        "PIDs": str(pids),
    }


def table(frame: int) -> str:
    """docker's default table: tabwriter(minwidth 10, tabwidth 1, padding 3, ' '), the last cell unpadded."""
    keys = ["ID", "Name", "CPUPerc", "MemUsage", "MemPerc", "NetIO", "BlockIO", "PIDs"]
    rows = [HEADER] + [[fields(name, FRAMES[name][frame])[key] for key in keys] for name in FRAMES]
    widths = [max(10, max(len(row[col]) for row in rows) + 3) for col in range(len(keys) - 1)]
    return "".join("".join(cell.ljust(width) for cell, width in zip(row, widths)) + row[-1] + "\n" for row in rows)


def stream(style: str) -> str:
    out = []
    for frame in range(6):
        body = table(frame)
        if style == "v27":
            out.append("\x1b[2J\x1b[H" + body)
        elif style == "v28":
            buffer = "\x1b[H" + body
            out.append(buffer + "".join(line + "\x1b[K\n" for line in buffer.split("\n")) + "\x1b[J")
        else:  # after docker/cli#6876: one copy, every line erased to its end
            out.append("\x1b[H" + "".join(line + "\x1b[K\n" for line in body.split("\n")) + "\x1b[J")
    return "".join(out)


def expected_samples() -> pd.DataFrame:
    rows = []
    for frame in range(6):
        for name in FRAMES:
            sample = FRAMES[name][frame]
            row = {"frame": frame, "container": name}
            if sample is not None:
                cpu, mem, net_in, net_out, block_in, block_out, pids = sample
                row |= {"cpu_pct": cpu, "mem_used_bytes": printed(mem, 1024, BINARY, 4),
                        "mem_limit_bytes": printed(LIMIT, 1024, BINARY, 4),
                        "net_in_bytes": printed(net_in, 1000, DECIMAL, 3),
                        "net_out_bytes": printed(net_out, 1000, DECIMAL, 3),
                        "block_out_bytes": printed(block_out, 1000, DECIMAL, 3), "pids": pids}
            rows.append(row)
    return pd.DataFrame(rows)


def _query(warehouse, sql, params=None) -> pd.DataFrame:
    with duckdb.connect(str(warehouse), read_only=True) as con:
        con.execute("set TimeZone = 'UTC'")
        return con.execute(sql, params).df()


def _ingest(tmp_path, files: dict[str, str], **source):
    sources = [{"kind": "docker_stats", "host": "box", "path": path, **source} for path in files]
    iterations = [{"index": 1, "start": "2026-12-02T10:00:05Z", "end": "2026-12-02T10:00:25Z"},
                  {"index": 2, "start": "2026-12-02T10:00:25Z", "end": "2026-12-02T10:00:50Z"}]
    root = write_bundle(tmp_path / "b", files, sources, iterations)
    warehouse = tmp_path / "w.duckdb"
    return ingest_bundle(root, warehouse, **QUIET), warehouse


def test_format_helpers_follow_go():
    assert go_size(999.7, 1000, DECIMAL, 3) == "1e+03B"  # %.3g rounds up without switching unit
    assert go_size(1.5 * 1024**2, 1024, BINARY, 4) == "1.5MiB"
    assert go_size(LIMIT, 1024, BINARY, 4) == "7.7GiB"


@pytest.mark.parametrize("style", ["v27", "v28", "after-6876"])
def test_streaming_tables_of_every_client_version(tmp_path, style):
    report, warehouse = _ingest(tmp_path, {"stats.log": stream(style)})
    source = report.sources[0]
    assert (source.rows, source.rejected) == (12, 0)
    assert any("whole run only" in note for note in source.notes)
    assert any("docker v28 writes every frame twice" in note for note in source.notes) == (style == "v28")
    got = _query(warehouse, "select * from host_samples order by line_no, container")
    expected = expected_samples()
    got = got.sort_values(["line_no"]).reset_index(drop=True)
    got["frame"] = np.repeat(np.arange(6), 2)
    merged = expected.merge(got, on=["frame", "container"], suffixes=("", "_got"))
    assert len(merged) == 12
    assert merged["sampled_at"].isna().all() and merged["iteration"].isna().all()
    for column in ("cpu_pct", "mem_used_bytes", "mem_limit_bytes", "net_in_bytes", "net_out_bytes",
                   "block_out_bytes", "pids"):
        got_values = merged[column + "_got"].astype(float).tolist()
        assert got_values == pytest.approx(merged[column].astype(float).tolist(), rel=1e-12, nan_ok=True), column

    stats = _query(warehouse, "select * from container_stats order by container")
    assert stats["iteration"].isna().all()  # no times: the whole run only
    for _, row in stats.iterrows():
        mine = expected[expected["container"] == row["container"]].dropna(subset=["cpu_pct"])
        assert row["samples"] == 6
        assert row["cpu_pct_avg"] == pytest.approx(mine["cpu_pct"].mean())
        assert row["cpu_pct_max"] == mine["cpu_pct"].max()
        assert row["mem_used_max_bytes"] == pytest.approx(mine["mem_used_bytes"].max())
        assert row["net_in_bytes"] == pytest.approx(mine["net_in_bytes"].iloc[-1] - mine["net_in_bytes"].iloc[0])
        assert row["net_out_bytes"] == pytest.approx(mine["net_out_bytes"].iloc[-1] - mine["net_out_bytes"].iloc[0])
        assert pd.isna(row["mem_trend_bytes_per_h"])


def test_timestamped_json_lines_are_a_time_series(tmp_path):
    times = pd.date_range("2026-12-02T10:00:00Z", periods=6, freq="10s")
    lines = []
    for frame, moment in enumerate(times):
        lines.append(moment.strftime("%Y-%m-%dT%H:%M:%S+00:00"))
        lines += [json.dumps(fields(name, FRAMES[name][frame]), separators=(",", ":")) for name in FRAMES]
    lines.insert(5, '{"BlockIO":"0B / 0B","CPUPerc":"0.')  # a line cut off mid-write
    report, warehouse = _ingest(tmp_path, {"stats.jsonl": "\n".join(lines) + "\n"}, max_rejected_pct=10)
    assert (report.sources[0].rows, report.sources[0].rejected) == (12, 1)
    expected = expected_samples()
    expected["sampled_at"] = times[expected["frame"]]
    expected["iteration"] = np.select([expected["sampled_at"] < pd.Timestamp("2026-12-02T10:00:05Z"),
                                       expected["sampled_at"] < pd.Timestamp("2026-12-02T10:00:25Z"),
                                       expected["sampled_at"] < pd.Timestamp("2026-12-02T10:00:50Z")],
                                      [np.nan, 1, 2], np.nan)
    got = _query(warehouse, "select container, sampled_at, iteration, mem_used_bytes, net_in_bytes from host_samples")
    merged = expected.merge(got, on=["container", "sampled_at"], suffixes=("", "_got"))
    assert len(merged) == 12
    assert merged["iteration_got"].fillna(-1).tolist() == merged["iteration"].fillna(-1).tolist()
    assert merged["mem_used_bytes_got"].tolist() == pytest.approx(merged["mem_used_bytes"].tolist(), nan_ok=True)

    stats = _query(warehouse, "select * from container_stats where container = 'web' order by iteration nulls first")
    assert stats["iteration"].fillna(-1).tolist() == [-1, 1, 2]
    web = expected[expected["container"] == "web"].set_index("frame")
    # iteration 1 = [:05, :25): counted from frame 0 (last before start) to frame 2 (last before end)
    assert stats["net_in_bytes"].tolist() == pytest.approx([
        web.loc[5, "net_in_bytes"] - web.loc[0, "net_in_bytes"],
        web.loc[2, "net_in_bytes"] - web.loc[0, "net_in_bytes"],
        web.loc[4, "net_in_bytes"] - web.loc[2, "net_in_bytes"],
    ])
    assert stats["samples"].tolist() == [6, 2, 2]
    slope = np.polyfit((times - times[0]).total_seconds(), web["mem_used_bytes"].to_numpy(), 1)[0] * 3600
    assert stats["mem_trend_bytes_per_h"][0] == pytest.approx(slope)
    assert _query(warehouse, "select line_no from rejected_lines")["line_no"].tolist() == [6]


def test_timestamped_no_stream_tables(tmp_path):
    """A monitor loop: `date -u +%FT%TZ; docker stats --no-stream` (no screen codes), every 10 s."""
    times = pd.date_range("2026-12-02T10:00:00Z", periods=6, freq="10s")
    text = "".join(moment.strftime("%Y-%m-%dT%H:%M:%SZ") + "\n" + table(frame) for frame, moment in enumerate(times))
    report, warehouse = _ingest(tmp_path, {"stats.log": text})
    assert (report.sources[0].rows, report.sources[0].rejected) == (12, 0)
    got = _query(warehouse, "select container, coalesce(iteration, -1) as iteration, count(*) as n "
                            "from host_samples group by all order by all")
    # 10:00:00 and 10:00:50 fall outside [10:00:05, 10:00:50)
    assert got.values.tolist() == [["db", -1, 2], ["db", 1, 2], ["db", 2, 2], ["web", -1, 2], ["web", 1, 2],
                                   ["web", 2, 2]]
    stats = _query(warehouse, "select container, iteration, cpu_pct_avg from container_stats "
                              "where iteration = 2 order by container")
    assert stats["cpu_pct_avg"].tolist() == pytest.approx(
        [np.mean([FRAMES[name][frame][0] for frame in (3, 4)]) for name in ("db", "web")])
