"""Slender's environments for reinforcement-learning libraries (docs/rl.md).

``register()`` (run by ``import slender`` when Gymnasium is installed) registers

    slender/Snake-v0    entry point slender.snake:SnakeCrawlEnv (one snake, a gymnasium.Env),
                        vector entry point slender.snake:SnakeCrawlVectorEnv (num_envs snakes
                        stepped together by one BatchedSimulator)

so that ``gymnasium.make("slender/Snake-v0")`` and ``gymnasium.make_vec("slender/Snake-v0",
num_envs=N, vectorization_mode="vector_entry_point")`` build them (keywords go to the classes).

``sb3_vec_env(env)`` presents a vector environment with same-step autoreset (any
``slender.envs.VectorEnv``) as a Stable-Baselines3 ``VecEnv``, so that SB3's algorithms step the
whole batch in one call: ``PPO("MlpPolicy", sb3_vec_env(env))``; it imports Stable-Baselines3
(and torch) when called, not before. ``mean_speed`` measures a policy, ``random_policy`` is the
baseline.
"""

import numpy as np

ENV_ID = "slender/Snake-v0"

__all__ = ["ENV_ID", "register", "sb3_vec_env", "mean_speed", "random_policy"]


def register():
    """Registers Slender's environments with Gymnasium (once; ImportError without it)."""
    import gymnasium

    if ENV_ID not in gymnasium.registry:
        gymnasium.register(id=ENV_ID, entry_point="slender.snake:SnakeCrawlEnv",
                           vector_entry_point="slender.snake:SnakeCrawlVectorEnv",
                           nondeterministic=False)


_adapter_class = None


def _sb3_adapter():
    """The adapter class, made on first use (it subclasses SB3's VecEnv)."""
    global _adapter_class
    if _adapter_class is not None:
        return _adapter_class
    from stable_baselines3.common.vec_env import VecEnv

    class SlenderSB3VecEnv(VecEnv):
        """A same-step-autoreset vector environment as an SB3 VecEnv: one step of the batch
        per step_wait. A finished environment's last observation goes in its info's
        "terminal_observation", and "TimeLimit.truncated" says when the episode was cut by its
        length (SB3 then bootstraps its value). Attributes and methods are the batch's: get_attr
        gives the same value for every environment, env_method calls the method once."""

        def __init__(self, env):
            mode = getattr(env, "metadata", {}).get("autoreset_mode")
            if mode is not None and getattr(mode, "value", mode) != "SameStep":
                raise ValueError(f"sb3_vec_env needs same-step autoreset, got {mode}")
            self.env = env
            self._actions = None
            super().__init__(env.num_envs, env.single_observation_space,
                             env.single_action_space)

        def reset(self):
            seed = self._seeds[0]
            options = self._options[0] or None
            obs, _ = self.env.reset(seed=seed, options=options)
            self._reset_seeds()
            self._reset_options()
            self.reset_infos = [{} for _ in range(self.num_envs)]
            return obs

        def step_async(self, actions):
            self._actions = np.asarray(actions).reshape(self.env.action_space.shape)

        def step_wait(self):
            obs, reward, terminated, truncated, info = self.env.step(self._actions)
            dones = terminated | truncated
            infos = [{} for _ in range(self.num_envs)]
            failed = info.get("failed")
            for e in np.flatnonzero(dones):
                infos[e]["terminal_observation"] = info["final_obs"][e]
                infos[e]["TimeLimit.truncated"] = bool(truncated[e] and not terminated[e])
            if failed is not None:
                for e in np.flatnonzero(failed):
                    infos[e]["failed"] = True
            return obs, np.asarray(reward, dtype=np.float32), dones, infos

        def close(self):
            self.env.close()

        def get_attr(self, attr_name, indices=None):
            return [getattr(self.env, attr_name) for _ in self._get_indices(indices)]

        def set_attr(self, attr_name, value, indices=None):
            setattr(self.env, attr_name, value)

        def env_method(self, method_name, *method_args, indices=None, **method_kwargs):
            out = getattr(self.env, method_name)(*method_args, **method_kwargs)
            return [out for _ in self._get_indices(indices)]

        def env_is_wrapped(self, wrapper_class, indices=None):
            return [False for _ in self._get_indices(indices)]

    _adapter_class = SlenderSB3VecEnv
    return _adapter_class


def sb3_vec_env(env):
    """env (a slender.envs.VectorEnv, or a Gymnasium vector env with same-step autoreset) as a
    stable_baselines3 VecEnv (ImportError without Stable-Baselines3)."""
    return _sb3_adapter()(env)


def random_policy(env, seed=0):
    """A policy that samples the action space uniformly (seeded): policy(obs) -> actions."""
    space = env.action_space
    rng = np.random.default_rng(seed)

    def policy(obs):
        return rng.uniform(space.low, space.high).astype(space.dtype)

    return policy


def mean_speed(env, policy, episodes=1, seed=0):
    """Mean reward per control step over `episodes` episodes of every environment of a vector
    env run with policy(obs) -> actions (for the snake: the mean forward speed [m/s]). Episodes
    are counted per environment; every environment starts from reset(seed=seed)."""
    obs, _ = env.reset(seed=seed)
    total = np.zeros(env.num_envs)
    steps = np.zeros(env.num_envs, dtype=np.int64)
    finished = np.zeros(env.num_envs, dtype=np.int64)
    while finished.min() < episodes:
        obs, reward, terminated, truncated, _ = env.step(policy(obs))
        counting = finished < episodes
        total += np.where(counting, reward, 0.0)
        steps += counting
        finished += terminated | truncated
    return float(total.sum() / steps.sum())
