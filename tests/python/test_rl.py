"""The RL stack (issue 19, item 3; docs/rl.md): slender/Snake-v0 is registered with Gymnasium,
its single environment passes Gymnasium's own checker, its vector environment (made by
gymnasium.make_vec from the vector entry point) keeps Gymnasium's vector API with same-step
autoreset and equals the single one, and Stable-Baselines3's PPO, through slender.rl's adapter,
trains the snake to crawl in a few seconds on the CPU. Skipped where Gymnasium (or, for the
adapter and PPO, Stable-Baselines3) is not installed (scripts/setup.sh installs them)."""

import time
import warnings

import numpy as np
import pytest

gym = pytest.importorskip("gymnasium")

from slender import rl, snake  # noqa: E402

# short episodes for the API tests: 3 control steps of 0.05 s
SHORT = {"control_dt": 0.05, "episode_seconds": 0.15}


def test_registered_single_env_passes_gymnasium_checker():
    from gymnasium.utils.env_checker import check_env

    assert rl.ENV_ID in gym.registry
    spec = gym.registry[rl.ENV_ID]
    assert spec.entry_point == "slender.snake:SnakeCrawlEnv"
    assert spec.vector_entry_point == "slender.snake:SnakeCrawlVectorEnv"
    env = gym.make(rl.ENV_ID, **SHORT)
    assert isinstance(env.unwrapped, snake.SnakeCrawlEnv)
    assert isinstance(env.unwrapped, gym.Env)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env.unwrapped)
    # the only remarks allowed: the observation's unbounded entries (positions, velocities)
    other = [str(w.message) for w in caught if "infinity" not in str(w.message)]
    assert not other, other
    assert env.observation_space.shape == (26,) and env.observation_space.dtype == np.float64
    assert env.action_space.shape == (2,) and env.action_space.dtype == np.float32
    assert env.action_space.low.min() == -1 and env.action_space.high.max() == 1
    # an episode through the checking wrappers: truncated after its 3 steps, then reset
    obs, info = env.reset(seed=0)
    assert obs in env.observation_space and info == {}
    for k in range(3):
        obs, r, term, trunc, info = env.step(env.action_space.sample())
        assert isinstance(r, float) and not term and trunc == (k == 2)
    env.close()
    # the module prefix imports slender first, for a process that has not
    assert isinstance(gym.make("slender:" + rl.ENV_ID, **SHORT).unwrapped, snake.SnakeCrawlEnv)


def test_vector_env_follows_gymnasium_vector_api():
    n = 3
    env = gym.make_vec(rl.ENV_ID, num_envs=n, vectorization_mode="vector_entry_point", **SHORT)
    assert type(env) is snake.SnakeCrawlVectorEnv and isinstance(env, gym.vector.VectorEnv)
    assert env.num_envs == n and env.spec.id == rl.ENV_ID
    assert env.metadata["autoreset_mode"] == gym.vector.AutoresetMode.SAME_STEP
    assert env.observation_space == gym.vector.utils.batch_space(env.single_observation_space, n)
    assert env.action_space == gym.vector.utils.batch_space(env.single_action_space, n)

    obs0, info = env.reset(seed=7)
    assert info == {} and obs0 in env.observation_space
    assert obs0.dtype == env.single_observation_space.dtype
    seeded = env.np_random.random()
    env.reset(seed=7)
    assert env.np_random.random() == seeded  # reset(seed=) seeds np_random

    env.action_space.seed(1)
    actions = [env.action_space.sample() for _ in range(3)]
    for k, a in enumerate(actions):
        obs, r, term, trunc, info = env.step(a)
        assert obs.shape == (n, 26) and obs.dtype == np.float64
        assert r.shape == (n,) and r.dtype == np.float64
        assert term.dtype == bool and trunc.dtype == bool and not term.any()
        assert trunc.all() == (k == 2) and not info["failed"].any()
        assert (info["_final_obs"] == trunc).all() and info["final_obs"].shape == (n,)
    # same-step autoreset: the new episode's first observation, the last one in final_obs
    assert info["_final_obs"].all() and info["final_obs"].dtype == object
    final = np.stack(list(info["final_obs"]))
    np.testing.assert_array_equal(final, info["final_observation"])
    assert not np.array_equal(final, obs)
    np.testing.assert_array_equal(obs, obs0)

    # a partial reset (options["reset_mask"]) restarts only the environments asked for
    env.step(actions[0])
    obs, _ = env.reset(options={"reset_mask": np.array([True, False, True])})
    np.testing.assert_array_equal(obs[[0, 2]], obs0[[0, 2]])
    assert not np.array_equal(obs[1], obs0[1])
    with pytest.raises(ValueError, match="actions of shape"):
        env.step(np.zeros((n + 1, 2)))
    env.close()
    assert env.closed


