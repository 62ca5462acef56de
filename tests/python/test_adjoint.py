"""Gradients through time from Python (docs/gradients.md): slender.Rollout's gradient of a loss of
a rod cantilever's trajectory against central differences of the rollout (actions and
parameters), the arrays' shapes, bad input as ValueError; and slender.autograd's
torch.autograd.Function gives the same gradient through loss.backward() (skipped without
PyTorch). Tolerances: the C++ suite's (tests/physics/adjoint_test.cpp): tight Newton
tolerances, central differences with h = 1e-4 of the parameter's scale, 1e-6 relative."""

import re

import numpy as np
import pytest

import slender

N = 12


TIGHT = {"abs_tol": 1e-14, "rel_tol": 1e-30, "step_tol": 1e-14, "max_iters": 60}


def cantilever(more=None):
    """the rod cantilever; `more(b)` adds to its scene builder last"""
    b = slender.SceneBuilder("cantilever")
    b.material("m", 1200, 2e6, 0.4)
    b.straight_rod("r", [0, 0, 0], [0.2, 0.01, 0], 7, "m", slender.SceneBuilder.circle(4e-3))
    b.fix_edges("r", [0])
    b.gravity([0.5, 2.0, -9.8])
    b.integrator(type="implicit_euler", dt=5e-3, newton=TIGHT)
    if more:
        more(b)
    return b.build()


def check_argument(model, name, value, h, seed, steps=N):
    """The gradient by Rollout.run's argument `name` at `value` against central differences
    along a random direction (step h), 1e-6 relative; the gradient."""
    wq, wu = loss_weights(model)
    wq, wu = wq[:steps + 1], wu[:steps + 1]
    roll = slender.Rollout(model)
    roll.run(steps, **{name: value})
    g = roll.gradient(wq, wu)[name]
    assert np.shape(g) == np.shape(value)
    d = np.random.default_rng(seed).uniform(-1, 1, np.shape(value))

    def L(v):
        return loss(*slender.Rollout(model).run(steps, **{name: v}), wq, wu)

    fd = (L(value + h * d) - L(value - h * d)) / (2 * h)
    assert np.sum(g * d) == pytest.approx(fd, rel=1e-6)
    assert np.any(g != 0)
    return g


def loss_weights(model, seed=3):
    rng = np.random.default_rng(seed)
    return rng.uniform(-1, 1, (N + 1, model.ndof)), 0.01 * rng.uniform(-1, 1, (N + 1, model.ndof))


def loss(q, u, wq, wu):
    return float(np.sum(wq * q) + np.sum(wu * u))


def test_rollout_gradient_matches_central_differences():
    model = cantilever()
    wq, wu = loss_weights(model)
    kappa = np.zeros((N, model.nbend, 2))
    kappa[:, :, 0] = 0.02
    forces = np.zeros((N, model.nnode, 3))
    forces[:, -1, 1] = 1e-3
    roll = slender.Rollout(model)
    q, u = roll.run(N, kappa_bar=kappa, forces=forces, youngs_scale=1.2)
    assert q.shape == (N + 1, model.ndof) and u.shape == (N + 1, model.ndof)
    g = roll.gradient(wq, wu)
    assert g["kappa_bar"].shape == (N, model.nbend, 2)
    assert g["forces"].shape == (N, model.nnode, 3)
    assert g["q0"].shape == (model.ndof,)

    def L(**kw):
        args = dict(kappa_bar=kappa, forces=forces, youngs_scale=1.2)
        args.update(kw)
        return loss(*slender.Rollout(model).run(N, **args), wq, wu)

    rng = np.random.default_rng(7)
    d = rng.uniform(-1, 1, kappa.shape)
    h = 1e-4
    fd = (L(kappa_bar=kappa + h * d) - L(kappa_bar=kappa - h * d)) / (2 * h)
    assert np.sum(g["kappa_bar"] * d) == pytest.approx(fd, rel=1e-6)
    d = rng.uniform(-1, 1, forces.shape)
    fd = (L(forces=forces + h * d) - L(forces=forces - h * d)) / (2 * h)
    assert np.sum(g["forces"] * d) == pytest.approx(fd, rel=1e-6)
    fd = (L(youngs_scale=1.2 + h) - L(youngs_scale=1.2 - h)) / (2 * h)
    assert g["youngs_scale"] == pytest.approx(fd, rel=1e-6)


