import pytest


def test_one():
    pytest.skip("known answer")


def test_two():
    pytest.skip("known answer")
