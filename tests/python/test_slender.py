"""Python bindings: shapes, dtypes, zero-copy views, reset semantics, errors, the vector
environment's API, batch against single simulators, and a short CEM run that improves the
snake's forward speed."""

import os

import numpy as np
import pytest

import slender
from slender import snake

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SNAKE = os.path.join(ROOT, "apps", "scenes", "snake.json")


@pytest.fixture(scope="module")
def model():
    return slender.load_model(SNAKE)


def test_model_and_shapes(model):
    assert model.nnode == 101 and model.nbend == 99 and model.nfree > 0
    b = slender.BatchedSimulator(model, 3)
    assert b.num_envs == 3
    x, v = b.positions(), b.velocities()
    assert x.shape == (3, 101, 3) and x.dtype == np.float64
    assert v.shape == (3, 101, 3)
    assert b.curvatures().shape == (3, 99, 3)
    c = b.ground_contacts()
    assert c.shape == (3, 101) and c.dtype == np.uint8 and not c.any()  # no ground here
    st = b.step()
    assert st.shape == (3,) and st.dtype == np.int8 and (st == 0).all()
    assert np.allclose(b.times(), model.dt)
    np.testing.assert_array_equal(b.positions()[0], model.initial_positions)  # at rest


def test_observations_are_views_without_copies(model):
    b = slender.BatchedSimulator(model, 2)
    x1 = b.positions()
    ptr = x1.__array_interface__["data"][0]
    x2 = b.positions()
    assert x2.__array_interface__["data"][0] == ptr  # the same buffer, refreshed in place
    assert not x1.flags.owndata
    # DLPack (what torch.from_dlpack uses) hands the same memory over
    y = np.from_dlpack(x2)
    assert np.shares_memory(y, x2)


def test_actions_change_the_state_and_reset_restores_it(model):
    b = slender.BatchedSimulator(model, 3)
    x0 = b.positions().copy()
    k = np.zeros((3, model.nbend, 2))
    k[1, :, 1] = 0.05  # only env 1 is bent
    b.set_natural_curvature(k)
    for _ in range(20):
        assert (b.step() == 0).all()
    x = b.positions().copy()
    np.testing.assert_array_equal(x[0], x0[0])
    assert np.abs(x[1] - x0[1]).max() > 1e-3
    b.reset(np.array([False, True, False]))
    x = b.positions().copy()
    np.testing.assert_array_equal(x[1], x0[1])
    assert b.times()[1] == 0 and b.times()[0] > 0
    b.reset()
    assert (b.times() == 0).all()


def test_batch_matches_single_simulators(model):
    f = np.zeros((2, model.nnode, 3))
    f[0, :, 0] = 1e-3
    f[1, :, 2] = -2e-3
    b = slender.BatchedSimulator(model, 2)
    b.set_external_forces(f)
    for _ in range(10):
        b.step()
    for e in range(2):
        s = slender.Simulator(model)
        s.set_external_forces(f[e])
        for _ in range(10):
            assert s.step()["ok"]
        np.testing.assert_array_equal(s.positions, b.positions()[e])


def test_bad_input_is_a_clear_error(model, tmp_path):
    b = slender.BatchedSimulator(model, 2)
    with pytest.raises(ValueError, match=r"natural_curvature: expected an array of shape \(2, 99, 2\)"):
        b.set_natural_curvature(np.zeros((2, 98, 2)))
    with pytest.raises(ValueError, match="mask"):
        b.reset(np.array([True]))
    with pytest.raises(RuntimeError, match="youngs_scale"):
        b.set_params(0, youngs_scale=-1)
    bad = tmp_path / "bad.json"
    bad.write_text('{"name": "x", "rods": 3}\n')
    with pytest.raises(ValueError, match="bad.json:1"):
        slender.load_model(str(bad))
    with pytest.raises(ValueError, match="backend"):
        slender.Simulator(model, backend="tpu")


def test_cuda_request_without_device_says_so(model):
    if slender.cuda_device_count() > 0:
        pytest.skip("a CUDA device is present")
    with pytest.raises(RuntimeError, match="CUDA"):
        slender.Simulator(model, backend="cuda")


def test_vector_env_api():
    env = snake.SnakeVectorEnv(4, control_dt=0.05, episode_seconds=0.1)
    obs, info = env.reset(seed=1)
    assert obs.shape == (4,) + tuple(env.single_observation_space.shape)
    assert env.action_space.shape == (4, 3)
    a = np.tile([10.0, 0.5, -1.0], (4, 1))
    obs, r, term, trunc, info = env.step(a)
    assert r.shape == (4,) and term.dtype == bool and not term.any() and not trunc.any()
    obs, r, term, trunc, info = env.step(a)
    assert trunc.all()  # two control steps make the episode
    assert "final_observation" in info
    with pytest.raises(ValueError):
        env.step(np.zeros((3, 3)))