def test_hinge_angles_and_fixed_targets_are_actions():
    # the shells' natural hinge angles (or mid-edge curvatures) and the fixed DOFs' targets per
    # step, each against central differences (a clamped plate folded by its hinges' natural
    # angles or its triangles' natural curvatures; the cantilever's clamp raised and turned
    # along a path)
    b = slender.SceneBuilder("plate")
    b.material("m", 1000, 1e6, 0.3)
    b.rectangle_shell("p", [0.04, 0, 0], [0, 0.03, 0], 0.01, "m", 1e-3)
    b.fix_nodes("p", [0, 1])
    b.gravity([0.3, -0.2, -9.8])
    b.integrator(type="implicit_euler", dt=0.01, newton=TIGHT)
    plate = b.build()
    check_argument(plate, "phi_bar", np.full((6, plate.nhinge), 0.05), 1e-5, 5, steps=6)
    # the same plate with mid-edge bending, folded by its triangles' natural curvatures
    b = slender.SceneBuilder("plate")
    b.material("m", 1000, 1e6, 0.3)
    b.rectangle_shell("p", [0.04, 0, 0], [0, 0.03, 0], 0.01, "m", 1e-3, bending="mid_edge")
    b.fix_nodes("p", [0, 1])
    b.gravity([0.3, -0.2, -9.8])
    b.integrator(type="implicit_euler", dt=0.01, newton=TIGHT)
    midedge = b.build()
    assert midedge.nmid > 0
    check_argument(midedge, "midedge_kappa_bar", np.full((6, midedge.nmid, 3), 2.0), 1e-4, 7,
                   steps=6)

    model = cantilever()
    fixed = np.asarray(model.fixed_dofs)
    x0 = model.initial_positions.ravel()  # (the twists start at 0)
    start = np.array([x0[k] if k < x0.size else 0.0 for k in fixed])
    t = model.dt * np.arange(1, N + 1)
    # the clamp raised at 0.2 m/s and turned at 2 rad/s
    rate = np.where(fixed >= x0.size, 2.0, np.where(fixed % 3 == 2, 0.2, 0.0))
    targets = start[None, :] + t[:, None] * rate[None, :]
    check_argument(model, "fixed_targets", targets, 1e-7, 6)
    # the rod edges' natural stretch (muscle-like contraction of the cantilever's edges)
    check_argument(model, "stretch_bar", np.full((N, model.nedge), 0.98), 1e-6, 8)
    with pytest.raises(ValueError, match="fixed_targets"):
        slender.Rollout(model).run(N, fixed_targets=targets[:, :2])


def test_actuator_loads_are_actions():
    # a tendon's tension and a follower wrench's factor per step (model.load_names' order)
    # against central differences
    def pulled(b):
        b.family("tendons", part="r", offset=[3e-3], angle=[0.7], tension=0.05)
        b.family("wrenches", part="r", frame="follower", force=[2e-3, 0, 0], moment=[0, 1e-4, 0])

    model = cantilever(pulled)
    assert sorted(model.load_names) == ["tendons[0]", "wrenches[0]"]
    loads = np.ones((N, 2))
    loads[:, model.load_names.index("tendons[0]")] = np.linspace(0.1, 0.4, N)
    check_argument(model, "loads", loads, 1e-4, 8)
    with pytest.raises(ValueError, match="loads"):
        slender.Rollout(model).run(N, loads=loads[:, :1])


