"""A point's percentiles come from its rounds' merged histograms."""

import json

import pytest

from kvlab.measures.histograms import Histogram, merged_percentiles


def _file(path, histograms):
    path.write_text(json.dumps({"points": [{"repetitions": [{"histogram": h}
                                                            for h in histograms]}]}))


def _histogram(values_ns):
    """One bucket per value, 2 ns wide: the value is the bucket's middle."""
    buckets = {}
    for v in values_ns:
        buckets[v - 1] = buckets.get(v - 1, 0) + 1
    return {"unit": "ns", "count": len(values_ns), "min": min(values_ns),
            "max": max(values_ns), "buckets": [[low, low + 2, n] for low, n in
                                               sorted(buckets.items())]}


def test_merged_percentiles_are_of_the_union_not_a_median_of_percentiles(tmp_path):
    # Round 1: 100 fast requests (1 µs) and one slow (1 ms); round 2: 99 at 2 µs.
    fast = _histogram([1001] * 100 + [1_000_001])
    slow = _histogram([2001] * 99)
    _file(tmp_path / "a.json", [fast])
    _file(tmp_path / "b.json", [slow])
    merged = merged_percentiles(tmp_path, ["a.json", "b.json"])
    # 200 requests: rank 100 is the last 1 µs one, rank 101 the first 2 µs one
    assert merged["p50_us"] == pytest.approx(1.001)
    assert merged["p99_us"] == pytest.approx(2.001)        # rank 198: a 2 µs request
    assert merged["p999_us"] == pytest.approx(1000.001)    # rank 200: the slow one
    assert merged["max_us"] == pytest.approx(1000.001)
    # The median of the two rounds' p99 would have said (1000 + 2) / 2 µs: no request took that.


def test_an_empty_set_of_histograms_gives_none_and_quantiles_clamp(tmp_path):
    assert merged_percentiles(tmp_path, ["missing.json", ""]) is None
    histogram = Histogram.from_json({"count": 1, "min": 5, "max": 5, "buckets": [[0, 100, 1]]})
    assert histogram.value_at_quantile(0.5) == 5  # the bucket's middle, clamped to min..max
    # Empty: 0 at every quantile, as LatencyHistogram::ValueAtQuantile returns.
    assert Histogram().value_at_quantile(0.5) == 0


def test_merge_and_quantiles_by_hand():
    a = {"count": 4, "min": 100, "max": 250, "buckets": [[100, 100, 1], [248, 249, 3]]}
    b = {"count": 2, "min": 90, "max": 400, "buckets": [[90, 90, 1], [396, 399, 1]]}
    merged = Histogram.merge([a, b, {"count": 0, "min": 0, "max": 0, "buckets": []}])
    assert merged.to_json() == {"unit": "ns", "count": 6, "min": 90, "max": 400, "buckets": [
        [90, 90, 1], [100, 100, 1], [248, 249, 3], [396, 399, 1]]}
    # Nearest rank ceil(q * 6), at least 1; a bucket reads as its midpoint lo + (hi-lo)//2,
    # clamped to [min, max]: ranks 1 | 2 | 3..5 | 6 read 90 | 100 | 248 | 397.
    by_hand = {0.0: 90, 1 / 6: 90, 1 / 3: 100, 0.34: 248, 0.5: 248, 5 / 6: 248, 0.9: 397,
               1.0: 397, 2.0: 397, -1.0: 90}
    for q, expected in by_hand.items():
        assert merged.value_at_quantile(q) == expected, q
    assert merged.percentiles_us() == {"p50_us": 0.248, "p90_us": 0.397, "p99_us": 0.397,
                                       "p999_us": 0.397, "max_us": 0.4}
    # A bucket's middle beyond the observed max is clamped: one value of 120 in [0, 1000].
    one = Histogram.from_json({"count": 1, "min": 120, "max": 120, "buckets": [[0, 1000, 1]]})
    assert one.value_at_quantile(0.5) == 120


def test_an_empty_merge_reads_zero_like_the_harness():
    empty = Histogram.merge([])
    assert empty.to_json() == {"unit": "ns", "count": 0, "min": 0, "max": 0, "buckets": []}
    assert all(value == 0 for value in empty.percentiles_us().values())


def test_gzipped_documents_read_by_their_old_names(tmp_path):
    from kvlab.measures.histograms import compress_documents, merged
    import gzip
    repetitions = [_histogram([1001] * 10 + [5001]), _histogram([2001] * 5)]
    (tmp_path / "a.json").write_text(json.dumps({"points": [{
        "repetitions": [{"histogram": h} for h in repetitions],
        "merged": {"p99_us": 5.0, "histogram": _histogram([1001] * 10 + [2001] * 5 + [5001])}}]}))
    before = merged_percentiles(tmp_path, ["a.json"])
    (written,) = compress_documents(tmp_path)
    assert written.name == "a.json.gz" and not (tmp_path / "a.json").exists()
    # The merged histogram is left out (the repetitions' sum), its figures kept.
    kept = json.loads(gzip.open(written).read())["points"][0]
    assert kept["merged"] == {"p99_us": 5.0} and len(kept["repetitions"]) == 2
    assert merged_percentiles(tmp_path, ["a.json"]) == before
    assert merged(tmp_path, ["a.json"]).count == 16
    # A blank or missing name (a row kvlab-load never wrote) is skipped, not an error.
    assert merged(tmp_path, ["", float("nan"), "missing.json"]) is None
