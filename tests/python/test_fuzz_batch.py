"""Fuzzing the Python batch's arguments (issue 18, What to build 1): a fixed-seed stream of
calls with wrong shapes, dtypes, non-finite values, odd environment indices and masks, wrong
types and ragged lists, mixed with valid calls. Every call either works or raises a Python
exception (ValueError naming the argument, TypeError, RuntimeError, IndexError): never a crash,
a hang, or a state left non-finite; after every refused call the batch still steps. (It found
complex arrays silently cast to real, dropping the imaginary part: now refused.)"""

import numpy as np
import pytest

import slender

from test_slender import SNAKE


def bad_arrays(rng, shape):
    """A valid array of `shape` and many near misses."""
    good = rng.normal(size=shape) * 0.01
    out = [good, good.astype(np.float32), good.astype(np.int64), good.astype(np.complex128),
           good[..., :-1] if good.ndim else good, np.zeros(shape + (1,)),
           np.zeros((0,) + shape[1:]), good.T if good.ndim > 1 else good, good.tolist(),
           np.full(shape, np.nan), np.full(shape, np.inf), np.full(shape, 1e308),
           np.asfortranarray(good), good[::-1], np.array("x"), None, "a string", 3.5,
           [[1, 2], [3]], np.empty(shape, dtype=object)]
    big = np.zeros(tuple(s * 2 + 1 for s in shape))
    out.append(big)
    return out


@pytest.mark.parametrize("engine", ["per-env", "vectorized"])
def test_the_batch_refuses_bad_arguments_and_keeps_stepping(engine):
    model = slender.load_model(SNAKE)
    n = 3
    batch = slender.BatchedSimulator(model, n, engine=engine)
    rng = np.random.default_rng(2026)
    shapes = {
        "set_natural_curvature": (n, model.nbend, 2),
        "set_natural_twist": (n, model.nbend),
        "set_external_forces": (n, model.nnode, 3),
        "set_fixed_targets": (n, len(model.fixed_dofs)),
        "set_part_youngs_scale": (n, model.npart),
    }
    allowed = (ValueError, TypeError, RuntimeError, IndexError)
    calls = refused = 0
    for it in range(300):
        kind = rng.integers(0, len(shapes) + 2)
        try:
            calls += 1
            if kind < len(shapes):
                name = list(shapes)[kind]
                cands = bad_arrays(rng, shapes[name])
                try:
                    getattr(batch, name)(cands[rng.integers(0, len(cands))])
                except ValueError as e:  # an input error names the argument
                    assert name[len("set_"):] in str(e), str(e)
                    raise
            elif kind == len(shapes):
                env = [0, n - 1, -1, n, 10**9, -(10**9), 1.5, "0", None][rng.integers(0, 9)]
                value = [1.0, 0.0, -1.0, np.nan, np.inf, 1e300, 2.0][rng.integers(0, 7)]
                key = ["youngs_scale", "density_scale", "ground_friction", "mass_damping"][
                    rng.integers(0, 4)]
                batch.set_params(env, **{key: value})
            else:
                masks = [None, np.ones(n, bool), np.zeros(n, bool), np.ones(n + 1, bool),
                         np.array([1, 0, 1], np.uint8), [True, False, True], np.ones((n, 2)),
                         "mask", np.array([np.nan] * n)]
                batch.reset(masks[rng.integers(0, len(masks))],
                            from_env=[None, 0, n - 1, n, -1][rng.integers(0, 5)])
        except allowed:
            refused += 1
        # whatever was refused or taken, a step is well-defined and the state stays finite
        status = batch.step()
        assert status.shape == (n,)
        x = batch.positions()
        assert np.isfinite(x).all(), f"call {it}: a non-finite state"
        if (status != 0).any():
            batch.reset(status != 0)
            batch.clear_actions()
    assert refused > calls // 4  # the stream did hit the checks
    assert calls - refused > 10  # ... and valid calls went through


def test_complex_and_non_numeric_actions_are_refused_by_name():
    model = slender.load_model(SNAKE)
    batch = slender.BatchedSimulator(model, 2)
    forces = np.zeros((2, model.nnode, 3))
    for bad, words in ((forces.astype(complex), "complex values"),
                       (forces.astype(bool), "dtype kind 'b'"),
                       (np.full((2, model.nnode, 3), "x"), "external_forces"),
                       (forces.astype(object), "dtype kind 'O'")):
        with pytest.raises(ValueError, match=words):
            batch.set_external_forces(bad)
    batch.set_external_forces(forces.astype(np.float32))  # real numbers of any width are taken
    assert (batch.step() == 0).all()
