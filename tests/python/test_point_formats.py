"""The point-record cells the runner writes itself read as kvlab-load's: loadgens.CELL_FORMATS
is the table harness/point_record.cc declares (kColumns), checked against that source."""

import re

import pytest

from conftest import REPO
from kvlab.running.loadgens import CELL_FORMATS, format_cell


def cxx_cell_formats(source: str) -> dict[str, str]:
    """column -> printf format | "count" | "flag", for the columns of kColumns whose cell
    is written by Format("..."), Count() or Flag()."""
    body = source[source.index("kColumns = {"):]
    formats = {}
    for entry in re.split(r'\n\s*\{"', body)[1:]:
        name = entry.split('"')[0]
        found = re.search(r'Format\("([^"]+)"|(Count)\(|(Flag)\(', entry)
        if found:
            printf, count, _ = found.groups()
            formats[name] = printf or ("count" if count else "flag")
    return formats


def test_the_cell_formats_are_the_harness_table():
    (source,) = list(REPO.glob("harness/**/point_record.cc"))
    cxx = cxx_cell_formats(source.read_text())
    assert len(cxx) > 20  # the parser found the table
    assert CELL_FORMATS == cxx


def test_the_parser_reads_a_known_table():
    source = '''kColumns = {
  {"ops", K::kNumber, "replies", [](const RowSource& s) { return Count(s.ops); }},
  {"seconds", K::kNumber, "length", [](const RowSource& s) { return Format("%.6f", s.x); }},
  {"behind", K::kFlag, "late", [](const RowSource& s) { return Flag(s.b); }},
  {"client", K::kText, "kind", [](const RowSource& s) { return std::string(s.c); }},
};'''
    assert cxx_cell_formats(source) == {"ops": "count", "seconds": "%.6f", "behind": "flag"}


@pytest.mark.parametrize("column, value, cell", [
    ("seconds", 1.2, "1.200000"), ("ops_per_s", 35.04, "35.0"), ("ops", 40.0, "40"),
    ("client_bound", True, "true"), ("behind", False, "false"), ("p99_us", 0.397, "0.40"),
    ("server_cpu", None, ""), ("client_cpu", float("nan"), "")])
def test_cells_are_formatted_like_kvlab_load(column, value, cell):
    assert format_cell(column, value) == cell