def test_short_cem_run_improves_the_snake():
    env = snake.SnakeVectorEnv(16, control_dt=0.1, episode_seconds=0.6)
    hist = snake.cem(env, iterations=5, seed=3, log=None)
    first, last = hist[0]["mean_reward"], hist[-1]["mean_reward"]
    assert last > first + 0.02, hist
    assert hist[-1]["best_reward"] > 0


def test_vectorized_engine_matches_per_env_engine(model):
    k = np.zeros((3, model.nbend, 2))
    k[:, :, 1] = 0.02 * np.sin(0.2 * np.arange(model.nbend))[None, :] * np.array([1, 2, 3])[:, None]
    a = slender.BatchedSimulator(model, 3)
    b = slender.BatchedSimulator(model, 3, engine="vectorized")
    assert a.engine == "per-env" and b.engine == "vectorized"
    for sim in (a, b):
        sim.set_natural_curvature(k)
        for _ in range(10):
            assert (sim.step() == 0).all()
    # the same per-environment arithmetic (banded LU for this rod) in the same order
    np.testing.assert_array_equal(a.positions(), b.positions())
    with pytest.raises(ValueError, match="engine"):
        slender.BatchedSimulator(model, 2, engine="warp")
    assert a.linear_solver == "banded-lu" and b.linear_solver == "banded-lu"
    # every parameter per environment, ground friction included
    b.set_params(0, youngs_scale=2.0, ground_friction=0.2)
    # the snake's RFT Jacobian is not symmetric: dense takes LU, pcg refuses
    d = slender.BatchedSimulator(model, 2, engine="vectorized", solver="dense")
    assert d.linear_solver == "dense-lu"
    with pytest.raises(RuntimeError, match="symmetric"):
        slender.BatchedSimulator(model, 2, engine="vectorized", solver="pcg")


def test_live_dlpack_view_follows_the_state_without_copies(model):
    import gc
    b = slender.BatchedSimulator(model, 3, engine="vectorized")
    lv = b.live_positions()
    assert lv.__dlpack_device__() == (1, 0) and lv.device == "cpu"
    x = np.from_dlpack(lv)
    assert x.shape == (3, model.nnode, 3) and x.dtype == np.float64
    # environments are ndof = 3 nnode + nedge values apart: a strided view of the state itself
    assert x.strides == (8 * (3 * model.nnode + model.nedge), 24, 8)
    np.testing.assert_array_equal(x, b.positions())
    k = np.zeros((3, model.nbend, 2))
    k[:, :, 1] = 0.05
    b.set_natural_curvature(k)
    for _ in range(5):
        b.step()
    # the same memory, now holding the new state
    np.testing.assert_array_equal(x, b.positions())
    assert np.abs(x - model.initial_positions).max() > 1e-3
    v = np.from_dlpack(b.live_velocities())
    np.testing.assert_array_equal(v, b.velocities())
    # the view keeps the batch alive
    del b
    gc.collect()
    assert np.isfinite(x).all()
    with pytest.raises(RuntimeError, match="vectorized"):
        slender.BatchedSimulator(model, 2).live_positions()


def test_fixed_targets_move_the_clamped_ends():
    """Prescribed motion through the caller: targets for every fixed DOF (Model.fixed_dofs)
    replace the scene's motions; a batch equals single simulators given the same targets."""
    m = slender.load_model(os.path.join(ROOT, "apps", "scenes", "rod_twist.json"))
    fixed = m.fixed_dofs
    n = m.nnode
    # both clamped edges: nodes 0, 1, n-2, n-1 and the twists of the first and last edges
    want = sorted([c + 3 * k for k in (0, 1, n - 2, n - 1) for c in range(3)]
                  + [3 * n, 3 * n + m.nedge - 1])
    assert fixed.dtype == np.int32 and fixed.tolist() == want
    x0 = m.initial_positions.reshape(-1)
    base = np.array([x0[d] if d < 3 * n else 0.0 for d in fixed])
    targets = np.stack([base, base])
    last_z = list(fixed).index(3 * (n - 1) + 2)
    targets[1, last_z] += 1e-3  # env 1 lifts its right end by 1 mm
    b = slender.BatchedSimulator(m, 2)
    b.set_fixed_targets(targets)
    for _ in range(3):
        assert (b.step() == 0).all()
    x = b.positions()
    assert x[1, n - 1, 2] == pytest.approx(1e-3, abs=1e-15)
    assert x[0, n - 1, 2] == 0.0 and x[0, n - 1, 0] == pytest.approx(0.2)  # the scene's motion is off
    for e in range(2):
        s = slender.Simulator(m)
        s.set_fixed_targets(targets[e])
        for _ in range(3):
            assert s.step()["ok"]
        np.testing.assert_array_equal(s.positions, x[e])
    with pytest.raises(ValueError, match=r"fixed_targets: expected an array of shape \(2, 14\)"):
        b.set_fixed_targets(np.zeros((2, 13)))
    s = slender.Simulator(m)
    s.set_fixed_targets(None)  # back to the scene's motion
    assert s.step()["ok"]
    assert s.positions[n - 1, 0] < 0.2