def test_vector_env_equals_single_envs():
    """Each environment of the batch moves as a single environment given its actions, to the
    bit (the per-environment engine)."""
    n, steps = 3, 4
    rng = np.random.default_rng(5)
    actions = rng.uniform(-1, 1, size=(steps, n, 2)).astype(np.float32)
    venv = snake.SnakeCrawlVectorEnv(n, **SHORT)
    vobs = [venv.reset(seed=0)[0]]
    vrew = []
    for a in actions:
        obs, r, term, trunc, info = venv.step(a)
        vobs.append(info["final_observation"] if (term | trunc).any() else obs)
        vrew.append(r)
    for e in range(n):
        env = snake.SnakeCrawlEnv(**SHORT)
        obs, _ = env.reset(seed=0)
        np.testing.assert_array_equal(obs, vobs[0][e])
        for k in range(steps):
            if k == 3:  # the batch started its second episode here
                obs, _ = env.reset()
            obs, r, *_ = env.step(actions[k, e])
            np.testing.assert_array_equal(obs, vobs[k + 1][e])
            assert r == vrew[k][e]


def test_sb3_adapter_gives_sb3_semantics():
    pytest.importorskip("stable_baselines3")
    from stable_baselines3.common.vec_env import VecEnv

    env = snake.SnakeCrawlVectorEnv(2, **SHORT)
    venv = rl.sb3_vec_env(env)
    assert isinstance(venv, VecEnv) and venv.num_envs == 2
    assert venv.observation_space == env.single_observation_space
    assert venv.action_space == env.single_action_space
    venv.seed(3)
    obs0 = venv.reset()
    assert obs0.shape == (2, 26) and env.np_random_seed == 3
    for k in range(3):
        obs, rew, dones, infos = venv.step(np.zeros((2, 2), dtype=np.float32))
        assert rew.shape == (2,) and dones.dtype == bool and len(infos) == 2
    assert dones.all()
    for e in range(2):  # cut by the episode's length: SB3 bootstraps the final observation
        assert infos[e]["TimeLimit.truncated"] is True
        assert infos[e]["terminal_observation"].shape == (26,)
    np.testing.assert_array_equal(obs, obs0)
    assert venv.get_attr("control_dt") == [env.control_dt] * 2
    assert venv.env_is_wrapped(object) == [False, False]
    venv.close()


