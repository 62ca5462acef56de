"""A Gymnasium-style vector environment over a BatchedSimulator.

``VectorEnv`` follows the Gymnasium vector API (``reset(seed) -> (obs, info)``,
``step(actions) -> (obs, reward, terminated, truncated, info)``, ``single_observation_space``,
``single_action_space``, ``observation_space``, ``action_space``) without depending on
Gymnasium: ``Box`` is a minimal stand-in that uses ``gymnasium.spaces.Box`` when Gymnasium is
installed. Subclasses say what an action does (``apply_action``), what is observed
(``observe``) and what is rewarded (``reward``).

An environment whose step fails (Newton did not converge) keeps its previous state in the
simulator; here it is reported as terminated with zero reward and reset, its last observation in
``info["final_observation"]``. Environments that reach the episode length are truncated and reset
the same way.
"""

import numpy as np

try:  # Gymnasium's spaces when available
    from gymnasium.spaces import Box as _GymBox
except ImportError:  # pragma: no cover - depends on the machine
    _GymBox = None


class _Box:
    """Bounds, shape and dtype of a continuous space (as gymnasium.spaces.Box)."""

    def __init__(self, low, high, shape=None, dtype=np.float64):
        shape = tuple(shape) if shape is not None else np.shape(low)
        self.shape = shape
        self.dtype = np.dtype(dtype)
        self.low = np.broadcast_to(np.asarray(low, dtype=self.dtype), shape).copy()
        self.high = np.broadcast_to(np.asarray(high, dtype=self.dtype), shape).copy()

    def sample(self, rng=None):
        rng = rng if rng is not None else np.random.default_rng()
        lo = np.where(np.isfinite(self.low), self.low, -1.0)
        hi = np.where(np.isfinite(self.high), self.high, 1.0)
        return rng.uniform(lo, hi).astype(self.dtype)

    def contains(self, x):
        x = np.asarray(x)
        return x.shape == self.shape and bool(np.all(x >= self.low) and np.all(x <= self.high))

    def __repr__(self):
        return f"Box({self.low.min()}, {self.high.max()}, {self.shape}, {self.dtype})"


def Box(low, high, shape=None, dtype=np.float64):  # noqa: N802 - mirrors gymnasium.spaces.Box
    """A continuous space: gymnasium.spaces.Box when Gymnasium is installed."""
    if _GymBox is not None:
        return _GymBox(low=low, high=high, shape=shape, dtype=dtype)
    return _Box(low, high, shape, dtype)


class VectorEnv:
    """num_envs copies of one scene stepped together; see the module docstring."""

    def __init__(self, batch, single_observation_space, single_action_space,
                 substeps=1, episode_steps=100):
        self.batch = batch
        self.num_envs = batch.num_envs
        self.single_observation_space = single_observation_space
        self.single_action_space = single_action_space
        self.observation_space = Box(
            np.broadcast_to(single_observation_space.low,
                            (self.num_envs,) + tuple(single_observation_space.shape)),
            np.broadcast_to(single_observation_space.high,
                            (self.num_envs,) + tuple(single_observation_space.shape)),
            dtype=single_observation_space.dtype)
        self.action_space = Box(
            np.broadcast_to(single_action_space.low,
                            (self.num_envs,) + tuple(single_action_space.shape)),
            np.broadcast_to(single_action_space.high,
                            (self.num_envs,) + tuple(single_action_space.shape)),
            dtype=single_action_space.dtype)
        self.substeps = int(substeps)
        self.episode_steps = int(episode_steps)
        self.elapsed = np.zeros(self.num_envs, dtype=np.int64)
        self.rng = np.random.default_rng()

    # ---- for subclasses --------------------------------------------------------------------
    def apply_action(self, actions, substep):
        """Set the batch's actions for one simulator step."""
        raise NotImplementedError

    def observe(self):
        """The observations (num_envs, *single_observation_space.shape)."""
        raise NotImplementedError

    def snapshot(self):
        """What reward() compares: by default the observations."""
        return self.observe().copy()

    def reward(self, before, after):
        """Reward of one control step from the snapshots before and after it (num_envs)."""
        raise NotImplementedError

    def on_reset(self, mask):
        """Hook: environments in mask were just reset."""

    # ---- the vector API --------------------------------------------------------------------
    def reset(self, seed=None, options=None):
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        self.batch.reset()
        self.elapsed[:] = 0
        self.on_reset(np.ones(self.num_envs, dtype=bool))
        return self.observe().copy(), {}

    def step(self, actions):
        actions = np.asarray(actions, dtype=np.float64)
        if actions.shape != tuple(self.action_space.shape):
            raise ValueError(f"actions of shape {actions.shape}, expected "
                             f"{tuple(self.action_space.shape)}")
        before = self.snapshot()
        failed = np.zeros(self.num_envs, dtype=bool)
        for k in range(self.substeps):
            self.apply_action(actions, k)
            failed |= self.batch.step() != 0
        obs = self.observe().copy()
        reward = np.where(failed, 0.0, self.reward(before, self.snapshot()))
        self.elapsed += 1
        terminated = failed
        truncated = (self.elapsed >= self.episode_steps) & ~failed
        info = {"failed": failed}
        done = terminated | truncated
        if np.any(done):
            info["final_observation"] = obs.copy()
            self.batch.reset(done)
            self.elapsed[done] = 0
            self.on_reset(done)
            obs = self.observe().copy()
        return obs, reward, terminated, truncated, info
