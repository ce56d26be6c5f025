"""The report of a 3 x 3 matrix (tests/unit/report/matrix_run.py) read in a minute: series in the order of their
values, one small panel per series with no text on another, the axis named by the load key, one line per
side for capacity and the load generator's caution once per side, units in the headings. Expected values are
worked out here from the run's plan (CALLS, VUS), not read back from the report's own code."""

from __future__ import annotations

import re
from itertools import combinations

import pytest

from tasks.report.build import build_report
from tasks.report.charts import load_figure
from tasks.report.data import load_report_data
from tasks.warehouse.connection import open_warehouse
from tests.unit.report.matrix_run import CALLS, SIZES, VUS, build_matrix_warehouse


@pytest.fixture(scope="module")
def matrix(tmp_path_factory):
    root = tmp_path_factory.mktemp("matrix")
    warehouse = build_matrix_warehouse(root)
    with open_warehouse(warehouse) as con:
        data = load_report_data(con, "matrix-1", compare=False)
    page = build_report(warehouse, "matrix-1", root / "report").path("html").read_text()
    return data, page


def knees() -> dict[int, int | None]:
    """Each size's knee iteration by the capacity rule (min_scaling 0.5): the step before the first whose
    throughput grew less than half as fast as its load."""
    found = {}
    for number, size in enumerate(SIZES):
        calls, first = CALLS[size], number * len(VUS) + 1
        flat = [i for i in range(1, len(VUS)) if calls[i] / calls[i - 1] - 1 < 0.5 * (VUS[i] / VUS[i - 1] - 1)]
        found[size] = first + flat[0] - 1 if flat else None
    return found


def test_series_are_in_the_order_of_their_values(matrix):
    data, page = matrix
    assert list(data["capacity"]["series"]) == [f"message_size={size}" for size in SIZES] * 2  # 7, 1024, 102400
    series_table = page.split('id="capacity"')[1].split("</table>")[0]
    assert [int(s) for s in re.findall(r"<td>message_size=(\d+)</td>", series_table)] == list(SIZES) * 2


def drawn_texts(fig) -> list:
    """Every text matplotlib draws: titles, axis labels, the tick labels inside the axes' limits (ticks beyond
    them exist but are not drawn), legend entries."""
    texts = [text for legend in fig.legends for text in legend.get_texts()]
    for ax in (ax for ax in fig.axes if ax.get_visible()):
        texts += [ax.title, ax.xaxis.label, ax.yaxis.label]
        texts += [legend_text for legend_text in (ax.get_legend().get_texts() if ax.get_legend() else [])]
        for axis, (low, high) in ((ax.xaxis, sorted(ax.get_xlim())), (ax.yaxis, sorted(ax.get_ylim()))):
            texts += [tick.label1 for tick in axis.get_major_ticks()
                      if tick.label1.get_visible() and low - 1e-9 <= tick.get_loc() <= high + 1e-9]
    return [text for text in texts if text.get_visible() and text.get_text().strip()]


def test_one_panel_per_series_named_with_its_knees_and_no_text_on_another(matrix):
    data, _ = matrix
    fig, caption = load_figure(data)
    titles = [ax.get_title() for ax in fig.axes if ax.get_visible() and ax.get_title()]
    expected = []
    for size, knee in knees().items():
        expected.append(f"message_size={size}" + (f"\nknee: client it {knee}, server it {knee}" if knee else "\nno knee"))
    assert titles == expected
    assert {ax.get_xlabel() for ax in fig.axes if ax.get_xlabel()} == {"load level: vus"}
    assert "load level: vus" in caption
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    boxes = [(text.get_text(), text.get_window_extent(renderer)) for text in drawn_texts(fig)]
    assert len(boxes) > 40  # titles, tick labels, axis labels, the legend
    overlapping = [(a, b) for (a, box_a), (b, box_b) in combinations(boxes, 2) if box_a.overlaps(box_b)
                   and box_a.width * box_a.height and box_b.width * box_b.height]
    assert overlapping == []


def test_capacity_is_one_line_per_side_and_the_caution_is_said_once_per_side(matrix):
    _, page = matrix
    summary = page.split('id="summary"')[1].split("</section>")[0]
    saturated = [size for size, knee in knees().items() if knee]
    for side in ("client", "server"):
        assert summary.count(f"Capacity, {side} side") == 1
        assert f"Capacity, {side} side, 3 series: {len(saturated)} series saturated" in summary
    assert summary.count("ran out of CPU") == 2  # once per side, not once per series or iteration
    assert "ran out of CPU in iterations 1-9," in summary
    capacity = page.split('id="capacity"')[1].split("</section>")[0]
    assert capacity.count("ran out of CPU") == 2


def test_host_table_names_its_units_and_has_the_disk_blocks(matrix):
    _, page = matrix
    hosts = page.split('id="hosts"')[1].split("</section>")[0]
    table = hosts.split("<table>")[1].split("</table>")[0]
    headings = [re.sub("<wbr>", "", h) for h in re.findall(r"<th(?: [^>]*)?>(.*?)</th>", table)]
    assert "mem_free_min (MiB)" in headings and "mem_free_min_kb" not in headings
    first = re.findall(r"<td[^>]*>(.*?)</td>", table.split("<tbody>")[1].split("</tr>")[0])
    row = dict(zip(headings, first))
    assert row["host"] == "app"
    assert row["mem_free_min (MiB)"] == f"{18329000 / 1024:,.1f}"  # vmstat's free KB as MiB
    assert (row["blocks_in/s"], row["blocks_out/s"]) == ("120.0", "3,400.0")  # vmstat bi, bo