def test_kelvin_voigt_damping_and_its_scale():
    # a cantilever with Kelvin-Voigt damping (eta = 2 kPa s): the gradient by the retardation
    # times' scale against central differences
    model = cantilever(lambda b: b.kelvin_voigt(2e3))
    check_argument(model, "kelvin_voigt_scale", 1.2, 1e-4, 9)


def test_checkpointing_and_bad_input():
    model = cantilever()
    wq, wu = loss_weights(model)
    a = slender.Rollout(model)
    a.run(N)
    b = slender.Rollout(model, checkpoint_every=4)
    b.run(N)
    ga, gb = a.gradient(wq, wu), b.gradient(wq, wu)
    assert b.recomputed_steps == N - 3 and a.recomputed_steps == 0
    np.testing.assert_array_equal(ga["q0"], gb["q0"])
    np.testing.assert_array_equal(ga["kappa_bar"], gb["kappa_bar"])
    with pytest.raises(ValueError, match="kappa_bar"):
        a.run(N, kappa_bar=np.zeros((N, model.nbend)))
    with pytest.raises(ValueError, match="dL_dq"):
        a.gradient(np.zeros((N, model.ndof)))


def test_cuda_backend_gradient():
    # backend="cuda": on a machine without a device a clear error; with one, the CPU's gradient
    # within V8's figures (1e-9 relative to the largest entry)
    model = cantilever()
    if slender.cuda_device_count() == 0:
        with pytest.raises(RuntimeError, match="CUDA backend"):
            slender.Rollout(model, backend="cuda")
        with pytest.raises(RuntimeError, match="CUDA backend"):
            slender.BatchRollout(model, 2, backend="cuda")
        return
    wq, wu = loss_weights(model)
    kappa = np.full((N, model.nbend, 2), 0.01)
    grads = []
    for backend in ("cpu", "cuda"):
        roll = slender.Rollout(model, backend=backend)
        roll.run(N, kappa_bar=kappa)
        grads.append(roll.gradient(wq, wu))
    for key in ("q0", "u0", "kappa_bar", "tau_bar", "forces"):
        a, b = np.asarray(grads[0][key]), np.asarray(grads[1][key])
        assert np.max(np.abs(a - b)) <= 1e-9 * np.max(np.abs(a)), key


def test_torch_autograd_gives_the_adjoint_gradient():
    torch = pytest.importorskip("torch")
    from slender.autograd import rollout

    model = cantilever()
    wq, wu = loss_weights(model)
    forces = torch.zeros((N, model.nnode, 3), dtype=torch.float64, requires_grad=True)
    ys = torch.tensor(1.1, dtype=torch.float64, requires_grad=True)
    q, u = rollout(model, N, forces=forces, youngs_scale=ys)
    L = (torch.from_numpy(wq) * q).sum() + (torch.from_numpy(wu) * u).sum()
    L.backward()
    roll = slender.Rollout(model)
    roll.run(N, forces=np.zeros((N, model.nnode, 3)), youngs_scale=1.1)
    g = roll.gradient(wq, wu)
    np.testing.assert_array_equal(forces.grad.numpy(), g["forces"])
    assert ys.grad.item() == g["youngs_scale"]
    # the actuators' loads and the fixed DOFs' targets as tensors: the same bits as Rollout's
    pulled = cantilever(lambda b: b.family("tendons", part="r", offset=[3e-3], tension=0.05))
    wq, wu = loss_weights(pulled)
    loads = torch.full((N, 1), 0.2, dtype=torch.float64, requires_grad=True)
    x0 = pulled.initial_positions.ravel()
    start = [x0[k] if k < x0.size else 0.0 for k in pulled.fixed_dofs]
    targets = torch.tensor([start] * N, dtype=torch.float64, requires_grad=True)
    q, u = rollout(pulled, N, loads=loads, fixed_targets=targets)
    L = (torch.from_numpy(wq) * q).sum() + (torch.from_numpy(wu) * u).sum()
    L.backward()
    roll = slender.Rollout(pulled)
    roll.run(N, loads=loads.detach().numpy(), fixed_targets=targets.detach().numpy())
    g = roll.gradient(wq, wu)
    np.testing.assert_array_equal(loads.grad.numpy(), g["loads"])
    np.testing.assert_array_equal(targets.grad.numpy(), g["fixed_targets"])
    assert np.any(g["loads"] != 0) and np.any(g["fixed_targets"] != 0)


