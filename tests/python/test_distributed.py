"""Slender on a Ray cluster (issue 22), on a local cluster of 2 CPUs: the sharded vector
environment equals the single-process one step for step, for any number of shards and with
per-environment randomized parameters; a killed actor, a shard that does not answer and an error
inside a shard are clear errors naming the shard, raised fast; a sweep on Ray equals the same
runs done one after the other, a bad value is a row with its error, and a run's outputs equal
those of `slender run` byte for byte. Skipped where Ray is not installed."""

import csv
import json
import os
import subprocess
import sys
import time

import numpy as np
import pytest

ray = pytest.importorskip("ray")

import slender  # noqa: E402
import slender.distributed as sd  # noqa: E402
import slender.sweep as sw  # noqa: E402
from slender import snake  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
ROD_DROP = os.path.join(ROOT, "apps", "scenes", "rod_drop.json")
# short episodes (10 control steps of 5 simulator steps), so that 30 steps see auto-resets
SNAKE_KW = {"control_dt": 0.05, "episode_seconds": 0.5}


@pytest.fixture(scope="module")
def cluster():
    """A local Ray cluster of 2 CPUs for this file (workers inherit PYTHONPATH)."""
    import logging

    if ray.is_initialized():
        ray.shutdown()
    ray.init(num_cpus=2, include_dashboard=False, object_store_memory=100 * 2**20,
             logging_level=logging.WARNING)
    yield
    ray.shutdown()


def random_actions(rng, n):
    return rng.uniform(snake.ACTION_LOW, snake.ACTION_HIGH, size=(n, 3))


def rollout(env, steps, seed=5, action_seed=11):
    """Observations, rewards, flags and the final observations of a rollout of random actions
    from a fixed generator."""
    rng = np.random.default_rng(action_seed)
    obs, _ = env.reset(seed=seed)
    out = [("reset", obs)]
    for _ in range(steps):
        obs, rew, term, trunc, info = env.step(random_actions(rng, env.num_envs))
        out.append((obs, rew, term, trunc, info["failed"], info.get("final_observation")))
    return out


def assert_same_rollouts(a, b):
    assert len(a) == len(b)
    for step, (x, y) in enumerate(zip(a, b)):
        for u, v in zip(x, y):
            if isinstance(u, str) or u is None:
                assert u == v, step
            else:
                assert u.dtype == v.dtype and u.shape == v.shape, step
                np.testing.assert_array_equal(u, v, err_msg=f"step {step}")


def test_shard_ranges_and_env_rng():
    assert sd.shard_ranges(5, 2) == [(0, 3), (3, 5)]
    assert sd.shard_ranges(6, 3) == [(0, 2), (2, 4), (4, 6)]
    with pytest.raises(ValueError, match="num_shards"):
        sd.shard_ranges(2, 3)
    # the rule: environment i's generator is SeedSequence(seed).spawn(n)[i], for every n > i
    spawned = np.random.SeedSequence(42).spawn(7)
    for i in (0, 3, 6):
        want = np.random.default_rng(spawned[i]).random(4)
        np.testing.assert_array_equal(sd.env_rng(42, i).random(4), want)
    assert not np.array_equal(sd.env_rng(42, 1).random(4), sd.env_rng(42, 2).random(4))


def test_sharded_env_equals_the_single_process_env(cluster):
    n = 5
    ref = rollout(snake.SnakeVectorEnv(n, **SNAKE_KW), 30)
    with sd.ShardedVectorEnv(snake.SnakeVectorEnv, n, 2, env_kwargs=SNAKE_KW) as env:
        assert env.ranges == [(0, 3), (3, 5)]
        assert env.observation_space.shape == (n, 24) and env.action_space.shape == (n, 3)
        got = rollout(env, 30)
    assert_same_rollouts(got, ref)
    # the rollout did something: the snakes moved, and episodes ended and were reset
    rewards = np.array([s[1] for s in ref[1:]])
    assert np.abs(rewards).max() > 1e-3
    assert sum(s[3].sum() for s in ref[1:]) == 3 * n  # truncated at steps 10, 20 and 30
    assert ref[10][5] is not None and ref[11][5] is None