def test_reset_from_another_environment(model):
    b = slender.BatchedSimulator(model, 3, engine="vectorized")
    k = np.zeros((3, model.nbend, 2))
    k[0, :, 1] = 0.05
    b.set_natural_curvature(k)
    for _ in range(5):
        assert (b.step() == 0).all()
    b.reset(np.array([False, True, True]), from_env=0)
    x = b.positions().copy()
    np.testing.assert_array_equal(x[1], x[0])
    np.testing.assert_array_equal(x[2], x[0])
    assert (b.times() == b.times()[0]).all()
    with pytest.raises(ValueError, match="from_env"):
        b.reset(from_env=3)


def test_model_arrays_come_from_the_one_list(model):
    a = model.arrays()
    # every array of include/slender/stencils/model_arrays.h, shaped (count,) or (count, width)
    assert a["node_x0"].shape == (model.nnode, 3)
    np.testing.assert_array_equal(a["node_x0"], model.initial_positions)
    assert a["edge_node"].shape == (model.nedge, 2) and a["edge_node"].dtype == np.int32
    assert a["bend_EI"].shape == (model.nbend, 2)
    assert a["dof_fixed"].shape == (model.ndof,) and a["dof_fixed"].dtype == np.uint8
    np.testing.assert_array_equal(a["node_mass"], model.node_mass)
    assert a["tri_node"].shape == (0, 3)  # the snake has no shells
    with pytest.raises(ValueError):
        a["edge_l_bar"][0] = 1.0  # read-only: the model is immutable
    # a view of the model's memory, not a copy: the same address on a second call
    assert a["edge_l_bar"].ctypes.data == model.arrays()["edge_l_bar"].ctypes.data


def test_state_arrays(model):
    s = slender.Simulator(model)
    s.step()
    st = s.state_arrays()
    assert set(st) == {"q", "u", "a", "edge_d1", "edge_t", "bend_ref_twist", "sedge_tau0"}
    assert st["q"].shape == (model.ndof,) and st["edge_d1"].shape == (model.nedge, 3)
    np.testing.assert_array_equal(st["q"][: 3 * model.nnode].reshape(-1, 3), s.positions)


def test_checkpoint_save_and_load_continue_bit_for_bit(model, tmp_path):
    # issue 18: a checkpoint written after 5 steps and loaded into a fresh simulator: 5 more
    # steps end in the same bits as 10 uninterrupted ones; a damaged file is a ValueError
    whole = slender.Simulator(model)
    for _ in range(10):
        whole.step()
    first = slender.Simulator(model)
    for _ in range(5):
        first.step()
    path = str(tmp_path / "snake.slck")
    first.save(path)
    resumed = slender.Simulator(model)
    resumed.load(path)
    assert resumed.time == first.time
    for _ in range(5):
        resumed.step()
    np.testing.assert_array_equal(resumed.state_arrays()["q"], whole.state_arrays()["q"])
    np.testing.assert_array_equal(resumed.state_arrays()["u"], whole.state_arrays()["u"])
    with open(path, "r+b") as f:
        f.truncate(40)
    with pytest.raises(ValueError, match="cut short"):
        resumed.load(path)


@pytest.mark.parametrize("engine", ["per-env", "vectorized"])
def test_batch_environment_save_and_load(model, tmp_path, engine):
    # one environment of a batch saved after 5 steps and loaded into another batch's environment
    # 2 (the others elsewhere): 5 more steps end where the saved one was after 10, bit for bit;
    # the file is a Simulator's too; a bad environment is an error
    rng = np.random.default_rng(3)
    kappa = rng.uniform(-0.5, 0.5, size=(3, model.nbend, 2))
    whole = slender.BatchedSimulator(model, 3, engine=engine)
    whole.set_natural_curvature(kappa)
    path = str(tmp_path / "env.slck")
    for k in range(10):
        assert np.all(whole.step() == 0)
        if k == 4:
            whole.save(1, path)
    other = slender.BatchedSimulator(model, 3, engine=engine)
    other.set_natural_curvature(kappa[[0, 2, 1]])  # environment 2 takes environment 1's action
    for _ in range(7):
        assert np.all(other.step() == 0)
    before = other.positions()[0].copy()
    other.load(2, path)
    np.testing.assert_array_equal(other.positions()[0], before)
    assert other.times()[2] == pytest.approx(0.05)
    for _ in range(5):
        assert np.all(other.step() == 0)
    assert not np.array_equal(whole.positions()[1], whole.positions()[0])
    np.testing.assert_array_equal(other.positions()[2], whole.positions()[1])
    np.testing.assert_array_equal(other.velocities()[2], whole.velocities()[1])
    sim = slender.Simulator(model)
    sim.load(path)
    assert sim.time == pytest.approx(5 * 0.01)
    with pytest.raises(Exception, match="environment 3"):
        other.save(3, path)