def test_batch_rollout_gives_each_environment_its_own_gradient():
    """slender.BatchRollout: each environment's states and gradient as a single Rollout's with
    its inputs (bit for bit), through numpy and through torch"""
    model = cantilever()
    B = 3
    wq, wu = loss_weights(model)
    rng = np.random.default_rng(11)
    forces = 1e-3 * rng.uniform(-1, 1, (B, N, model.nnode, 3))
    ys = np.array([1.0, 1.2, 0.9])
    roll = slender.BatchRollout(model, B)
    assert roll.num_envs == B
    q, u = roll.run(N, forces=forces, youngs_scale=ys)
    assert q.shape == (B, N + 1, model.ndof)
    g = roll.gradient(np.stack([wq] * B), np.stack([wu] * B))
    assert g["forces"].shape == (B, N, model.nnode, 3) and g["youngs_scale"].shape == (B,)
    for e in range(B):
        one = slender.Rollout(model)
        qe, _ = one.run(N, forces=forces[e], youngs_scale=ys[e])
        np.testing.assert_array_equal(q[e], qe)
        ge = one.gradient(wq, wu)
        np.testing.assert_array_equal(g["forces"][e], ge["forces"])
        np.testing.assert_array_equal(g["q0"][e], ge["q0"])
        assert g["youngs_scale"][e] == ge["youngs_scale"]
    assert not np.array_equal(g["forces"][1], g["forces"][0])
    with pytest.raises(ValueError, match="forces"):
        roll.run(N, forces=forces[0])
    torch = pytest.importorskip("torch")
    from slender.autograd import batch_rollout

    f = torch.tensor(forces, requires_grad=True)
    y = torch.tensor(ys, requires_grad=True)
    qt, ut = batch_rollout(model, B, N, forces=f, youngs_scale=y)
    L = (torch.from_numpy(np.stack([wq] * B)) * qt).sum() + \
        (torch.from_numpy(np.stack([wu] * B)) * ut).sum()
    L.backward()
    np.testing.assert_array_equal(f.grad.numpy(), g["forces"])
    np.testing.assert_array_equal(y.grad.numpy(), g["youngs_scale"])


def _example(name):
    """The module of apps/examples/NAME.py (the examples are scripts, not a package)."""
    import importlib
    import os
    import sys

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    sys.path.insert(0, os.path.join(root, "apps", "examples"))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.pop(0)


def test_the_snakes_wave_learned_by_gradient_beats_cem():
    # issue 51, item 4 (apps/examples/snake_gradient.py): the adjoint's dR/dkappa_bar through the
    # wave's closed form is dR/dtheta (against central differences of the reward: 1e-5
    # relative, the default Newton tolerances'); ascending it from CEM's starting mean reaches a
    # faster crawl in 8 rollouts (and 8 adjoint sweeps) than CEM's best in its 8 rollouts
    sg = _example("snake_gradient")
    sw = sg.SnakeWave(seconds=0.5)
    theta = np.array([8.0, 0.5, -1.0])
    r, g = sw.reward(theta, gradient=True)
    assert r > 0
    for k, h in enumerate([1e-4, 1e-6, 1e-5]):
        e = np.zeros(3)
        e[k] = h
        fd = (sw.reward(theta + e) - sw.reward(theta - e)) / (2 * h)
        assert g[k] == pytest.approx(fd, rel=1e-5), k
    best_grad, best_cem, ga, ce = sg.compare(rollouts=8, seconds=0.5, population=4, log=None)
    assert len(ga) == 8 and len(ce) == 2
    assert best_grad > best_cem > 0