def test_actors_run_the_vectorized_engine(cluster):
    """the engine (and, with num_gpus=1 on a GPU cluster, backend="cuda") reaches each actor's
    batch through env_kwargs: shards of vectorized batches give the single process's rollout"""
    n = 4
    kw = dict(SNAKE_KW, engine="vectorized")
    ref = rollout(snake.SnakeVectorEnv(n, **kw), 12)
    with sd.ShardedVectorEnv(snake.SnakeVectorEnv, n, 2, env_kwargs=kw) as env:
        got = rollout(env, 12)
    assert_same_rollouts(got, ref)
    assert np.abs(np.array([s[1] for s in ref[1:]])).max() > 1e-3


def test_shard_counts_give_the_same_randomized_rollouts(cluster):
    n = 4
    params = sd.UniformParams(youngs_scale=(0.3, 3.0), density_scale=(0.5, 2.0))
    runs = {}
    for shards in (1, 2):
        with sd.ShardedVectorEnv(snake.SnakeVectorEnv, n, shards, env_kwargs=SNAKE_KW,
                                 randomize=params) as env:
            runs[f"ray{shards}"] = rollout(env, 25)
    for shards in (1, 3):  # the same rule in this process, without Ray
        with sd.ShardedVectorEnv(snake.SnakeVectorEnv, n, shards, env_kwargs=SNAKE_KW,
                                 randomize=params, local=True) as env:
            runs[f"local{shards}"] = rollout(env, 25)
    for name, run in runs.items():
        assert_same_rollouts(run, runs["ray1"])
    # the parameters do act: not the rollout of the unrandomized snakes, nor of another seed
    with sd.ShardedVectorEnv(snake.SnakeVectorEnv, n, 2, env_kwargs=SNAKE_KW,
                             local=True) as env:
        plain = rollout(env, 25)
    with sd.ShardedVectorEnv(snake.SnakeVectorEnv, n, 2, env_kwargs=SNAKE_KW,
                             randomize=params, local=True) as env:
        other_seed = rollout(env, 25, seed=6)
    for other in (plain, other_seed):
        assert not np.array_equal(other[5][0], runs["ray1"][5][0])


def test_a_killed_actor_is_a_clear_error_at_once(cluster):
    env = sd.ShardedVectorEnv(snake.SnakeVectorEnv, 4, 2, env_kwargs=SNAKE_KW)
    rng = np.random.default_rng(0)
    env.reset(seed=1)
    for _ in range(3):
        env.step(random_actions(rng, 4))
    ray.kill(env.actors[1])
    t0 = time.monotonic()
    with pytest.raises(sd.ShardError, match=r"shard 1 \(environments 2\.\.3\): its actor died"):
        env.step(random_actions(rng, 4))
    assert time.monotonic() - t0 < 10
    # and it stays broken, without another remote call
    with pytest.raises(sd.ShardError, match="failed before"):
        env.step(random_actions(rng, 4))
    env.close()
    with pytest.raises(RuntimeError, match="after close"):
        env.reset()


def test_errors_inside_a_shard_name_it(cluster):
    with sd.ShardedVectorEnv(snake.SnakeVectorEnv, 4, 2, env_kwargs=SNAKE_KW) as env:
        with pytest.raises(RuntimeError, match="reset"):
            env.step(np.zeros((4, 3)))
        env.reset(seed=1)
        with pytest.raises(ValueError, match=r"actions of shape \(3, 3\)"):
            env.step(np.zeros((3, 3)))  # refused before any remote call; the env still works
        a = np.tile([10.0, 0.5, -1.0], (4, 1))
        env.step(a)
        a[3, 0] = np.nan  # environment 3, in shard 1 (its environment 1): refused by the env
        with pytest.raises(sd.ShardError, match=r"shard 1 \(environments 2\.\.3\): step\(\) "
                                                r"raised ValueError: actions: environment 1"):
            env.step(a)
    # an environment that cannot be made: the error names the shard and the cause
    with pytest.raises(sd.ShardError, match=r"shard 0 \(environments 0\.\.1\): its environment "
                                            r"could not be made: TypeError: .*no_such_argument"):
        sd.ShardedVectorEnv(snake.SnakeVectorEnv, 4, 2, env_kwargs={"no_such_argument": 1})


