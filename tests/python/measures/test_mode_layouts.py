"""Which fingerprint field a side's modes follow (measures/mode_layouts.py), on starts whose
modes and fingerprints are written here: 12 slow starts (about 720k/s) whose engine sits
at 0x880 modulo 4096 and 4 fast ones (about 1.1M/s) at 0x040, each with a padding of its
own, one THP setting and one cache line."""

import random

from kvlab.measures.mode_layouts import layout_text, mode_of, separating_fields
from kvlab.measures.modes import find_modes

SLOW = [712e3, 715e3, 718e3, 720e3, 721e3, 722e3, 724e3, 726e3, 728e3, 730e3, 731e3, 733e3]
FAST = [1.09e6, 1.10e6, 1.105e6, 1.11e6]


def _starts(engine_of_fast="0x040", engine_of_slow="0x880"):
    rng = random.Random(3)
    values = SLOW + FAST
    prints = [{"env_pad": rng.randrange(4096), "thp": "madvise", "cache_line": 64,
               "layout_engine": engine_of_fast if v > 1e6 else engine_of_slow}
              for v in values]
    return values, prints


def test_the_field_that_tells_the_modes_apart_is_named_with_its_counts():
    values, prints = _starts()
    modes = find_modes(values)
    assert modes.multimodal and len(modes.modes) == 2
    fields = separating_fields(values, prints, modes)
    # the padding is unique per start and THP one value: neither separates
    assert list(fields) == ["layout_engine"]
    assert layout_text(values, prints, modes) == \
        "the modes follow layout_engine (0x880 x12 / 0x040 x4)"


def test_a_field_the_modes_share_a_value_of_separates_nothing():
    values, prints = _starts()
    prints[0]["layout_engine"] = "0x040"  # one slow start where the fast ones are
    modes = find_modes(values)
    assert separating_fields(values, prints, modes) == {}
    assert layout_text(values, prints, modes) == "no recorded layout field separates the modes"


def test_a_field_unique_to_every_start_explains_nothing():
    values, prints = _starts()
    for i, p in enumerate(prints):
        p["layout_engine"] = hex(i * 64)
    assert layout_text(values, prints, find_modes(values)) == \
        "no recorded layout field separates the modes"


def test_one_mode_or_no_fingerprints_says_nothing():
    values, prints = _starts()
    assert layout_text(SLOW, prints[:12], find_modes(SLOW)) == ""
    assert layout_text(values, [{}] * len(values), find_modes(values)) == ""


def test_a_start_belongs_to_the_mode_whose_range_holds_it():
    modes = find_modes(SLOW + FAST)
    assert mode_of(720e3, modes) == 0 and mode_of(1.1e6, modes) == 1
    assert mode_of(900e3, modes) is None