def test_part_youngs_scale_per_environment(model):
    # a part's modulus times a factor as an action: environment 1 at twice the snake's modulus
    # curls differently from environment 0 under the same natural curvature; a Simulator takes
    # a factor too; bad factors are errors; clear_actions goes back to 1
    assert model.npart == 1 and model.part_names == ["body"]
    kappa = np.full((2, model.nbend, 2), 0.3)
    b = slender.BatchedSimulator(model, 2)
    b.set_natural_curvature(kappa)
    b.set_part_youngs_scale(np.array([[1.0], [2.0]]))
    for _ in range(5):
        assert np.all(b.step() == 0)
    assert not np.allclose(b.positions()[0], b.positions()[1])
    sim = slender.Simulator(model)
    sim.set_part_youngs_scale([2.0])
    sim.step()
    sim.set_part_youngs_scale(None)
    with pytest.raises(RuntimeError, match="environment 1, part 0 .'body'.* positive"):
        b.set_part_youngs_scale(np.array([[1.0], [0.0]]))
    with pytest.raises(ValueError, match="part_youngs_scale"):
        b.set_part_youngs_scale(np.ones((3, 1)))
    # the vectorized batch takes them too, with the per-environment batch's bits
    v = slender.BatchedSimulator(model, 2, engine="vectorized")
    w = slender.BatchedSimulator(model, 2)
    for batch in (v, w):
        batch.set_natural_curvature(kappa)
        batch.set_part_youngs_scale(np.array([[1.0], [2.0]]))
        for _ in range(5):
            assert np.all(batch.step() == 0)
    np.testing.assert_array_equal(v.positions(), w.positions())
    b.clear_actions()
    b.reset()
    b.set_natural_curvature(kappa)
    for _ in range(5):
        b.step()
    np.testing.assert_array_equal(b.positions()[0], b.positions()[1])


def test_chamber_pressures_as_actions():
    # Bartholdt's actuator with each environment's pressure in chamber 0 (Pa, in place of the
    # scene's step): environment 1 at 60 kPa bends away from the chamber (-x), environment 0 at
    # 0 does not; a Simulator with the same value takes the same steps, to the bit, on either
    # batch engine; bad requests raise
    model = slender.load_model(os.path.join(ROOT, "apps", "scenes", "bartholdt_actuator.json"))
    tip = int(np.argmin(model.initial_positions[:, 2]))  # the lowest node (the clamp's ghost
    sim = slender.Simulator(model)                       # node is the model's last)
    sim.set_load_value("pressure_chambers", 0, 6e4)
    for engine in ("per-env", "vectorized"):
        b = slender.BatchedSimulator(model, 2, engine=engine)
        b.set_load_values("pressure_chambers", 0, np.array([0.0, 6e4]))
        for _ in range(5):
            assert np.all(b.step() == 0)
        x = b.positions()
        assert x[1, tip, 0] < -1e-4 and abs(x[0, tip, 0]) < 1e-12
        if engine == "per-env":
            for _ in range(5):
                sim.step()
        np.testing.assert_array_equal(b.positions()[1], sim.positions)
        b.clear_actions()
    with pytest.raises(ValueError, match="load_values"):
        b.set_load_values("pressure_chambers", 0, np.zeros(3))
    with pytest.raises(RuntimeError, match="forces.pressure_chambers has 3 entries"):
        sim.set_load_value("pressure_chambers", 5, 1.0)
    with pytest.raises(RuntimeError, match="finite"):
        b.set_load_values("pressure_chambers", 2, np.array([0.0, np.nan]))
    sim.clear_load_values()


