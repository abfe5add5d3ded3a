"""Fixtures shared by the test files."""
from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def tiny_pair(tmp_path_factory):
    """(target, draft) folders of a tiny random Llama pair, built once per test session."""
    pytest.importorskip("transformers")
    from tests.apptest import make_tiny_pair
    return make_tiny_pair(tmp_path_factory.mktemp("pair"))


@pytest.fixture(scope="session", autouse=True)
def models_root(tmp_path_factory):
    """The app's models root (``EXPLORER_MODELS_ROOT``) for the session, the browser tests' server
    included: pytest's base temporary folder, under which every tiny pair a test builds lies, so the
    pages load them by their paths.  Tests of the root itself set their own."""
    base = tmp_path_factory.getbasetemp()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("EXPLORER_MODELS_ROOT", str(base))
        yield base


@pytest.fixture(scope="module")
def one_torch_thread():
    """Torch on one thread for a module's tests (the decoder's default; two threads beside other
    load run several times slower on the 2-core machine), restored afterwards."""
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
