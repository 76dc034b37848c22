"""Markers of the demo's tests."""


def pytest_configure(config) -> None:
    config.addinivalue_line("markers", "wheel: builds the wheel and serves the demo from it, outside the checkout "
                                       "(about 30 s)")