def test_tendon_tensions_as_actions():
    # a cantilever built in Python with a tendon through nodes given as a list (1 mm above the
    # axis: m1 is +z by the frame normal), each environment's tension an action: environment 1
    # pulled with 3 N bends up, environment 0 at 0 N sags under gravity alone, and a negative
    # tension is a slack cable (environment 0's bits); a Simulator with the same tension takes
    # the same steps, to the bit, on either batch engine; the family's rows are the model's
    b = slender.SceneBuilder("tendon")
    b.material("m", 1100, 2e7, 0.45)
    b.straight_rod("rod", [0, 0, 0], [0.1, 0, 0], 11, "m", b.circle(2e-3),
                   frame_normal=[0, 0, 1])
    b.clamp("rod", 0)
    b.gravity([0, 0, -9.81])
    b.family("tendons", part="rod", nodes=[0, 2, 4, 6, 8, 10], offset=1e-3, tension=0)
    b.integrator(type="implicit_euler", dt=5e-3, duration=1)
    model = b.build()
    rows = model.arrays()["tendons_int"]
    assert rows.shape == (5, 7)
    tip = 10
    sim = slender.Simulator(model)
    sim.set_load_value("tendons", 0, 3.0)
    for engine in ("per-env", "vectorized"):
        v = slender.BatchedSimulator(model, 3, engine=engine)
        v.set_load_values("tendons", 0, np.array([0.0, 3.0, -1.0]))
        for _ in range(5):
            assert np.all(v.step() == 0)
        x = v.positions()
        assert x[1, tip, 2] > x[0, tip, 2] + 1e-4
        np.testing.assert_array_equal(x[2], x[0])
        if engine == "per-env":
            for _ in range(5):
                sim.step()
        np.testing.assert_array_equal(x[1], sim.positions)
    with pytest.raises(RuntimeError, match="forces.tendons has 1 entries"):
        sim.set_load_value("tendons", 1, 1.0)
    bad = slender.SceneBuilder("bad")
    bad.material("m", 1100, 2e7, 0.45)
    bad.straight_rod("rod", [0, 0, 0], [0.1, 0, 0], 11, "m", bad.circle(2e-3))
    bad.family("tendons", part="rod", nodes=[3], offset=1e-3, tension=1)
    with pytest.raises(ValueError, match=r"forces.tendons\[0\].nodes: a tendon runs through 2"):
        bad.build()


def test_force_callback_spring_with_jacobian():
    # a spring from the cantilever's tip to a point above it, from Python: with its Jacobian
    # Newton takes as many iterations as without the spring, without it more, to the same
    # state; the tip hangs higher than without the spring; an error in the function is raised
    # and leaves the state as it was
    model = slender.load_model(os.path.join(ROOT, "bench", "scenes", "s6_cantilever101_e1e6.json"))
    tip = model.nnode - 1
    target = model.initial_positions[tip] + np.array([0.0, 0.0, 0.01])
    k = 5.0
    dofs = np.arange(3 * tip, 3 * tip + 3)

    def force(q):
        f = np.zeros_like(q)
        f[dofs] = -k * (q[dofs] - target)
        return f

    runs = {}
    for name, fn in [
        ("jacobian", lambda t, q, u: (force(q), dofs, dofs, np.full(3, -k), np.zeros(3))),
        ("no_jacobian", lambda t, q, u: force(q)),
        ("free", None),
    ]:
        sim = slender.Simulator(model)
        if fn is not None:
            sim.set_force(fn, symmetric=True)
        its = [sim.step() for _ in range(30)]
        assert all(r["status"] == "converged" for r in its)
        runs[name] = (sum(r["iterations"] for r in its), sim.positions.copy(), sim)
    assert runs["jacobian"][0] == runs["free"][0]  # a linear spring: Newton as without it
    assert runs["no_jacobian"][0] > runs["jacobian"][0] + 20
    np.testing.assert_allclose(runs["no_jacobian"][1], runs["jacobian"][1], rtol=0, atol=1e-9)
    assert runs["jacobian"][1][tip, 2] > runs["free"][1][tip, 2] + 1e-4  # pulled up

    sim = runs["jacobian"][2]

    def broken(t, q, u):
        raise RuntimeError("from the force")

    sim.set_force(broken)
    before = sim.positions.copy()
    with pytest.raises(RuntimeError, match="from the force"):
        sim.step()
    np.testing.assert_array_equal(sim.positions, before)  # the state stays
    sim.set_force(None)
    assert sim.step()["status"] == "converged"


def test_step_with_an_explicit_dt(model):
    # issue 18, fault 1: step(dt) converted the Python float with the GIL released (a crash)
    s = slender.Simulator(model)
    r = s.step(0.5 * model.dt)
    assert r["status"] == "converged"
    assert s.time == pytest.approx(0.5 * model.dt)
    r = s.step(np.float64(0.25 * model.dt))  # a numpy scalar too
    assert s.time == pytest.approx(0.75 * model.dt)
    with pytest.raises((TypeError, RuntimeError)):
        s.step("a string")
    assert s.time == pytest.approx(0.75 * model.dt)


