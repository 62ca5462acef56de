"""The soft snake of the learning example: a 101-node rod in a resistive-force medium
(apps/scenes/snake.json) driven by a travelling wave of natural curvature

    kappa(s, t) = A sin(2 pi (s / lambda - f t)),

whose amplitude A [1/m], wavelength lambda [m] and frequency f [Hz] are the action, held for a
control step. The reward is the forward speed: the centre of mass's displacement along +x over
the control step divided by its duration. ``cem`` improves the wave's parameters with the
cross-entropy method on a batch of environments.
"""

import os

import numpy as np

from . import _core
from .envs import Box, VectorEnv

#: the scene file of the snake
SCENE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "snake.json")
_REPO_SCENE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scenes",
                           "snake.json")

#: bounds of the action (amplitude [1/m], wavelength [m], frequency [Hz])
ACTION_LOW = np.array([0.0, 0.1, -3.0])
ACTION_HIGH = np.array([30.0, 1.0, 3.0])
#: nodes whose positions (relative to the centre of mass) are observed
OBSERVED_NODES = 11


def scene_path():
    """The snake scene: next to the package when installed, else in the repository."""
    for p in (SCENE, _REPO_SCENE, os.path.join(os.getcwd(), "apps", "scenes", "snake.json")):
        if os.path.exists(p):
            return os.path.abspath(p)
    raise FileNotFoundError("snake.json not found (looked next to the package and in apps/scenes)")


class SnakeVectorEnv(VectorEnv):
    """num_envs snakes; an action is (amplitude, wavelength, frequency) per snake."""

    def __init__(self, num_envs, control_dt=0.1, episode_seconds=2.0, model=None):
        model = model if model is not None else _core.load_model(scene_path())
        batch = _core.BatchedSimulator(model, num_envs)
        self.model = model
        self.dt = model.dt
        substeps = max(1, int(round(control_dt / self.dt)))
        self.control_dt = substeps * self.dt
        n = model.nnode
        x0 = model.initial_positions
        self.length = float(np.linalg.norm(x0[-1] - x0[0]))
        # arc length at each bend stencil (interior node) and the discrete curvature's length
        self.s = np.linspace(0.0, self.length, n)[1:-1]
        self.dl = self.length / (n - 1)
        self.mass = np.asarray(model.node_mass)
        self.observed = np.linspace(0, n - 1, OBSERVED_NODES).astype(int)
        obs_dim = 2 + 2 * OBSERVED_NODES
        super().__init__(
            batch,
            Box(-np.inf, np.inf, shape=(obs_dim,)),
            Box(ACTION_LOW, ACTION_HIGH),
            substeps=substeps,
            episode_steps=int(round(episode_seconds / self.control_dt)))
        self.kappa = np.zeros((num_envs, model.nbend, 2))
        self._com_prev = None

    def apply_action(self, actions, substep):
        a = np.clip(actions, ACTION_LOW, ACTION_HIGH)
        t = self.batch.times()[:, None] + self.dt  # the step's end (implicit Euler)
        amp, lam, freq = a[:, 0:1], a[:, 1:2], a[:, 2:3]
        # discrete natural curvature: curvature times the Voronoi length, in the x-z plane
        self.kappa[:, :, 1] = amp * self.dl * np.sin(2 * np.pi * (self.s[None, :] / lam - freq * t))
        self.batch.set_natural_curvature(self.kappa)

    def com(self):
        x = self.batch.positions()
        return np.einsum("enk,n->ek", x, self.mass) / self.mass.sum()

    def observe(self):
        x = self.batch.positions()
        v = self.batch.velocities()
        c = np.einsum("enk,n->ek", x, self.mass) / self.mass.sum()
        cv = np.einsum("enk,n->ek", v, self.mass) / self.mass.sum()
        rel = x[:, self.observed][:, :, [0, 2]] - c[:, None, [0, 2]]
        return np.concatenate([cv[:, [0, 2]], rel.reshape(self.num_envs, -1)], axis=1)

    def snapshot(self):
        return self.com()[:, 0].copy()

    def reward(self, before, after):
        # forward speed of the centre of mass over the control step
        return (after - before) / self.control_dt


def rollout(env, actions):
    """Mean forward speed of each snake over one episode with constant actions (num_envs, 3)."""
    env.reset()
    total = np.zeros(env.num_envs)
    for _ in range(env.episode_steps):
        _, r, term, trunc, _ = env.step(actions)
        total += r
    return total / env.episode_steps


def cem(env, iterations=10, elite_frac=0.25, mean=None, std=None, seed=0, log=print):
    """Cross-entropy method over the wave parameters: each iteration samples one action per
    environment from a Gaussian, runs an episode, and refits the Gaussian to the best
    elite_frac of them. Returns the history: a dict per iteration with the population's mean
    and best reward and the distribution's mean."""
    rng = np.random.default_rng(seed)
    mean = np.array([5.0, 0.5, 0.0]) if mean is None else np.asarray(mean, dtype=float)
    std = np.array([5.0, 0.2, 1.0]) if std is None else np.asarray(std, dtype=float)
    n_elite = max(2, int(round(elite_frac * env.num_envs)))
    history = []
    for it in range(iterations):
        a = np.clip(rng.normal(mean, std, size=(env.num_envs, 3)), ACTION_LOW, ACTION_HIGH)
        r = rollout(env, a)
        elite = a[np.argsort(r)[-n_elite:]]
        mean = elite.mean(axis=0)
        std = elite.std(axis=0) + np.array([0.5, 0.02, 0.05]) * 0.5 ** it  # a decaying floor
        history.append({"iteration": it, "mean_reward": float(r.mean()),
                        "best_reward": float(r.max()), "mean": mean.copy()})
        if log:
            log(f"cem {it:3d}: reward mean {r.mean():+.4f} m/s, best {r.max():+.4f} m/s; "
                f"wave A {mean[0]:.2f} 1/m, lambda {mean[1]:.3f} m, f {mean[2]:+.2f} Hz")
    return history
