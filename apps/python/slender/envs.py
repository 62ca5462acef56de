"""Gymnasium vector environments over a BatchedSimulator (docs/rl.md).

``VectorEnv`` follows Gymnasium's vector API (``gymnasium.vector.VectorEnv``, Gymnasium 1.x):
``num_envs``, ``single_observation_space``, ``single_action_space``, ``observation_space``,
``action_space``, ``reset(seed=None, options=None) -> (obs, info)``,
``step(actions) -> (obs, reward, terminated, truncated, info)``, ``np_random``, ``close()``.
When Gymnasium is installed it is a subclass of ``gymnasium.vector.VectorEnv`` and its spaces
are ``gymnasium.spaces.Box``; without Gymnasium it keeps the same API on a minimal ``Box``
stand-in. Subclasses say what an action does (``apply_action``), what is observed
(``observe``) and what is rewarded (``reward``). All environments step in one call of the
simulator per simulator step.

Autoreset: same-step (``metadata["autoreset_mode"]`` is ``AutoresetMode.SAME_STEP``). An
environment whose episode ends in a step is reset inside that step: the observation returned is
the new episode's first one, and the last observation of the finished episode is in
``info["final_obs"]``, an object array with ``None`` for the environments that did not finish,
whose mask is ``info["_final_obs"]``, as Gymnasium's own vector environments give them (both
keys are in every step's info; there is no ``final_info``, since the one per-environment entry,
``info["failed"]``, is that of the step that finished). When an episode ended,
``info["final_observation"]`` has the same observations as one array of every environment (the
rows of environments that did not finish hold their current observation).

An environment whose step fails (Newton did not converge) keeps its previous state in the
simulator; it is reported as terminated with zero reward and reset. Environments that reach the
episode length are truncated and reset. ``info["failed"]`` flags the failed ones.

``SingleEnv`` is one such environment as a ``gymnasium.Env`` (no autoreset: after the end of an
episode, call ``reset``), which is what ``gymnasium.make`` gives and what Gymnasium's
environment checker checks.
"""

import numpy as np

try:  # Gymnasium's spaces and base classes when available
    from gymnasium import Env as _EnvBase
    from gymnasium.spaces import Box as _GymBox
    from gymnasium.vector import AutoresetMode
    from gymnasium.vector import VectorEnv as _VectorEnvBase
except ImportError:  # pragma: no cover - depends on the machine
    _GymBox = None
    _EnvBase = object
    _VectorEnvBase = object
    AutoresetMode = None

__all__ = ["Box", "VectorEnv", "SingleEnv", "AutoresetMode", "HAVE_GYMNASIUM"]

#: whether Gymnasium is installed (the spaces and base classes are then Gymnasium's)
HAVE_GYMNASIUM = _GymBox is not None


def check_finite_actions(actions):
    """Raises ValueError naming the first environment and component of `actions` (num_envs,
    ...) that is NaN or infinite: such an action would leave no valid state behind."""
    bad = ~np.isfinite(actions)
    if bad.any():
        env, *comp = (int(i) for i in np.argwhere(bad)[0])
        raise ValueError(f"actions: environment {env}, component {tuple(comp)} is "
                         f"{actions[(env, *comp)]}: actions must be finite")

class _Box:
    """Bounds, shape and dtype of a continuous space (as gymnasium.spaces.Box)."""

    def __init__(self, low, high, shape=None, dtype=np.float64):
        shape = tuple(shape) if shape is not None else np.shape(low)
        self.shape = shape
        self.dtype = np.dtype(dtype)
        self.low = np.broadcast_to(np.asarray(low, dtype=self.dtype), shape).copy()
        self.high = np.broadcast_to(np.asarray(high, dtype=self.dtype), shape).copy()
        self.np_random = np.random.default_rng()

    def seed(self, seed=None):
        self.np_random = np.random.default_rng(seed)
        return [seed]

    def sample(self, rng=None):
        rng = rng if rng is not None else self.np_random
        lo = np.where(np.isfinite(self.low), self.low, -1.0)
        hi = np.where(np.isfinite(self.high), self.high, 1.0)
        return rng.uniform(lo, hi).astype(self.dtype)

    def contains(self, x):
        x = np.asarray(x)
        return x.shape == self.shape and bool(np.all(x >= self.low) and np.all(x <= self.high))

    def __contains__(self, x):
        return self.contains(x)

    def __repr__(self):
        return f"Box({self.low.min()}, {self.high.max()}, {self.shape}, {self.dtype})"


def Box(low, high, shape=None, dtype=np.float64):  # noqa: N802 - mirrors gymnasium.spaces.Box
    """A continuous space: gymnasium.spaces.Box when Gymnasium is installed."""
    if _GymBox is not None:
        return _GymBox(low=low, high=high, shape=shape, dtype=dtype)
    return _Box(low, high, shape, dtype)


def batch_box(space, n):
    """The space of n stacked samples of a Box (as gymnasium.vector.utils.batch_space)."""
    shape = (n,) + tuple(space.shape)
    return Box(np.broadcast_to(space.low, shape), np.broadcast_to(space.high, shape),
               dtype=space.dtype)


def _rng(seed):
    """A generator as Gymnasium makes one (numpy's default_rng: PCG64 of SeedSequence(seed))."""
    if seed is not None and not (isinstance(seed, (int, np.integer)) and seed >= 0):
        raise ValueError(f"seed must be a non-negative int or None, got {seed!r}")
    return np.random.default_rng(seed)


