"""JMeter JTL files (CSV and XML): every public sample through the real ingest, checked against pandas/etree."""

from __future__ import annotations

import csv
import gzip
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import duckdb
import pandas as pd
import pytest

from tasks.warehouse.ingest import IngestError, ingest_bundle
from tasks.warehouse.sources.base import SourceError
from tests.bundles import write_bundle

QUIET = {"progress": lambda message: None}
DATA = Path(__file__).resolve().parents[3] / "data" / "jmeter"
CSV_SAMPLES = [
    ("lograter-result_20180502_142434.jtl", ","),
    ("lograter-result_with_multi_lines.jtl", ","),
    ("perfplugin-multiLineCSV.jtl", ","),
    ("perfplugin-filewithtransactions.csv", ","),
    ("taurus-doublequoting.jtl", ","),
    ("taurus-kpi1.jtl", ","),
    ("taurus-quote-guessing-crash.jtl", ","),
    ("taurus-simple.kpi.jtl", ","),
    ("taurus-slow-stdev.jtl", ","),
    ("taurus-tabs.jtl", "\t"),
]
XML_SAMPLES = [
    "taurus-standard-errors.jtl",
    "taurus-error-bug1.jtl",
    "taurus-error-tc-generate-parent.jtl",
    "taurus-nonstandard-unicode.jtl",
]
SUMMARY_SQL = """
    select
        count(*) as rows,
        count(*) filter (where is_error) as errors,
        sum(elapsed_ms) as elapsed_sum,
        min(started_at) as first_start,
        max(started_at) as last_start,
        count(status_code) as numeric_codes,
        sum(bytes) as bytes_sum,
        count(iteration) as mapped,
        count(*) filter (where method is not null) as with_method
    from requests where run_id = 'jtl-test'
"""


# --- independent expectations ------------------------------------------------------------------------------


def expected_csv(path: Path, delimiter: str, zone: str | None = None, time_format: str | None = None) -> pd.DataFrame:
    """The samples as pandas reads the file (all text), with started_at in UTC and typed numbers."""
    frame = pd.read_csv(path, sep=delimiter, quotechar='"', doublequote=True, dtype=str, keep_default_na=False)
    if zone is None:
        started = pd.to_datetime(frame["timeStamp"].astype("int64"), unit="ms", utc=True)
    else:
        started = pd.to_datetime(frame["timeStamp"], format=time_format).dt.tz_localize(zone).dt.tz_convert("UTC")
    return pd.DataFrame(
        {
            "started_at": started,
            "elapsed": frame["elapsed"].astype("int64"),
            "label": frame["label"],
            "code": frame["responseCode"],
            "failed": frame["success"].str.lower() == "false",
            "bytes": frame["bytes"].astype("int64"),
        }
    )


def expected_xml(path: Path, opener=open) -> tuple[pd.DataFrame, int]:
    """Top-level samples by ElementTree (closing a root JMeter left open), and the count of nested samples."""
    with opener(path, "rb") as handle:
        text = handle.read().decode("utf-8")
    if "</testResults>" not in text:
        text += "\n</testResults>"
    root = ET.fromstring(text)
    rows = []
    for element in root:
        if "ts" in element.attrib:
            ts, t, s, lb, rc, by = (element.get(key) for key in ("ts", "t", "s", "lb", "rc", "by"))
        else:  # XStream form: the fields are child elements
            child = {sub.tag: (sub.text or "") for sub in element}
            ts = child["startTime"] if child["startTime"] != "0" else child["timeStamp"]
            t, s, lb, rc, by = (child[key] for key in ("elapsedTime", "success", "label", "responseCode", "bytes"))
        rows.append(
            {
                "started_at": pd.Timestamp(int(ts), unit="ms", tz="UTC"),
                "elapsed": int(t),
                "label": lb,
                "code": rc,
                "failed": s == "false",
                "bytes": int(by),
            }
        )
    nested = sum(1 for top in root for element in top.iter() if element is not top and "ts" in element.attrib)
    return pd.DataFrame(rows), nested


def covering_iteration(expected: pd.DataFrame) -> list[dict]:
    start = expected["started_at"].min() - pd.Timedelta(seconds=1)
    end = expected["started_at"].max() + pd.Timedelta(seconds=1)
    return [{"index": 0, "start": start.isoformat(), "end": end.isoformat()}]


# --- helpers -----------------------------------------------------------------------------------------------


def ingest(tmp_path: Path, files: dict, source: dict, iterations: list[dict], timezone: str = "UTC"):
    bundle = write_bundle(tmp_path / "bundle", files, [source], iterations, run_id="jtl-test", timezone=timezone)
    warehouse = tmp_path / "w.duckdb"
    return ingest_bundle(bundle, warehouse, **QUIET), warehouse


