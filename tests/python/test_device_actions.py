"""Actions given as arrays of another library (issue 20: torch or CuPy arrays on the GPU).

A host array of any library that numpy can read (a torch CPU tensor among them) takes the host
path. An array whose __dlpack_device__ says CUDA goes to the batch as a device pointer. On the
CPU backend that is an error that says what to give instead. The device path itself (CUDA
arrays copied on the device, a NaN refused) is tested on a GPU by
CudaBatch.ActionsFromDeviceMemoryEqualActionsFromTheHost and the host executor's twin
VectorSolvers.ActionsFromTheExecutorsMemoryEqualActionsFromTheHost; from Python on a GPU it is
owed (bench/s8_python.py --backend cuda)."""

import os

import numpy as np
import pytest

import slender

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SNAKE = os.path.join(ROOT, "apps", "scenes", "snake.json")


@pytest.fixture(scope="module")
def model():
    return slender.load_model(SNAKE)


class FakeCudaArray:
    """An object that says it lives on CUDA device 0 (and never gets asked for its data)."""

    def __dlpack_device__(self):
        return (2, 0)

    def __dlpack__(self, stream=None):
        raise AssertionError("a CPU batch must refuse before asking for the capsule")


def waves(n, nbend, k):
    kappa = np.zeros((n, nbend, 2))
    j = np.arange(nbend)
    for e in range(n):
        kappa[e, :, 1] = (0.1 + 0.01 * e) * np.sin(0.12 * j - 0.1 * k)
    return kappa


@pytest.mark.parametrize("engine", ["per-env", "vectorized"])
def test_a_cuda_array_for_a_cpu_batch_is_a_clear_error(model, engine):
    b = slender.BatchedSimulator(model, 2, engine=engine)
    for name in ("set_natural_curvature", "set_natural_twist", "set_natural_hinge_angle",
                 "set_natural_midedge_curvature", "set_natural_stretch"):
        with pytest.raises(ValueError, match="a CUDA array for a batch on the CPU backend"):
            getattr(b, name)(FakeCudaArray())


def test_a_dlpack_host_array_takes_the_host_path(model):
    """numpy.from_dlpack's view of an array and the array itself give the same bits"""
    a = slender.BatchedSimulator(model, 3, engine="vectorized")
    b = slender.BatchedSimulator(model, 3, engine="vectorized")
    for k in range(5):
        kappa = waves(3, model.nbend, k)
        a.set_natural_curvature(kappa)
        b.set_natural_curvature(np.from_dlpack(kappa))
        assert (a.step() == 0).all() and (b.step() == 0).all()
    np.testing.assert_array_equal(a.positions(), b.positions())


def test_a_torch_cpu_tensor_takes_the_host_path(model):
    torch = pytest.importorskip("torch")
    a = slender.BatchedSimulator(model, 2, engine="vectorized")
    b = slender.BatchedSimulator(model, 2, engine="vectorized")
    for k in range(5):
        kappa = waves(2, model.nbend, k)
        a.set_natural_curvature(kappa)
        b.set_natural_curvature(torch.from_numpy(kappa.copy()))
        assert (a.step() == 0).all() and (b.step() == 0).all()
    np.testing.assert_array_equal(a.positions(), b.positions())
    # (value 204 of the whole array: environment 1's value 6 of its 2 x 99)
    with pytest.raises(RuntimeError, match="natural curvature: environment 1, value 6 is nan"):
        bad = torch.zeros((2, model.nbend, 2), dtype=torch.float64)
        bad[1, 3, 0] = float("nan")
        b.set_natural_curvature(bad)