class VectorEnv(_VectorEnvBase):
    """num_envs copies of one scene stepped together; see the module docstring."""

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP if AutoresetMode else "SameStep",
                "render_modes": []}
    spec = None
    render_mode = None
    closed = False

    def __init__(self, batch, single_observation_space, single_action_space,
                 substeps=1, episode_steps=100):
        self.batch = batch
        self.num_envs = batch.num_envs
        self.single_observation_space = single_observation_space
        self.single_action_space = single_action_space
        self.observation_space = batch_box(single_observation_space, self.num_envs)
        self.action_space = batch_box(single_action_space, self.num_envs)
        self.substeps = int(substeps)
        self.episode_steps = int(episode_steps)
        self.elapsed = np.zeros(self.num_envs, dtype=np.int64)
        self._np_random = None
        self._np_random_seed = None

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

    # ---- random numbers (Gymnasium's np_random; rng is the older name) ----------------------
    @property
    def np_random(self):
        """The batch-wide generator, seeded by reset(seed=...)."""
        if self._np_random is None:
            self._np_random = _rng(None)
        return self._np_random

    @np_random.setter
    def np_random(self, value):
        self._np_random = value
        self._np_random_seed = -1

    @property
    def np_random_seed(self):
        if self._np_random_seed is None:
            self._np_random = _rng(None)
            self._np_random_seed = -1
        return self._np_random_seed

    rng = np_random

    # ---- the vector API --------------------------------------------------------------------
    def reset(self, seed=None, options=None):
        """Every environment back to the start (or, with options={"reset_mask": mask}, those in
        mask); returns (obs, info)."""
        if seed is not None:
            self._np_random, self._np_random_seed = _rng(seed), int(seed)
        mask = np.ones(self.num_envs, dtype=bool)
        if options and options.get("reset_mask") is not None:
            mask = np.asarray(options["reset_mask"], dtype=bool)
            if mask.shape != (self.num_envs,):
                raise ValueError(f"reset_mask of shape {mask.shape}, expected ({self.num_envs},)")
        if mask.all():
            self.batch.reset()
        elif mask.any():
            self.batch.reset(mask)
        self.elapsed[mask] = 0
        self.on_reset(mask)
        return self.observe().copy(), {}

    def step(self, actions):
        actions = np.asarray(actions, dtype=np.float64)
        if actions.shape != tuple(self.action_space.shape):
            raise ValueError(f"actions of shape {actions.shape}, expected "
                             f"{tuple(self.action_space.shape)}")
        check_finite_actions(actions)  # before anything (a phase, say) moves on
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
        done = terminated | truncated
        # same-step autoreset, the final observations as Gymnasium's vector envs give them
        final = np.full(self.num_envs, None, dtype=object)
        for e in np.flatnonzero(done):
            final[e] = obs[e].copy()
        info = {"failed": failed, "final_obs": final, "_final_obs": done}
        if np.any(done):
            info["final_observation"] = obs.copy()
            self.batch.reset(done)
            self.elapsed[done] = 0
            self.on_reset(done)
            obs = self.observe().copy()
        return obs, reward, terminated, truncated, info

    def close_extras(self, **kwargs):
        """Nothing to release: the batch goes with the environment."""

    def close(self, **kwargs):
        if not self.closed:
            self.close_extras(**kwargs)
            self.closed = True

    @property
    def unwrapped(self):
        return self

    def __repr__(self):
        name = self.spec.id if self.spec is not None else None
        return f"{type(self).__name__}({name + ', ' if name else ''}num_envs={self.num_envs})"


class SingleEnv(_EnvBase):
    """One environment of a 1-environment VectorEnv as a gymnasium.Env (no autoreset).

    reset(seed=None, options=None) -> (obs, info); step(action) -> (obs, reward, terminated,
    truncated, info) with a float reward and bool flags. After an episode ends, call reset()."""

    metadata = {"render_modes": []}
    render_mode = None
    spec = None

    def __init__(self, vector_env):
        if vector_env.num_envs != 1:
            raise ValueError(f"SingleEnv needs a vector environment of 1 environment, "
                             f"got {vector_env.num_envs}")
        self.vector_env = vector_env
        self.observation_space = vector_env.single_observation_space
        self.action_space = vector_env.single_action_space
        self._np_random = None
        self._np_random_seed = None

    if _EnvBase is object:  # without Gymnasium: its np_random, as VectorEnv has it
        np_random = VectorEnv.np_random
        np_random_seed = VectorEnv.np_random_seed

    def reset(self, *, seed=None, options=None):
        if _EnvBase is not object:
            super().reset(seed=seed)
        elif seed is not None:
            self._np_random, self._np_random_seed = _rng(seed), int(seed)
        obs, _ = self.vector_env.reset(seed=seed, options=options)
        return obs[0], {}

    def step(self, action):
        action = np.asarray(action, dtype=np.float64)
        if action.shape != tuple(self.action_space.shape):
            raise ValueError(f"action of shape {action.shape}, expected "
                             f"{tuple(self.action_space.shape)}")
        obs, reward, terminated, truncated, info = self.vector_env.step(action[None])
        if terminated[0] or truncated[0]:
            obs = info["final_observation"]  # the vector env has already started the next one
        return (obs[0], float(reward[0]), bool(terminated[0]), bool(truncated[0]),
                {"failed": bool(info["failed"][0])})

    @property
    def unwrapped(self):
        return self

    def close(self):
        self.vector_env.close()

    def __repr__(self):
        name = self.spec.id if self.spec is not None else type(self.vector_env).__name__
        return f"<{type(self).__name__}<{name}>>"