def test_run_is_the_programs_loop_with_its_outputs(tmp_path):
    # Simulator.run: the loop of `slender run` from Python. The falling rod of rod_drop.json at
    # dt = 10 ms: 0.1 s ends where ten steps by hand end (to 1e-12: the loop's last step lands on
    # t = 0.1 exactly, a step shorter by the round-off of the nine before), with the same Newton
    # iterations and the scene's energies.csv written (the first state and every step: 11 rows);
    # a bad dt is a ValueError naming it
    model = slender.load_model(os.path.join(ROOT, "apps", "scenes", "rod_drop.json"), dt=0.01)
    by_hand = slender.Simulator(model)
    iters = sum(by_hand.step()["iterations"] for _ in range(10))
    sim = slender.Simulator(model)
    res = sim.run(out_dir=str(tmp_path / "run"), duration=0.1, every=1)
    assert res["ok"] and not res["interrupted"], res["message"]
    assert res["steps"] == 10 and res["sim_time"] == pytest.approx(0.1)
    assert res["newton_iters"] == iters and res["dt_halvings"] == 0
    np.testing.assert_allclose(sim.state_arrays()["q"], by_hand.state_arrays()["q"], rtol=1e-12,
                               atol=1e-15)
    energies = tmp_path / "run" / "energies.csv"
    assert str(energies) in res["files"]
    rows = energies.read_text().strip().splitlines()
    assert rows[0].startswith("time,") and len(rows) == 1 + 11
    quiet = slender.Simulator(model)
    res = quiet.run(duration=0.05, write_outputs=False)
    assert res["ok"] and res["steps"] == 5 and res["files"] == []
    with pytest.raises(ValueError, match="dt"):
        slender.Simulator(model).run(dt=0.0, write_outputs=False)


MIDEDGE_STRIP = {
    "name": "midedge_strip",
    "materials": [{"name": "m", "density": 1000, "youngs_modulus": 1e7, "poisson_ratio": 0.3}],
    "shells": [{"name": "strip", "material": "m", "thickness": 1e-3, "bending": "mid_edge",
                "mesh": {"type": "rectangle", "u": [0.1, 0, 0], "v": [0, 0.01, 0],
                         "edge_length": 5e-3}}],
    # the grid's nodes at x = 0 (20 cells along, 2 across): the clamp holds them and their xi
    "boundary": {"fixed_edges": [{"part": "strip", "nodes": [0, 21, 42]}]},
    "integrator": {"type": "implicit_euler", "dt": 2e-3, "duration": 0.1},
}


def test_midedge_curvature_actions_curl_a_strip():
    # per-environment natural curvature of a mid-edge shell: the components of a unit curvature
    # along x scaled per environment curl the strip down (positive: away from the normal +z), not
    # at all, or up; both engines agree (to round-off: their linear solvers differ); a wrong
    # shape is a ValueError
    model = slender.build_model(MIDEDGE_STRIP)
    assert model.nmid == model.ntri == 80
    unit = model.midedge_curvature_components([1, 0, 0])
    assert unit.shape == (model.nmid, 3)
    dome = model.midedge_curvature_components()  # the same curvature in every direction
    assert not np.allclose(dome, unit)
    c = np.stack([5.0 * unit, 0 * unit, -5.0 * unit])
    tips = []
    for engine in ("per-env", "vectorized"):
        b = slender.BatchedSimulator(model, 3, engine=engine)
        b.set_natural_midedge_curvature(c)
        for _ in range(5):
            assert np.all(b.step() == 0)
        tips.append(b.positions()[:, -1, 2].copy())
        with pytest.raises(ValueError, match="natural_midedge_curvature"):
            b.set_natural_midedge_curvature(np.zeros((3, model.nmid)))
    np.testing.assert_allclose(tips[0], tips[1], rtol=1e-9, atol=1e-15)
    assert tips[0][0] < -1e-4 and tips[0][1] == 0 and tips[0][2] > 1e-4


