"""Student's t in stats.py: textbook values, and the same table as the harness's C++
(harness/summary_table.cc), so an interval reads alike in kvlab-load's summary and here."""

import re

import pytest

from conftest import REPO
from kvlab.measures.stats import t_quantile_975

# t(0.975, df) from a printed table (e.g. NIST/SEMATECH e-Handbook, 1.3.6.7.2).
TEXTBOOK = {1: 12.706, 2: 4.303, 3: 3.182, 5: 2.571, 9: 2.262, 10: 2.228, 20: 2.086,
            29: 2.045, 30: 2.042}


def cxx_table() -> tuple[float, ...]:
    (source,) = list(REPO.glob("harness/**/summary_table.cc"))
    found = re.search(r"kStudentT975\[\]\s*=\s*\{([^}]*)\}", source.read_text())
    return tuple(float(v) for v in found.group(1).split(","))


@pytest.mark.parametrize("degrees, value", sorted(TEXTBOOK.items()))
def test_textbook_values(degrees, value):
    assert t_quantile_975(degrees) == value
    assert cxx_table()[degrees - 1] == value


def test_the_table_is_the_harness_table():
    table = cxx_table()
    assert len(table) == 30
    assert tuple(t_quantile_975(df) for df in range(1, 31)) == table


def test_beyond_the_table_it_falls_towards_the_normal_quantile():
    # Textbook: t(0.975, 60) = 2.000, t(0.975, 120) = 1.980.
    assert t_quantile_975(60) == pytest.approx(2.000, abs=5e-4)
    assert t_quantile_975(120) == pytest.approx(1.980, abs=5e-4)
    with pytest.raises(ValueError):
        t_quantile_975(0)
