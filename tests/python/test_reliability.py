"""Bad values refused up front (issue 49): a state that is not finite loaded into one
environment, a reset mask of floats (a NaN would count as True), a from_env that is not an
index, external forces with NaN or inf, a NaN in the snake's action (before the phase moves
on), and a batch too large for the memory (before anything is allocated); each error names the
argument."""

import os
import struct
import time

import numpy as np
import pytest

import slender
from slender import snake

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SNAKE = os.path.join(ROOT, "apps", "scenes", "snake.json")
HEADER = 10 + 4 + 8  # magic, format version, checksum (host/record/checkpoint.cpp)


@pytest.fixture(scope="module")
def model():
    return slender.load_model(SNAKE)


def fnv1a(data):
    h = 1469598103934665603
    for c in data:
        h = ((h ^ c) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return h


def test_a_nan_state_is_not_loaded_into_an_environment(model, tmp_path):
    b = slender.BatchedSimulator(model, 3)
    b.step()
    path = str(tmp_path / "env.slck")
    b.save(1, path)
    with open(path, "rb") as f:
        data = bytearray(f.read())
    # the coordinate of largest size (its bytes unique in the file) made NaN, and the checksum
    # made right again: the file is intact but its state is not finite
    x = b.positions()[1].ravel()
    x0 = struct.pack("<d", x[np.argmax(np.abs(x))])
    at = data.index(x0, HEADER)
    data[at:at + 8] = struct.pack("<d", float("nan"))
    data[14:22] = struct.pack("<Q", fnv1a(bytes(data[HEADER:])))
    with open(path, "wb") as f:
        f.write(bytes(data))
    before = b.positions().copy()
    with pytest.raises(ValueError, match=r"q.*not finite"):
        b.load(2, path)
    np.testing.assert_array_equal(b.positions(), before)  # nothing changed
    b.reset(np.array([False, False, True]), from_env=2)  # so nothing NaN to copy either
    assert np.isfinite(b.positions()).all()


def test_reset_masks_and_from_env_are_checked(model):
    b = slender.BatchedSimulator(model, 3)
    b.step()
    for bad in (np.array([np.nan, 0.0, 0.0]), [0.0, 1.0, 0.5]):
        with pytest.raises(TypeError, match="mask must be booleans"):
            b.reset(bad)
    with pytest.raises(ValueError, match="mask.*environment 1's entry is 2"):
        b.reset(np.array([0, 2, 0]))
    assert (b.times() > 0).all()  # no environment was reset
    b.reset(np.array([0, 1, 0]))  # integers 0 and 1 are taken
    assert b.times()[1] == 0 and b.times()[0] > 0
    with pytest.raises(TypeError, match=r"from_env must be an environment index.*1\.7"):
        b.reset(from_env=1.7)
    with pytest.raises(TypeError, match="from_env"):
        b.reset(from_env=True)
    b.reset(from_env=np.int64(0))  # a numpy integer is an index


def test_external_forces_must_be_finite(model):
    s = slender.Simulator(model)
    f = np.zeros((model.nnode, 3))
    for v in (np.nan, np.inf, -np.inf):
        f[7, 2] = v
        with pytest.raises(ValueError, match="forces: node 7, component 2"):
            s.set_external_forces(f)
    f[7, 2] = 1e-3
    s.set_external_forces(f)
    s.step()


def test_a_nan_action_is_refused_before_the_snake_moves_on():
    env = snake.SnakeCrawlVectorEnv(2, control_dt=0.02, episode_seconds=0.2)
    env.reset(seed=0)
    a = np.array([[0.5, 0.5], [0.5, np.nan]])
    phase = env.phase.copy()
    with pytest.raises(ValueError, match=r"environment 1, component \(1,\)"):
        env.step(a)
    np.testing.assert_array_equal(env.phase, phase)
    a[1, 1] = 0.5
    obs, reward, terminated, truncated, info = env.step(a)  # and the next step goes on
    assert np.isfinite(obs).all() and not info["failed"].any()


def test_errors_carry_no_build_paths_or_check_text(model):
    # issue 49, item 10: a failed internal check reached Python as "/.../batched_simulator.cpp:137:
    # check failed (std::isfinite(v[i])): natural curvature value 208 is not finite"
    b = slender.BatchedSimulator(model, 2)
    kappa = np.zeros((2, model.nbend, 2))
    kappa[1, 4, 0] = np.nan
    with pytest.raises(RuntimeError) as e:
        b.set_natural_curvature(kappa)
    msg = str(e.value)
    assert "environment 1, value 8" in msg and ".cpp" not in msg and "check failed" not in msg
    with pytest.raises(RuntimeError) as e:
        b.set_part_youngs_scale(np.zeros((2, model.npart)))
    assert ".cpp" not in str(e.value) and "check failed" not in str(e.value)


def test_an_absurd_natural_curvature_is_refused_up_front(model):
    # issue 49, item 5: -1e308 ran 38 s into a failed step; the bound is a turn of 0.9 pi at a
    # node, |kappa| <= 2 tan(0.45 pi) = 12.63 for a stencil's discrete curvature
    for engine in ("per-env", "vectorized"):
        b = slender.BatchedSimulator(model, 2, engine=engine)
        kappa = np.zeros((2, model.nbend, 2))
        kappa[0, 7] = (-1e308, 0.0)
        with pytest.raises(RuntimeError, match=r"environment 0, stencil 7 has \(-1e\+308, 0\)"):
            b.set_natural_curvature(kappa)
        kappa[0, 7] = (9.0, 9.0)  # norm 12.73
        with pytest.raises(RuntimeError, match="at most 12.6"):
            b.set_natural_curvature(kappa)
        kappa[0, 7] = (9.0, 8.8)  # norm 12.59: taken
        b.set_natural_curvature(kappa)
        b.step()  # and the batch steps on


def test_two_threads_on_one_simulator_take_turns(model):
    # issue 49, item 1: two threads stepping one Simulator crashed (SIGSEGV, a corrupted heap)
    # or lost steps; now each call takes the object's lock: 2 x 200 steps from two threads end
    # in the same bits as 400 steps from one (every step of the snake has the same dt, so the
    # order of the calls does not matter), and the same for a batch. (On the snake the unlocked
    # code happened to pass this; test_a_second_thread_waits_for_the_first fails on it.)
    import threading

    def in_threads(obj, steps, n=2):
        go = threading.Barrier(n)

        def work():
            go.wait()
            for _ in range(steps):
                obj.step()

        ts = [threading.Thread(target=work) for _ in range(n)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()

    one, two = slender.Simulator(model), slender.Simulator(model)
    for _ in range(400):
        one.step()
    in_threads(two, 200)
    assert two.time == pytest.approx(one.time)
    np.testing.assert_array_equal(two.state_arrays()["q"], one.state_arrays()["q"])
    b1, b2 = slender.BatchedSimulator(model, 2), slender.BatchedSimulator(model, 2)
    for _ in range(60):
        b1.step()
    in_threads(b2, 30)
    np.testing.assert_array_equal(b2.positions(), b1.positions())
    np.testing.assert_array_equal(b2.times(), b1.times())


def test_a_second_thread_waits_for_the_first(model):
    # thread A is inside step() (its force callback waits on an event); thread B's call to the
    # same simulator waits until A's step has returned, while the main thread runs on (the GIL
    # is not held by the waiting threads); a callback may call its own simulator (re-entrant)
    import threading

    s = slender.Simulator(model)
    inside, release, order = threading.Event(), threading.Event(), []

    def force(t, q, u):
        order.append(("callback reads time", s.time))  # re-entrant: the same thread
        inside.set()
        release.wait(10)
        return np.zeros_like(q)

    s.set_force(force)
    a = threading.Thread(target=lambda: (s.step(), order.append("A done")))
    b = threading.Thread(target=lambda: order.append(("B read time", s.time)))
    a.start()
    assert inside.wait(10)
    b.start()
    b.join(0.3)
    assert b.is_alive()  # B waits for A's step
    release.set()
    a.join(10)
    b.join(10)
    assert order[0] == ("callback reads time", 0.0)
    assert order[1] == "A done" and order[2] == ("B read time", s.time) and s.time > 0


def gib_text(b):
    """The size as the refusal writes it (host/runtime/memory_budget.cpp, format_bytes)."""
    units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"]
    u = 0
    while b >= 1024 and u < 5:
        b, u = b / 1024, u + 1
    return f"{b:.0f} {units[u]}" if u == 0 or b >= 100 else f"{b:.1f} {units[u]}"


def test_a_batch_too_large_for_the_memory_is_refused_up_front(model, monkeypatch):
    # issue 49, item 2: BatchedSimulator(model, 10**6) had no check; under an 8 GiB limit the
    # per-environment engine aborted ("cannot allocate memory for thread-local data", rc 127) and
    # the vectorized one raised MemoryError after 29 s of allocation. Now the batch's memory is
    # estimated first and a batch that does not fit is a MemoryError at once, naming num_envs,
    # the estimate, the memory available and the most environments that fit.
    monkeypatch.setenv("SLENDER_MEMORY_LIMIT", "8G")
    for engine in ("per-env", "vectorized"):
        est = slender.BatchedSimulator.memory_estimate(model, 10**6, engine=engine)
        assert est["available"] == 8 * 2**30 and est["host"] > est["available"]
        fit = int((est["available"] - est["host_fixed"]) // est["host_per_env"])
        t0 = time.perf_counter()
        with pytest.raises(MemoryError) as e:
            slender.BatchedSimulator(model, 10**6, engine=engine)
        assert time.perf_counter() - t0 < 1.0  # nothing allocated before the refusal
        msg = str(e.value)
        assert msg.startswith("num_envs: a batch of 1000000 environments"), msg
        assert f"needs about {gib_text(est['host'])}" in msg, msg
        assert "but 8.0 GiB of memory is available (SLENDER_MEMORY_LIMIT)" in msg, msg
        assert f"at most {fit} environments fit" in msg, msg
        assert 1000 < fit < 10**5  # (the snake: some 270-380 kB per environment)
        slender.BatchedSimulator(model, 4, engine=engine).step()  # a batch that fits is built
    monkeypatch.setenv("SLENDER_MEMORY_LIMIT", "8 GB")
    with pytest.raises(ValueError, match="SLENDER_MEMORY_LIMIT: '8 GB' is not a memory size"):
        slender.BatchedSimulator(model, 4)
    # the machine's own limit (MemAvailable, the cgroup's, RLIMIT_AS) refuses it too
    monkeypatch.delenv("SLENDER_MEMORY_LIMIT")
    est = slender.BatchedSimulator.memory_estimate(model, 10**6)
    if est["host"] <= est["available"]:
        pytest.skip("10**6 snakes fit in this machine's memory")
    t0 = time.perf_counter()
    with pytest.raises(MemoryError, match=r"num_envs: .* of memory is available \("):
        slender.BatchedSimulator(model, 10**6)
    assert time.perf_counter() - t0 < 1.0


def test_the_matrix_free_solver_steps_as_pcg_and_refuses_what_it_cannot_apply():
    # issue 49, case 9: solver="matrix-free" keeps no Jacobian (each Krylov product evaluates the
    # stencils again); the plate's steps are pcg's to round-off (tests/physics/matrix_free_test.cpp
    # holds them on every kind of stencil), and what adds to the Jacobian apart from the
    # stencils is refused naming it, without the check's source location
    plate = slender.load_model(os.path.join(ROOT, "apps", "scenes", "plate_contact.json"))
    sims = {s: slender.Simulator(plate, solver=s) for s in ("pcg", "matrix-free")}
    assert sims["matrix-free"].linear_solver == "pcg-matrix-free"
    for sim in sims.values():
        for _ in range(5):
            assert sim.step()["ok"]
    np.testing.assert_allclose(sims["matrix-free"].positions, sims["pcg"].positions, atol=1e-12)
    damped = slender.load_model(os.path.join(ROOT, "apps", "scenes", "rayleigh_beams.json"))
    with pytest.raises(RuntimeError) as e:
        slender.Simulator(damped, solver="matrix-free")
    msg = str(e.value)
    assert "Rayleigh stiffness damping" in msg and "check failed" not in msg and ".h:" not in msg