class SlowEnv:
    """An environment whose step takes 60 s: a shard that does not answer."""

    def __init__(self, num_envs):
        self.num_envs = num_envs
        self.single_observation_space = slender.Box(-1.0, 1.0, shape=(2,))
        self.single_action_space = slender.Box(-1.0, 1.0, shape=(1,))

    def reset(self, seed=None, options=None):
        return np.zeros((self.num_envs, 2)), {}

    def step(self, actions):
        time.sleep(60)


def test_a_shard_that_does_not_answer_is_an_error_not_a_hang(cluster):
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])  # SlowEnv by value
    try:
        env = sd.ShardedVectorEnv(SlowEnv, 2, 2, timeout_s=120)
        env.reset(seed=0)
        env.timeout_s = 1.0
        t0 = time.monotonic()
        with pytest.raises(sd.ShardError, match=r"shard 0 \(environments 0\.\.0\): no answer "
                                                r"to step\(\) within 1 s"):
            env.step(np.zeros((2, 1)))
        assert time.monotonic() - t0 < 10
        env.close()
    finally:
        ray.cloudpickle.unregister_pickle_by_value(sys.modules[__name__])


# ---- parameter studies ---------------------------------------------------------------------
GRID = {"materials.0.youngs_modulus": [2e6, 2e7], "forces.ground.friction": [0.1, 0.5],
        "rods[0].radius": [1e-3, 1.5e-3]}


def comparable(rows):
    return [{k: v for k, v in r.items() if k not in sw.TIMING_COLUMNS} for r in rows]