def query(warehouse: Path, sql: str) -> pd.DataFrame:
    with duckdb.connect(str(warehouse), read_only=True) as con:
        con.execute("set TimeZone = 'UTC'")
        return con.execute(sql).df()


def assert_matches(warehouse: Path, expected: pd.DataFrame) -> None:
    got = query(warehouse, SUMMARY_SQL).iloc[0]
    assert got.rows == len(expected) > 0
    assert got.errors == int(expected["failed"].sum())
    assert got.elapsed_sum == pytest.approx(float(expected["elapsed"].sum()))
    assert got.first_start == expected["started_at"].min()
    assert got.last_start == expected["started_at"].max()
    assert got.numeric_codes == int(expected["code"].str.fullmatch(r"\d+").sum())
    assert got.bytes_sum == int(expected["bytes"].sum())
    assert got.mapped == len(expected)
    assert got.with_method == 0
    labels = query(warehouse, "select label from requests where run_id = 'jtl-test'")["label"]
    assert Counter(labels) == Counter(expected["label"])


def source(path: str, **options) -> dict:
    return {"kind": "jtl", "host": "loadgen", "path": path, **options}


# --- CSV ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "delimiter"), CSV_SAMPLES, ids=[name for name, _ in CSV_SAMPLES])
def test_csv_sample_matches_pandas(samples, tmp_path, name, delimiter):
    raw = samples / "jmeter" / name
    expected = expected_csv(raw, delimiter)
    report, warehouse = ingest(tmp_path, {name: raw}, source(name), covering_iteration(expected))
    assert_matches(warehouse, expected)
    assert (report.sources[0].rows, report.sources[0].rejected) == (len(expected), 0)
    assert query(warehouse, "select count(*) as n from rejected_lines").n[0] == 0
    side = query(warehouse, "select distinct side, host from requests")
    assert side.values.tolist() == [["client", "loadgen"]]


def test_epoch_times_are_utc_whatever_the_manifest_zone(samples, tmp_path):
    raw = samples / "jmeter" / "taurus-kpi1.jtl"
    expected = expected_csv(raw, ",")
    _, warehouse = ingest(tmp_path, {"kpi.jtl": raw}, source("kpi.jtl"), covering_iteration(expected), "Asia/Tokyo")
    assert_matches(warehouse, expected)


