def test_passes():
    pass


def test_passes_too():
    pass