def test_natural_stretch_contracts_rods_and_series_drive_it(tmp_path):
    # a hanging cantilever contracted by its natural stretch: the Simulator's action, the
    # batch's per-environment action (both engines) and the scene's rod_stretch actuation read
    # from a CSV series (one column per edge, held after its last row) give the same state;
    # bad values are refused
    b = slender.SceneBuilder("cantilever")
    b.material("m", 1000, 1e6, 0.5)
    b.straight_rod("r", [0, 0, 0], [0.3, 0, 0], 16, "m", slender.SceneBuilder.circle(5e-3))
    b.fix_edges("r", [0])
    b.gravity([0, 0, -9.8])
    b.integrator(type="implicit_euler", dt=1e-3, duration=0.01)
    model = b.build()
    ne = model.nedge
    s = np.linspace(0.8, 1.0, ne)                  # a natural stretch per edge
    sim = slender.Simulator(model)
    sim.set_natural_stretch(s)
    for _ in range(5):
        assert sim.step()["ok"]
    tip = sim.positions[-1].copy()
    assert tip[0] < 0.295                          # contracting (0.27 at rest, later)
    for engine in ("per-env", "vectorized"):
        batch = slender.BatchedSimulator(model, 2, engine=engine)
        batch.set_natural_stretch(np.stack([s, np.ones(ne)]))
        for _ in range(5):
            assert np.all(batch.step() == 0)
        np.testing.assert_allclose(batch.positions()[0, -1], tip, rtol=1e-9, atol=1e-12)
        assert batch.positions()[1, -1, 0] > tip[0] + 0.01
        with pytest.raises(RuntimeError, match="natural stretch"):
            batch.set_natural_stretch(np.zeros((2, ne)))
        with pytest.raises(ValueError, match="natural_stretch"):
            batch.set_natural_stretch(np.ones((2, ne + 1)))
    with pytest.raises(RuntimeError, match="natural stretch"):
        sim.set_natural_stretch(-s)
    # the same natural stretch from a series: s - 1 on every row, from t = 0
    (tmp_path / "stretch.csv").write_text(
        "t," + ",".join(f"e{k}" for k in range(ne)) + "\n"
        + "0," + ",".join(repr(float(v) - 1) for v in s) + "\n")
    b.actuate("rod_stretch", "r", series="stretch.csv")
    series = slender.Simulator(b.build(base_dir=str(tmp_path)))
    for _ in range(5):
        assert series.step()["ok"]
    np.testing.assert_allclose(series.positions[-1], tip, rtol=1e-12, atol=1e-15)


ROD_PIN = os.path.join(ROOT, "apps", "scenes", "rod_pin.json")


def test_fix_release_and_twists_from_python():
    """fix / release on a simulator and per environment of a batch (the other environments
    untouched), twist angles and velocities set and read, bad indices as ValueError."""
    model = slender.load_model(ROD_PIN)
    mid = int(model.part_nodes("rod")[30])
    assert model.part_nodes(0)[30] == mid and len(model.part_edges("rod")) == model.nedge
    sim = slender.Simulator(model)
    for _ in range(10):
        sim.step()
    sim.fix_nodes([mid])
    np.testing.assert_array_equal(sim.fixed_dofs, [3 * mid, 3 * mid + 1, 3 * mid + 2])
    held = sim.positions[mid].copy()
    assert np.all(sim.velocities[mid] == 0)
    for _ in range(10):
        sim.step()
    np.testing.assert_array_equal(sim.positions[mid], held)
    sim.release_dofs([3 * mid, 3 * mid + 1, 3 * mid + 2])
    assert len(sim.fixed_dofs) == 0
    theta = 0.01 * np.arange(model.nedge)
    sim.set_twist_angles(theta)
    sim.set_twist_velocities(2 * theta)
    np.testing.assert_array_equal(sim.twist_angles, theta)
    np.testing.assert_array_equal(sim.twist_velocities, 2 * theta)
    for bad in ([model.ndof], [-1]):
        with pytest.raises(ValueError, match="out of range"):
            sim.fix_dofs(bad)
    with pytest.raises(ValueError, match="twist_angles"):
        sim.set_twist_angles(np.zeros(3))
    for engine in ("per-env", "vectorized"):
        b = slender.BatchedSimulator(model, 3, engine=engine)
        b.fix_nodes(1, [mid])
        b.step()
        assert list(b.fixed_dofs(1)) == [3 * mid, 3 * mid + 1, 3 * mid + 2]
        assert len(b.fixed_dofs(0)) == 0 and len(b.fixed_dofs(2)) == 0
        x = b.positions()
        assert x[1, mid, 2] == 0.0 and x[0, mid, 2] < 0  # env 1 caught at the start
        th = np.tile(theta, (3, 1)) * np.arange(1, 4)[:, None]
        b.set_twist_angles(th)
        np.testing.assert_array_equal(b.twist_angles(), th)
        b.set_twist_velocities(th)
        np.testing.assert_array_equal(b.twist_velocities(), th)
        b.release_nodes(1, [mid])
        assert len(b.fixed_dofs(1)) == 0
        with pytest.raises(ValueError, match="out of range"):
            b.fix_nodes(0, [model.nnode])