def test_iterations_split_the_samples_and_outsiders_are_kept(samples, tmp_path):
    raw = samples / "jmeter" / "lograter-result_20180502_142434.jtl"
    expected = expected_csv(raw, ",")
    times = expected["started_at"].sort_values().reset_index(drop=True)
    middle, last = times[len(times) // 2], times.iloc[-1]
    iterations = [
        {"index": 1, "start": (times[0] - pd.Timedelta(seconds=1)).isoformat(), "end": middle.isoformat()},
        {"index": 2, "start": middle.isoformat(), "end": last.isoformat()},  # the last sample falls outside
    ]
    report, warehouse = ingest(tmp_path, {"r.jtl": raw}, source("r.jtl"), iterations)
    got = query(warehouse, "select iteration, count(*) as n from requests group by all order by iteration")
    want = {1: int((expected["started_at"] < middle).sum()),
            2: int(((expected["started_at"] >= middle) & (expected["started_at"] < last)).sum())}
    assert dict(zip(got["iteration"].dropna().astype(int), got["n"][got["iteration"].notna()])) == want
    assert report.unmapped_requests == int((expected["started_at"] >= last).sum()) > 0


@pytest.mark.parametrize("name", ["results.jtl", "results.jtl.gz"])
def test_gzip_csv_is_read_by_its_magic_bytes(samples, tmp_path, name):
    raw = samples / "jmeter" / "lograter-result_with_multi_lines.jtl"
    expected = expected_csv(raw, ",")
    _, warehouse = ingest(tmp_path, {name: gzip.compress(raw.read_bytes())}, source(name), covering_iteration(expected))
    assert_matches(warehouse, expected)


@pytest.mark.parametrize(
    ("name", "zone", "time_format", "options"),
    [
        ("perfplugin-JMeterPublisher_formatted_timeStamp.csv", "Europe/Paris", "%Y-%m-%d %H:%M:%S.%f", {}),
        ("slash-timestamp.jtl", "Europe/Berlin", "%Y/%m/%d %H:%M:%S.%f", {}),  # across the spring DST jump
        ("custom-timestamp.jtl", "Europe/Berlin", "%d.%m.%Y %H:%M:%S", {"timestamp_format": "%d.%m.%Y %H:%M:%S"}),
    ],
)
def test_formatted_times_are_read_in_the_manifest_zone(samples, tmp_path, name, zone, time_format, options):
    raw = samples / "jmeter" / name if name.startswith("perfplugin") else DATA / name
    delimiter = ";" if name.startswith("custom") else ","
    expected = expected_csv(raw, delimiter, zone, time_format)
    _, warehouse = ingest(tmp_path, {name: raw}, source(name, **options), covering_iteration(expected), zone)
    assert_matches(warehouse, expected)


def test_non_numeric_response_code_is_null_and_success_flag_decides_the_error(tmp_path):
    raw = DATA / "slash-timestamp.jtl"
    expected = expected_csv(raw, ",", "Europe/Berlin", "%Y/%m/%d %H:%M:%S.%f")
    _, warehouse = ingest(tmp_path, {"s.jtl": raw}, source("s.jtl"), covering_iteration(expected), "Europe/Berlin")
    got = query(warehouse, "select label, status_code, is_error from requests order by started_at").astype(object)
    want = [["home", 200, False], ["login", 302, False], ["search", None, True]]
    assert got.where(got.notna(), None).values.tolist() == want


def test_unknown_time_format_names_the_file_and_the_option(tmp_path):
    iterations = [{"index": 0, "start": "2021-03-28T00:00:00Z", "end": "2021-03-29T00:00:00Z"}]
    with pytest.raises(SourceError, match=r"custom-timestamp\.jtl.*timestamp_format"):
        name = "custom-timestamp.jtl"
        ingest(tmp_path, {name: DATA / name}, source(name), iterations)


def test_csv_without_header_uses_jmeter_default_columns(tmp_path):
    raw = DATA / "no-header.jtl"
    rows = list(csv.reader(raw.open(newline="")))
    iterations = [{"index": 0, "start": "2021-03-28T00:00:00Z", "end": "2021-03-29T00:00:00Z"}]
    report, warehouse = ingest(tmp_path, {"n.jtl": raw}, source("n.jtl"), iterations)
    got = query(warehouse, "select count(*), sum(elapsed_ms), count(*) filter (where is_error) from requests")
    assert got.values.tolist() == [[len(rows), sum(int(r[1]) for r in rows), sum(r[7] == "false" for r in rows)]]
    assert any("default columns" in note for note in report.sources[0].notes)


def corrupted_records(path: Path) -> tuple[list[int], list[list[str]]]:
    """Physical start line of every record the csv module finds that is not a well-formed sample, and the good ones."""
    with path.open(newline="") as handle:
        reader = csv.reader(handle)
        header = next(reader)
        bad, good, previous_end = [], [], reader.line_num
        for record in reader:
            ok = (
                len(record) == len(header)
                and record[0].isdigit()
                and record[1].isdigit()
                and record[header.index("success")] in ("true", "false")
            )
            (good.append(record) if ok else bad.append(previous_end + 1))
            previous_end = reader.line_num
    return bad, good


def test_corrupted_multiline_csv_fails_the_ingest_naming_the_file(samples, tmp_path):
    name = "lograter-result_with_multi_lines_corrupted.jtl"
    bad, good = corrupted_records(samples / "jmeter" / name)
    iterations = [{"index": 0, "start": "2021-03-29T00:00:00Z", "end": "2021-03-30T00:00:00Z"}]
    with pytest.raises(IngestError, match=rf"{name}: {len(bad)} of {len(bad) + len(good)} lines") as failure:
        ingest(tmp_path, {name: samples / "jmeter" / name}, source(name), iterations)
    assert "max_rejected_pct" in str(failure.value)


@pytest.mark.parametrize("compress", [False, True], ids=["plain", "gzip"])
def test_corrupted_multiline_csv_loads_when_allowed_with_physical_line_numbers(samples, tmp_path, compress):
    name = "lograter-result_with_multi_lines_corrupted.jtl"
    bad, good = corrupted_records(samples / "jmeter" / name)
    iterations = [{"index": 0, "start": "2021-03-29T00:00:00Z", "end": "2021-03-30T00:00:00Z"}]
    raw = samples / "jmeter" / name
    files = {name: gzip.compress(raw.read_bytes()) if compress else raw}
    report, warehouse = ingest(tmp_path, files, source(name, max_rejected_pct=100), iterations)
    assert (report.sources[0].rows, report.sources[0].rejected) == (len(good), len(bad))
    got = query(warehouse, "select count(*) as n, sum(elapsed_ms) as e, min(label) as l from requests")
    assert got.values.tolist() == [[len(good), sum(int(r[1]) for r in good), min(r[2] for r in good)]]
    rejected = query(warehouse, "select line_no, path from rejected_lines order by line_no")
    assert rejected["line_no"].tolist() == bad  # lines of the file, not DuckDB's record numbers
    assert set(rejected["path"]) == {name}


# --- XML ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", XML_SAMPLES)
def test_xml_sample_matches_elementtree(samples, tmp_path, name):
    raw = samples / "jmeter" / name
    expected, nested = expected_xml(raw)
    report, warehouse = ingest(tmp_path, {name: raw}, source(name), covering_iteration(expected))
    assert_matches(warehouse, expected)
    assert (report.sources[0].rows, report.sources[0].rejected) == (len(expected), 0)
    notes = " ".join(report.sources[0].notes)
    assert (f"{nested} sub-samples" in notes) == (nested > 0)
    assert ("ends without </testResults>" in notes) == ("</testResults>" not in raw.read_text(encoding="utf-8"))


def test_gzip_xml(samples, tmp_path):
    raw = samples / "jmeter" / "taurus-error-bug1.jtl"
    expected, _ = expected_xml(raw)
    files = {"errors.xml.jtl": gzip.compress(raw.read_bytes())}
    _, warehouse = ingest(tmp_path, files, source("errors.xml.jtl"), covering_iteration(expected))
    assert_matches(warehouse, expected)


def top_level_starts(lines: list[str]) -> list[int]:
    """1-based numbers of lines where JMeter begins a top-level sample (column 0)."""
    return [n for n, line in enumerate(lines, 1) if line.startswith("<") and line[1] not in "/?" and n > 2]


def test_xml_cut_by_a_crash_keeps_complete_samples_and_rejects_the_tail(samples, tmp_path):
    raw = samples / "jmeter" / "taurus-error-tc-generate-parent.jtl"
    full, _ = expected_xml(raw)
    lines = raw.read_text().splitlines(keepends=True)
    second = top_level_starts(lines)[1]
    cut = "".join(lines[: second + 1]) + lines[second + 1][:25]  # inside the second sample's first child
    report, warehouse = ingest(tmp_path, {"cut.jtl": cut}, source("cut.jtl", max_rejected_pct=100),
                               covering_iteration(full))
    assert_matches(warehouse, full.iloc[:1])
    rejected = query(warehouse, "select line_no, reason from rejected_lines")
    assert rejected["line_no"].tolist() == [second + 2]
    assert f"begun at line {second}" in rejected["reason"][0]
    assert report.sources[0].rejected == 1


def test_xml_broken_in_the_middle_rejects_every_sample_after_the_break(samples, tmp_path):
    raw = samples / "jmeter" / "taurus-error-tc-generate-parent.jtl"
    full, _ = expected_xml(raw)
    lines = raw.read_text().splitlines(keepends=True)
    starts = top_level_starts(lines)
    broken = lines[: starts[1] - 1] + ["<<not xml\n"] + lines[starts[1] - 1:]
    files = {"broken.jtl": "".join(broken)}
    with pytest.raises(IngestError, match=r"broken\.jtl: 3 of 4 lines"):
        ingest(tmp_path / "strict", files, source("broken.jtl"), covering_iteration(full))
    _, warehouse = ingest(tmp_path, files, source("broken.jtl", max_rejected_pct=100), covering_iteration(full))
    assert_matches(warehouse, full.iloc[:1])
    after = [n + 1 for n in starts[1:]]  # shifted by the inserted line
    assert query(warehouse, "select line_no from rejected_lines order by 1")["line_no"].tolist() == [starts[1]] + after


def test_records_without_time_or_elapsed_are_rejected_not_loaded(tmp_path):
    text = (
        "timeStamp,elapsed,label,responseCode,success,bytes\n"
        "1616893199500,120,home,200,true,512\n"
        ",80,login,302,true,128\n"  # line 3: no timeStamp
        "1616893201000,abc,search,500,false,64\n"  # line 4: elapsed is not a number
        "1616893202000,7,home,200,true,512\n"
    )
    iterations = [{"index": 0, "start": "2021-03-28T00:00:00Z", "end": "2021-03-29T00:00:00Z"}]
    report, warehouse = ingest(tmp_path, {"r.jtl": text}, source("r.jtl", max_rejected_pct=50), iterations)
    assert (report.sources[0].rows, report.sources[0].rejected) == (2, 2)
    assert query(warehouse, "select sum(elapsed_ms) as e from requests").e[0] == 127
    assert query(warehouse, "select line_no from rejected_lines order by 1").line_no.tolist() == [3, 4]
