import pytest


@pytest.fixture
def broken():
    raise RuntimeError("known answer")


def test_skips():
    pytest.skip("known answer")


def test_errors(broken):
    pass