def test_strains_from_python():
    """every strain by name with its shape; a uniform twist shows in every bend's tau, the
    simulator's and the batch's alike"""
    model = slender.load_model(ROD_PIN)
    sim = slender.Simulator(model)
    sim.set_twist_angles(0.05 * np.arange(model.nedge))
    s = sim.strains()
    assert s["stretch"].shape == (model.nedge,)
    assert s["bend_twist"].shape == (model.nbend, 3)
    assert s["hinge_angle"].shape == (0,) and s["shape_operator"].shape == (0, 3, 3)
    np.testing.assert_allclose(np.abs(s["bend_twist"][:, 2]), 0.05, rtol=1e-12)
    np.testing.assert_allclose(s["stretch"], 0, atol=1e-14)
    b = slender.BatchedSimulator(model, 2, engine="vectorized")
    b.set_twist_angles(np.tile(0.05 * np.arange(model.nedge), (2, 1)))
    sb = b.strains()
    assert sb["bend_twist"].shape == (2, model.nbend, 3)
    np.testing.assert_array_equal(sb["bend_twist"][1], s["bend_twist"])


def test_reactions_balance_the_weight():
    """a clamped rod solved statically under gravity: the supports carry its weight (the
    reactions' sum is the total weight, to 1e-9), nothing at the free DOFs; a rod has no shell
    bending energy density"""
    b = slender.SceneBuilder("cantilever")
    b.material("m", 1200, 2e6, 0.4)
    b.straight_rod("r", [0, 0, 0], [0.2, 0, 0], 9, "m", slender.SceneBuilder.circle(4e-3))
    b.fix_edges("r", [0])
    b.gravity([0, 0, -9.8])
    b.integrator(type="static", dt=0.1, duration=1.0)
    model = b.build()
    sim = slender.Simulator(model)
    for _ in range(10):
        sim.step()
    r = sim.reactions()
    assert r.shape == (model.ndof,)
    held = np.zeros(model.ndof, bool)
    held[[0, 1, 2, 3, 4, 5, 3 * model.nnode]] = True  # the clamped edge's nodes and twist
    assert np.all(r[~held] == 0)
    weight = 9.8 * np.sum(model.node_mass)
    force = r[:3 * model.nnode].reshape(-1, 3).sum(axis=0)
    assert force[2] == pytest.approx(weight, rel=1e-9)
    assert abs(force[0]) < 1e-9 * weight and abs(force[1]) < 1e-9 * weight
    assert sim.shell_bending_energy_density().shape == (0,)


def test_batch_energies_from_python():
    """every environment's energies by kind (num_envs each), as a single Simulator given the
    same twist and step reports them; the vectorized and the per-environment batch alike"""
    model = slender.load_model(ROD_PIN)
    twists = np.vstack([np.zeros(model.nedge), 0.05 * np.arange(model.nedge)])
    singles = []
    for e in range(2):
        sim = slender.Simulator(model)
        sim.set_twist_angles(twists[e])
        sim.step()
        singles.append(sim.energies())
    for engine in ("vectorized", "per-env"):
        b = slender.BatchedSimulator(model, 2, engine=engine)
        b.set_twist_angles(twists)
        b.step()
        en = b.energies()
        assert set(en) == {"kinetic", "stretch", "bend", "twist", "gravity", "user", "load",
                           "total"}
        assert all(v.shape == (2,) for v in en.values())
        assert en["twist"][1] > 1e3 * max(en["twist"][0], 1e-30)  # the second was twisted
        for e in range(2):
            for k, v in singles[e].items():
                assert en[k][e] == pytest.approx(v, rel=1e-9, abs=1e-15), (engine, e, k)


def test_scene_builder_events_and_initial_twist():
    """the Python SceneBuilder writes boundary events and initial twists the reader takes"""
    b = slender.SceneBuilder("pin")
    b.material("rubber", 1100, 5e6, 0.5)
    b.straight_rod("rod", (0, 0, 0), (0.1, 0, 0), 11, "rubber", b.circle(0.002))
    b.initial_twist("rod", angle=0.2, velocity=[1.0] * 10)
    b.event(0.003, fix={"fixed_nodes": [{"part": "rod", "nodes": [5]}]})
    b.gravity((0, 0, -9.81)).integrator(dt=1e-3)
    model = b.build()
    sim = slender.Simulator(model)
    np.testing.assert_array_equal(sim.twist_angles, 0.2)
    np.testing.assert_array_equal(sim.twist_velocities, 1.0)
    for _ in range(3):
        sim.step()
    assert len(sim.fixed_dofs) == 0
    sim.step()
    assert list(sim.fixed_dofs) == [15, 16, 17]