def read_csv(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def test_a_sweep_on_ray_equals_the_runs_one_after_the_other(cluster, tmp_path):
    seq = sw.run_sweep(ROD_DROP, GRID, out_dir=tmp_path / "seq", duration=0.2, local=True)
    par = sw.run_sweep(ROD_DROP, GRID, out_dir=tmp_path / "ray", duration=0.2)
    pool = sw.run_sweep(ROD_DROP, GRID, out_dir=tmp_path / "pool", duration=0.2, local=True,
                        jobs=2)
    assert len(par) == 8 and [r["run"] for r in par] == [f"run_{i:04d}" for i in range(8)]
    assert all(r["status"] == "done" for r in par), [r["error"] for r in par]
    assert comparable(par) == comparable(seq)
    assert comparable(pool) == comparable(seq)
    # the grid matters, in product order (the last field fastest)
    assert len({r["total"] for r in par}) == 8
    assert [r["rods[0].radius"] for r in par[:2]] == [1e-3, 1.5e-3]
    assert par[4]["materials.0.youngs_modulus"] == 2e7
    for r in par:
        assert r["steps"] == 200 and r["sim_time"] == pytest.approx(0.2)
        for name in ("energies.csv", "final_state.csv", "scene.json", "summary.json"):
            assert (tmp_path / "ray" / r["run"] / name).is_file()
        for name in ("energies.csv", "final_state.csv"):
            assert ((tmp_path / "ray" / r["run"] / name).read_bytes()
                    == (tmp_path / "seq" / r["run"] / name).read_bytes())
    scene = json.loads((tmp_path / "ray" / "run_0005" / "scene.json").read_text())
    assert scene["materials"][0]["youngs_modulus"] == 2e7
    assert scene["forces"]["ground"]["friction"] == 0.1
    assert scene["rods"][0]["radius"] == 1.5e-3 and scene["integrator"]["duration"] == 0.2
    table = read_csv(tmp_path / "ray" / "sweep.csv")
    assert [t["run"] for t in table] == [r["run"] for r in par]
    assert float(table[3]["total"]) == par[3]["total"]  # full precision in the CSV


def test_a_bad_value_is_a_row_with_its_error(cluster, tmp_path):
    with open(ROD_DROP) as f:
        scene = json.load(f)
    scene["integrator"].update(dt=5e-3, adaptive=False)
    grid = [("materials.rubber.youngs_modulus", [2e6, -1.0]),
            ("integrator.newton.max_iters", [25, 4])]
    rows = sw.run_sweep(scene, grid, out_dir=tmp_path / "s", duration=0.2)
    status = [r["status"] for r in rows]
    assert status == ["done", "step-failed", "input-error", "input-error"], rows
    assert rows[1]["error"].startswith("step 20 at t = 0.095 s failed: max-iterations")
    assert rows[1]["steps"] == 19 and rows[1]["sim_time"] == pytest.approx(0.095)
    assert np.isfinite(rows[1]["total"])  # the last good state is measured
    assert "run_0002/scene.json" in rows[2]["error"]
    assert "materials[0].youngs_modulus: must be positive" in rows[2]["error"]
    table = read_csv(tmp_path / "s" / "sweep.csv")
    assert [t["status"] for t in table] == status
    assert table[2]["steps"] == "0" and table[2]["total"] == ""


def test_sweep_arguments(tmp_path, monkeypatch, capsys):
    grid = sw.parse_grid(["forces.gravity=[0,0,-9.8],[0,0,-1.6]",
                          "materials.rubber.density=1000,2e3", 'name="a,b",c'])
    assert grid == [("forces.gravity", [[0, 0, -9.8], [0, 0, -1.6]]),
                    ("materials.rubber.density", [1000, 2000.0]), ("name", ["a,b", "c"])]
    with pytest.raises(ValueError, match="FIELD=V1"):
        sw.parse_grid(["radius"])
    # a path that does not fit the scene: refused before any run, nothing written
    with pytest.raises(ValueError, match=r"rods\[3\]\.radius: index 3 out of range"):
        sw.run_sweep(ROD_DROP, {"rods[3].radius": [1e-3]}, out_dir=tmp_path / "x", local=True)
    with pytest.raises(ValueError, match="no element named 'steel'"):
        sw.run_sweep(ROD_DROP, {"materials.steel.density": [1]}, out_dir=tmp_path / "x",
                     local=True)
    assert not (tmp_path / "x").exists()
    # the command line: exit code 3 when a run failed, 2 for a folder in use
    out = str(tmp_path / "cli")
    args = [ROD_DROP, "--grid", "materials.0.youngs_modulus=2e6,0", "--duration", "0.05",
            "--out", out, "--local", "-q"]
    assert sw.main(args) == 3
    assert [t["status"] for t in read_csv(os.path.join(out, "sweep.csv"))] == ["done",
                                                                               "input-error"]
    assert sw.main(args) == 2 and "not empty" in capsys.readouterr().err
    # the module as a program
    cli = subprocess.run([sys.executable, "-m", "slender.sweep", ROD_DROP, "--grid",
                          "rods.rod.radius=1e-3", "--duration", "0.02", "--out",
                          str(tmp_path / "m"), "--local"], capture_output=True, text=True)
    assert cli.returncode == 0, cli.stderr
    assert "1 done; table in" in cli.stderr
    assert read_csv(tmp_path / "m" / "sweep.csv")[0]["steps"] == "20"
    # without Ray, a clear message unless --local
    monkeypatch.setitem(sys.modules, "ray", None)
    assert sw.main([ROD_DROP, "--grid", "integrator.dt=1e-3", "--out", out + "2"]) == 2
    assert "Ray is not installed" in capsys.readouterr().err


def slender_program():
    for path in (os.environ.get("SLENDER_BIN", ""), os.path.join(ROOT, "build", "slender")):
        if path and os.access(path, os.X_OK):
            return path
    pytest.skip("the slender program is not built")


def test_a_run_is_the_run_of_the_slender_program(tmp_path):
    """The sweep's run loop is the program's: the same energies.csv, byte for byte, for a run
    that halves dt (adaptive) and for one whose step fails."""
    program = slender_program()
    grid = {"integrator.dt": [5e-3], "integrator.newton.max_iters": [4],
            "integrator.adaptive": [True, False]}
    rows = sw.run_sweep(ROD_DROP, grid, out_dir=tmp_path / "s", duration=0.5, local=True)
    assert [r["status"] for r in rows] == ["done", "step-failed"]
    assert rows[0]["dt_halvings"] > 10
    for r, code in zip(rows, (0, 3)):
        run_dir = tmp_path / "s" / r["run"]
        cli = subprocess.run([program, "run", str(run_dir / "scene.json"), "--out",
                              str(tmp_path / r["run"]), "-q"], capture_output=True, text=True)
        assert cli.returncode == code, cli.stderr
        assert ((tmp_path / r["run"] / "energies.csv").read_bytes()
                == (run_dir / "energies.csv").read_bytes())
