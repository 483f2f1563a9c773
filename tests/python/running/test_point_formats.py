"""The point-record cells the runner writes itself read as kvlab-load's: their formats come
from `kvlab-load --schema` (harness/output/point_record.cc's table declares each column's
cell_format once), and loadgens.format_cell follows them."""

import pytest

from conftest import BUILD_DIR, kvlab_binaries_or_fail
from kvlab.running.loadgens import cell_formats, format_cell, point_schema


@pytest.fixture(scope="module")
def formats() -> dict[str, str]:
    kvlab_binaries_or_fail(BUILD_DIR)
    return cell_formats(point_schema(BUILD_DIR))


def test_the_schema_declares_every_figure_cells_format(formats):
    # Known answers from the C++ table.
    assert (formats["seconds"], formats["ops_per_s"], formats["p99_us"]) == ("%.6f", "%.1f", "%.2f")
    assert (formats["ops"], formats["errors"], formats["threads"]) == ("count", "count", "count")
    assert (formats["client_bound"], formats["behind"]) == ("flag", "flag")
    assert (formats["client_cpu"], formats["server_cpu"]) == ("%.4f", "%.4f")
    assert formats["client"] == "" and formats["command"] == ""  # text, written as it is


@pytest.mark.parametrize("column, value, cell", [
    ("seconds", 1.2, "1.200000"), ("ops_per_s", 35.04, "35.0"), ("ops", 40.0, "40"),
    ("client_bound", True, "true"), ("behind", False, "false"), ("p99_us", 0.397, "0.40"),
    ("server_cpu", None, ""), ("client_cpu", float("nan"), ""), ("client", "pooled", "pooled")])
def test_cells_are_formatted_like_kvlab_load(formats, column, value, cell):
    assert format_cell(formats, column, value) == cell


def test_a_format_the_schema_gives_is_followed():
    formats = {"x": "%.3f", "n": "count", "f": "flag", "t": ""}
    assert [format_cell(formats, c, v) for c, v in (("x", 2), ("n", 2.9), ("f", 0), ("t", 7))] \
        == ["2.000", "2", "false", "7"]
    with pytest.raises(KeyError):
        format_cell(formats, "unknown", 1)
