"""One BLAS thread for the whole test session: the tests solve many small dense problems, for which
OpenBLAS threads only contend with each other on a shared 2-core machine (the experiment does the same)."""

import pytest
from threadpoolctl import threadpool_limits


@pytest.fixture(autouse=True, scope="session")
def one_blas_thread():
    with threadpool_limits(limits=1):
        yield
