"""Feedback control on natural strains from Python (docs/control.md): the scene's controllers
act on a Simulator and on every environment of a BatchedSimulator, set_controllers takes dicts
(bad ones raise ValueError naming the entry and the field), per-environment gains and references
give the single simulators' runs, and the arrays have the documented shapes."""

import json
import os

import numpy as np
import pytest

import slender

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
S_SHAPE = os.path.join(ROOT, "apps", "scenes", "pi_s_shape.json")


def s_shape(**controller):
    with open(S_SHAPE) as f:
        scene = json.load(f)
    scene["controllers"][0].update(controller)
    return slender.build_model(scene)


def test_scene_controller_regulates_the_s_shape():
    sim = slender.Simulator(s_shape())
    c = sim.controller
    assert isinstance(c, slender.StrainController)
    assert c.names == ["shape"] and c.num_envs == 1
    assert len(c.springs(0)) == 39 and c.springs("shape") == list(range(39))
    for _ in range(400):
        assert sim.step()["ok"]
    # the S-shape's steady error: below 1e-5 / m (tests/physics/control_test.cpp)
    assert np.abs(c.error("shape")).max() < 1e-5
    assert c.command(0).shape == (39,) and c.integral(0).shape == (39,)
    y = sim.strains()["bend_twist"][:, 1] / 0.025
    np.testing.assert_allclose(y, c.reference_at(0, sim.time), atol=1e-5)
    kp, ki = c.gains(0)
    assert (kp == 0.5).all() and (ki == 5).all()


def test_set_controllers_from_dicts_and_errors():
    model = s_shape()
    sim = slender.Simulator(model)
    c = sim.set_controllers([{"name": "stretch", "strain": "rod_stretch", "part": "rod",
                              "amplitude": 0.0, "kp": 0.5, "ki": 2}])
    assert c.names == ["stretch"] and len(c.springs(0)) == 40
    assert sim.controller.names == ["stretch"]
    with pytest.raises(ValueError, match=r"<python>:1: controllers\[0\]\.kp: .*>= 0"):
        sim.set_controllers([{"strain": "rod_stretch", "part": "rod", "amplitude": 0, "kp": -1}])
    with pytest.raises(ValueError, match=r"controllers\[0\]\.part: unknown part 'tail'"):
        sim.set_controllers([{"strain": "rod_stretch", "part": "tail", "amplitude": 0}])
    with pytest.raises(ValueError, match=r"controllers\[0\]\.profile: has 2 values"):
        sim.set_controllers([{"strain": "rod_curvature2", "part": "rod", "amplitude": 1,
                              "profile": [1, 2]}])
    with pytest.raises(ValueError, match="no controller named 'x'"):
        sim.controller.command("x")
    with pytest.raises(ValueError, match=r"expected \(40,\) values"):
        sim.controller.set_reference(0, np.zeros(3))
    with pytest.raises(RuntimeError, match="must be >= 0"):
        sim.controller.set_gains(0, -1.0, 0.0)
    assert sim.set_controllers([]) is None and sim.controller is None


def test_batch_environments_follow_their_own_gains_and_references():
    model = s_shape()
    steps, n = 40, 39
    kp1 = np.where(np.arange(n) % 2 == 1, 0.4, 0.3)
    flat = 0.5 * slender.Simulator(model).controller.reference_at(0, 1.0)
    singles = [slender.Simulator(model) for _ in range(3)]
    singles[1].controller.set_gains(0, kp1, 2.0)
    singles[2].controller.set_reference(0, flat)
    for s in singles:
        for _ in range(steps):
            assert s.step()["ok"]
    assert not np.array_equal(singles[0].positions, singles[1].positions)
    for engine in ("per-env", "vectorized"):
        b = slender.BatchedSimulator(model, 3, engine=engine)
        c = b.controller
        assert c.num_envs == 3
        c.set_gains(0, kp1, 2.0, env=1)
        c.set_reference(0, flat, env=2)
        for _ in range(steps):
            assert (b.step() == 0).all()
        x = b.positions()
        # the per-environment engine's bits; the vectorized engine's batched LU: round-off
        tol = 0 if engine == "per-env" else 1e-10
        for e in range(3):
            np.testing.assert_allclose(x[e], singles[e].positions, rtol=0, atol=tol)
        assert c.command(0).shape == (3, n) and c.gains(0)[0].shape == (3, n)
        np.testing.assert_array_equal(c.gains(0)[0][1], kp1)
        # a reset environment starts its controllers anew
        b.reset([0, 0, 1])
        assert (c.integral(0)[2] == 0).all() and (c.integral(0)[0] != 0).any()