def test_ppo_learns_to_crawl():
    """PPO (Stable-Baselines3, CPU, fixed seeds) from 640 control steps of 16 snakes (4 policy
    updates, about 6 s here). Measured on the development machine (2 cores): the uniform random
    policy crawls at -0.020 m/s on average (8 seeds: -0.030 to +0.010), the zero action at
    0.000 m/s, the trained policy (deterministic) at +0.23 m/s (8 seeds: +0.17 to +0.23; the
    best constant wave reaches +0.29). The test asks for more than 0.1 m/s trained, less than
    0.05 m/s in magnitude for the random policy, and a gain of more than 0.08 m/s."""
    pytest.importorskip("stable_baselines3")
    torch = pytest.importorskip("torch")
    from stable_baselines3 import PPO

    torch.set_num_threads(1)  # a small network: one thread is fastest, and the same every run
    env = snake.SnakeCrawlVectorEnv(16)      # 1-s episodes of 10 control steps of 0.1 s
    probe = snake.SnakeCrawlVectorEnv(1)     # one snake for the deterministic policies
    t0 = time.perf_counter()
    random_speed = rl.mean_speed(env, rl.random_policy(env, seed=0), seed=0)
    zero_speed = rl.mean_speed(probe, lambda obs: np.zeros((1, 2), dtype=np.float32))
    t1 = time.perf_counter()
    model = PPO("MlpPolicy", rl.sb3_vec_env(env), n_steps=10, batch_size=80, n_epochs=10,
                learning_rate=3e-3, seed=0, device="cpu")
    model.learn(total_timesteps=640)
    t2 = time.perf_counter()
    trained_speed = rl.mean_speed(probe, lambda obs: model.predict(obs, deterministic=True)[0])
    print(f"random {random_speed:+.4f} m/s, zero {zero_speed:+.4f} m/s, trained "
          f"{trained_speed:+.4f} m/s; baselines {t1 - t0:.1f} s, training {t2 - t1:.1f} s")
    assert abs(random_speed) < 0.05 and abs(zero_speed) < 0.05
    assert trained_speed > 0.1
    assert trained_speed > max(random_speed, zero_speed) + 0.08


def test_torch_observation_through_dlpack():
    """observe_torch (the device-resident observation of docs/rl.md) on the CPU: torch sees the
    vectorized engine's live state without a copy and computes observe()'s values. The same
    code on the CUDA backend keeps the observation on the GPU: not yet run there."""
    torch = pytest.importorskip("torch")
    env = snake.SnakeCrawlVectorEnv(2, engine="vectorized", **SHORT)
    env.reset(seed=0)
    live = torch.from_dlpack(env.batch.live_positions())
    for a in ([1.0, -1.0], [0.5, 0.5]):
        obs, *_ = env.step(np.tile(np.float32(a), (2, 1)))
        t = env.observe_torch()
        assert t.dtype == torch.float64 and t.device.type == "cpu"
        np.testing.assert_allclose(t.numpy(), obs, rtol=1e-12, atol=1e-15)
        np.testing.assert_array_equal(live.numpy(), env.batch.positions())  # follows the steps


def test_torch_step_matches_numpy_step():
    """step_torch (actions and observations as tensors; on the CUDA backend they stay on the
    GPU, not yet run there) on the CPU gives step()'s rewards, observations, flags and
    autoresets, to roundoff (torch's and numpy's sine may differ in the last bit)."""
    torch = pytest.importorskip("torch")
    n = 2
    a = snake.SnakeCrawlVectorEnv(n, engine="vectorized", **SHORT)
    b = snake.SnakeCrawlVectorEnv(n, engine="vectorized", **SHORT)
    a.reset(seed=0)
    b.reset(seed=0)
    rng = np.random.default_rng(2)
    for k in range(4):
        act = rng.uniform(-1, 1, size=(n, 2)).astype(np.float32)
        obs, r, term, trunc, info = a.step(act)
        tobs, tr, tterm, ttrunc, tinfo = b.step_torch(torch.from_numpy(act))
        assert tobs.dtype == torch.float64 and tr.dtype == torch.float64
        np.testing.assert_allclose(tobs.numpy(), obs, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(tr.numpy(), r, rtol=1e-9, atol=1e-12)
        np.testing.assert_array_equal(tterm.numpy(), term)
        np.testing.assert_array_equal(ttrunc.numpy(), trunc)
        assert trunc.all() == (k == 2)
        if trunc.any():
            np.testing.assert_allclose(tinfo["final_observation"].numpy(),
                                       info["final_observation"], rtol=1e-9, atol=1e-12)
    with pytest.raises(ValueError, match="actions of shape"):
        b.step_torch(torch.zeros(n + 1, 2))
