"""The notebooks of apps/notebooks/ (docs/notebooks.md) run headless, top to bottom, in a Jupyter
kernel (nbclient): a cell that raises, an assertion of a notebook included (each checks what it
shows: the cantilever against Euler-Bernoulli to 0.5 %, the snakes' mean reward rising, a
rendered frame that is not blank), fails its test. The stored notebooks carry no outputs, so that
the repository holds their code only. Skipped where nbclient or ipykernel is missing
(scripts/setup.sh installs them)."""

import glob
import os

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")
pytest.importorskip("matplotlib")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NOTEBOOKS = sorted(glob.glob(os.path.join(ROOT, "apps", "notebooks", "*.ipynb")))


def test_there_are_notebooks():
    assert len(NOTEBOOKS) >= 3


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[os.path.basename(p) for p in NOTEBOOKS])
def test_notebook_runs_headless(path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    for cell in nb.cells:  # stored clean
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, \
                f"{os.path.basename(path)}: stored with outputs (clear them before committing)"
    # the kernel inherits this process's environment: the module under test on PYTHONPATH; the
    # notebook runs in the checkout's root, as a user's Jupyter would in apps/notebooks/; its
    # figures go to the kernel's inline backend (as in Jupyter), not to an MPLBACKEND of ours
    backend = os.environ.pop("MPLBACKEND", None)
    try:
        client = nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                                         resources={"metadata": {"path": ROOT}})
        client.execute()  # raises CellExecutionError naming the cell on any error
    finally:
        if backend is not None:
            os.environ["MPLBACKEND"] = backend
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    # each notebook ends in a figure
    assert any("image/png" in o.get("data", {}) for o in outputs), "no figure was drawn"