def test_real2sim_recovers_the_natural_curvature_within_the_noise():
    # issue 51, item 3 (apps/examples/real2sim.py, DisMech's Alg. 1 with exact gradients): the
    # loss's gradient in the profile's coefficients equals central differences (1e-6); fitted to
    # three poses with 0.2 mm of noise, the profile comes back within 2 % of the truth and the
    # shapes' residual is the noise's size (0.8 to 1.05 sigma: no over- or under-fitting)
    r2s = _example("real2sim")
    limb = r2s.Limb()
    truth = np.array(r2s.TRUTH)
    kappa_true = limb.profile(truth)[0]
    clean = limb.poses(kappa_true)
    sigma = 2e-4
    noisy = clean + np.random.default_rng(1).normal(0, sigma, clean.shape)
    c0 = 0.8 * truth
    L, g = limb.loss(c0, noisy, gradient=True)
    _, g_fd = limb.loss_fd(c0, noisy)
    np.testing.assert_allclose(g, g_fd, rtol=1e-6)
    c, iters = r2s.lbfgs(lambda k: limb.loss(k, noisy, gradient=True), c0)
    kappa = limb.profile(c)[0]
    assert np.abs(kappa - kappa_true).max() < 0.02 * np.abs(kappa_true).mean(), c
    rms = np.sqrt(np.mean((limb.poses(kappa) - noisy) ** 2))
    assert 0.8 * sigma < rms < 1.05 * sigma


@pytest.mark.parametrize("damping", ["mass", "kelvin-voigt"])
def test_system_id_recovers_the_modulus_and_damping_within_the_noise(damping):
    # issue 51, item 3 (apps/examples/system_id.py): Young's modulus and the damping of a
    # released cantilever from its tip trajectory, the damping mass-proportional (alpha) or
    # Kelvin-Voigt (the retardation time's scale, the adjoint's kelvin_voigt_scale). The
    # adjoint's gradient in the unknowns equals central differences (1e-6); from the noise-free
    # trajectory the fit returns the truth (1e-5); from one with 0.2 mm of noise each estimate
    # lies within 3 of its Gauss-Newton standard errors of the truth, and the residual is the
    # noise's size (0.85 to 1.05 sigma)
    sid = _example("system_id")
    spec = sid.Specimen(damping)
    clean = spec.tip(spec.theta(spec.truth))
    sigma = 2e-4
    noisy = clean + np.random.default_rng(1).normal(0, sigma, clean.shape)
    start = spec.theta(spec.start)
    _, g = spec.loss(start, noisy, gradient=True)
    _, g_fd = spec.loss_fd(start, noisy)
    np.testing.assert_allclose(g, g_fd, rtol=1e-6)
    th_clean, *_ = sid.fit(spec, clean)
    np.testing.assert_allclose(spec.estimate(th_clean), spec.truth, rtol=1e-5)
    theta, *_ = sid.fit(spec, noisy)
    est, se = spec.estimate(theta), spec.standard_errors(theta, sigma)
    assert np.all(np.abs(est - np.array(spec.truth)) < 3 * se), (est, se)
    rms = np.sqrt(np.mean((spec.tip(theta) - noisy) ** 2))
    assert 0.85 * sigma < rms < 1.05 * sigma


