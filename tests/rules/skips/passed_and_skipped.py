import pytest


def test_skips():
    pytest.skip("known answer")


def test_passes():
    pass
