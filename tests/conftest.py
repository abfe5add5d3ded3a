"""Fixtures shared by the test files."""
from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def tiny_pair(tmp_path_factory):
    """(target, draft) folders of a tiny random Llama pair, built once per test session."""
    pytest.importorskip("transformers")
    from tests.apptest import make_tiny_pair
    return make_tiny_pair(tmp_path_factory.mktemp("pair"))