def test_real2sim_reads_measured_poses_and_names_bad_lines(tmp_path):
    # issue 51, item 3: poses a user measured, as a CSV (pose,node,x,y,z): written and read back
    # to the same numbers (9 digits), in any line order; a bad file is an error naming the file,
    # the line and the field
    r2s = _example("real2sim")
    rng = np.random.default_rng(3)
    poses = rng.normal(0, 0.1, (len(r2s.POSE_FORCES), r2s.NODES, 3))
    path = tmp_path / "poses.csv"
    r2s.write_poses(path, poses)
    lines = path.read_text().splitlines()
    path.write_text("\n".join([lines[0]] + lines[:0:-1]) + "\n")  # the lines reversed
    np.testing.assert_allclose(r2s.read_poses(path), poses, rtol=1e-8, atol=1e-12)
    cases = [
        ("pose,node,x,y\n", ":1: the header"),
        ("pose,node,x,y,z\n0,0,1,2\n", ":2: 4 fields"),
        ("pose,node,x,y,z\n9,0,1,2,3\n", ":2: pose '9' is not an index below 3"),
        ("pose,node,x,y,z\n0,-1,1,2,3\n", ":2: node '-1' is not an index"),
        ("pose,node,x,y,z\n0,0,1,nan,3\n", ":2: y 'nan' is not a finite number"),
        ("pose,node,x,y,z\n0,0,1,2,3\n0,0,1,2,3\n", ":3: pose 0 node 0 is given twice"),
        ("pose,node,x,y,z\n0,0,1,2,3\n", ": pose 0 node 1 is missing"),
    ]
    for text, message in cases:
        path.write_text(text)
        with pytest.raises(ValueError, match=re.escape(str(path) + message)):
            r2s.read_poses(path)


def test_the_shove_that_stops_a_rod_at_a_mark_through_frictional_contact():
    # apps/examples/contact_gradient.py: Newton on the travel with the adjoint's derivative through
    # rod-rod contact with friction reaches the mark; the derivative agrees with central
    # differences (1e-6), and the shove with a rigid block's Coulomb law sqrt(2 mu g s) (within
    # 1 %: measured 0.5 %; the rod sags over the rails and the law is regularized)
    import importlib.util
    import os
    path = os.path.join(os.path.dirname(__file__), "..", "..", "apps", "examples",
                        "contact_gradient.py")
    spec = importlib.util.spec_from_file_location("contact_gradient", path)
    ex = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ex)
    r = ex.main(["--mark", "0.02"])
    assert abs(r["travel"] - 0.02) < 1e-6
    assert r["iterations"] <= 5
    assert r["ds"] == pytest.approx(r["fd"], rel=1e-6)
    assert r["v0"] == pytest.approx(r["coulomb"], rel=0.01)


@pytest.mark.parametrize("settings", [dict(type="implicit_midpoint", energy_consistent=False),
                                      dict(type="newmark"),
                                      dict(type="newmark", beta=0.3025, gamma=0.6)])
def test_midpoint_and_newmark_rollouts(settings):
    # the midpoint rule (its pointwise stretching: the secant's round-off on this stiff rod is
    # beyond 1e-6, tests/physics/adjoint_test.cpp checks the secant elsewhere) and Newmark,
    # trapezoidal and dissipative: the forces, the natural curvatures, the density and, for Newmark, the initial
    # acceleration its predictor reads (the rollout's a0; a Simulator's consistent one from its
    # state_arrays) against central differences; the rollout from the Simulator's start is the
    # Simulator's run
    def more(b):
        b.integrator(**settings)

    model = cantilever(more)
    sim = slender.Simulator(model)
    a0 = np.array(sim.state_arrays()["a"]).ravel()
    q, _ = slender.Rollout(model).run(N, a0=a0)
    for _ in range(N):
        sim.step()
    assert np.abs(q[-1][: 3 * model.nnode] - sim.positions.ravel()).max() < 1e-13
    forces = np.zeros((N, model.nnode, 3))
    forces[:, -1, 1] = 1e-3
    check_argument(model, "forces", forces, 1e-4, 21)
    check_argument(model, "kappa_bar", np.full((N, model.nbend, 2), 0.01), 1e-5, 22)
    check_argument(model, "density_scale", 0.9, 1e-4, 24)
    if settings["type"] == "newmark":
        check_argument(model, "a0", a0, 1e-3, 23)
    else:
        roll = slender.Rollout(model)
        roll.run(N, a0=a0)
        assert not np.any(roll.gradient(*loss_weights(model))["a0"])
