"""The soft snake of the learning examples: a 101-node rod in a resistive-force medium
(apps/scenes/snake.json) driven by a travelling wave of natural curvature

    kappa(s, t) = A sin(2 pi (s / lambda - f t)),

whose amplitude A [1/m], wavelength lambda [m] and frequency f [Hz] are the action of
``SnakeVectorEnv``, held for a control step. The reward is the forward speed: the centre of
mass's displacement along +x over the control step divided by its duration. ``cem`` improves the
wave's parameters with the cross-entropy method on a batch of environments.

``SnakeCrawlVectorEnv`` is the task for RL libraries, registered with Gymnasium as
``slender/Snake-v0`` (slender.rl, docs/rl.md): a normalized action (amplitude, frequency) in
[-1, 1]^2 at a fixed wavelength, the wave's phase integrated in time, short episodes;
``SnakeCrawlEnv`` is one such snake as a ``gymnasium.Env``."""

import os

import numpy as np

from . import _core
from .envs import Box, SingleEnv, VectorEnv, check_finite_actions

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
    """num_envs snakes; an action is (amplitude, wavelength, frequency) per snake.

    engine, backend: those of the BatchedSimulator ("per-env" or "vectorized"; "cpu" or "cuda",
    which needs the vectorized engine)."""

    def __init__(self, num_envs, control_dt=0.1, episode_seconds=2.0, model=None,
                 engine="per-env", backend="cpu"):
        model = model if model is not None else _core.load_model(scene_path())
        batch = _core.BatchedSimulator(model, num_envs, engine=engine, backend=backend)
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
        obs_space, act_space = self.make_spaces()
        super().__init__(
            batch, obs_space, act_space, substeps=substeps,
            episode_steps=max(1, int(round(episode_seconds / self.control_dt))))
        self.kappa = np.zeros((num_envs, model.nbend, 2))

    def make_spaces(self):
        """The single observation and action spaces."""
        return (Box(-np.inf, np.inf, shape=(2 + 2 * OBSERVED_NODES,)),
                Box(ACTION_LOW, ACTION_HIGH))

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


class SnakeCrawlVectorEnv(SnakeVectorEnv):
    """The learning task registered as ``slender/Snake-v0`` (docs/rl.md): num_envs snakes, each
    driven by a travelling curvature wave of fixed wavelength whose amplitude and frequency the
    policy sets at every control step, from a normalized action a in [-1, 1]^2:

        A = amplitude_max (a0 + 1) / 2 [1/m],   f = frequency_max a1 [Hz],
        kappa(s, t) = A sin(2 pi s / lambda - phi(t)),   dphi/dt = 2 pi f,

    the phase being integrated (a new frequency does not make the wave jump). Observation
    (26): the centre of mass's velocity (x, z) [m/s], 11 nodes' positions relative to it (x, z)
    [m] and (sin phi, cos phi). Reward: the centre of mass's displacement along +x over the
    control step divided by its duration [m/s]. Episodes last episode_seconds (truncated); a
    failed simulator step terminates one. Over an episode of 1 s from rest, the best constant
    wave (a = (0.6, -1): A = 24 1/m, f = -3 Hz) crawls at 0.32 m/s on average; a = 0, and the
    uniform random policy in expectation, at 0 (the speed is odd in f)."""

    def __init__(self, num_envs, control_dt=0.1, episode_seconds=1.0, wavelength=0.5,
                 amplitude_max=30.0, frequency_max=3.0, model=None, engine="per-env",
                 backend="cpu"):
        self.wavelength = float(wavelength)
        self.amplitude_max = float(amplitude_max)
        self.frequency_max = float(frequency_max)
        super().__init__(num_envs, control_dt=control_dt, episode_seconds=episode_seconds,
                         model=model, engine=engine, backend=backend)
        self.phase = np.zeros(num_envs)  # [rad]

    def make_spaces(self):
        obs = Box(np.r_[np.full(2 + 2 * OBSERVED_NODES, -np.inf), -1.0, -1.0],
                  np.r_[np.full(2 + 2 * OBSERVED_NODES, np.inf), 1.0, 1.0])
        return obs, Box(-1.0, 1.0, shape=(2,), dtype=np.float32)

    def wave(self, actions):
        """Amplitude [1/m] and frequency [Hz] of normalized actions (num_envs, 2)."""
        a = np.clip(actions, -1.0, 1.0)
        return self.amplitude_max * 0.5 * (a[:, 0] + 1.0), self.frequency_max * a[:, 1]

    def apply_action(self, actions, substep):
        amp, freq = self.wave(actions)
        self.phase = self.phase + 2 * np.pi * freq * self.dt  # at the step's end
        arg = 2 * np.pi * self.s[None, :] / self.wavelength - self.phase[:, None]
        self.kappa[:, :, 1] = amp[:, None] * self.dl * np.sin(arg)
        self.batch.set_natural_curvature(self.kappa)

    def observe(self):
        obs = super().observe()
        return np.concatenate([obs, np.sin(self.phase)[:, None], np.cos(self.phase)[:, None]],
                              axis=1)

    def observe_torch(self):
        """observe() as a torch tensor computed from the simulator's live state (the vectorized
        engine's DLPack views, no copy of the state): on the CUDA backend it stays on the GPU
        (docs/rl.md; not yet run on a GPU)."""
        import torch

        x = torch.from_dlpack(self.batch.live_positions())  # (num_envs, nnode, 3), strided
        v = torch.from_dlpack(self.batch.live_velocities())
        w = torch.as_tensor(self.mass / self.mass.sum(), device=x.device)
        c = torch.einsum("enk,n->ek", x, w)
        cv = torch.einsum("enk,n->ek", v, w)
        idx = torch.as_tensor(self.observed, device=x.device)
        rel = x[:, idx][:, :, [0, 2]] - c[:, None, [0, 2]]
        phase = torch.as_tensor(self.phase, device=x.device)
        return torch.cat([cv[:, [0, 2]], rel.reshape(self.num_envs, -1), torch.sin(phase)[:, None],
                          torch.cos(phase)[:, None]], dim=1)

    def step_torch(self, actions):
        """step() with torch tensors, for the vectorized engine: actions (num_envs, 2) on the
        batch's device in; obs (num_envs, 26), reward, terminated and truncated (num_envs) out
        as tensors on that device. On the CUDA backend the state, the wave (the natural
        curvature, set through DLPack) and the observations stay on the GPU; only the phases
        and the flags (num_envs values each) cross to the host. Autoreset as step(), with
        info["final_observation"] (a tensor of every environment) and info["_final_obs"]
        when an episode ended (docs/rl.md; not yet run on a GPU)."""
        import torch

        a = torch.as_tensor(actions).to(torch.float64)
        if tuple(a.shape) != (self.num_envs, 2):
            raise ValueError(f"actions of shape {tuple(a.shape)}, expected ({self.num_envs}, 2)")
        if not bool(torch.isfinite(a).all()):  # before the phase moves on
            check_finite_actions(a.cpu().numpy())
        a = a.clamp(-1.0, 1.0)
        dev = a.device
        amp = self.amplitude_max * 0.5 * (a[:, 0] + 1.0)
        freq = self.frequency_max * a[:, 1]
        k = torch.as_tensor(2 * np.pi * self.s / self.wavelength, device=dev)
        w = torch.as_tensor(self.mass / self.mass.sum(), device=dev)
        kappa = torch.zeros((self.num_envs, self.model.nbend, 2), dtype=torch.float64, device=dev)
        phase = torch.as_tensor(self.phase, device=dev)

        def com_x():
            return torch.from_dlpack(self.batch.live_positions())[:, :, 0] @ w

        before = com_x()
        failed = np.zeros(self.num_envs, dtype=bool)
        for _ in range(self.substeps):
            phase = phase + 2 * np.pi * freq * self.dt  # at the step's end, as apply_action
            kappa[:, :, 1] = amp[:, None] * self.dl * torch.sin(k[None, :] - phase[:, None])
            self.batch.set_natural_curvature(kappa)
            failed |= self.batch.step() != 0
        self.phase = phase.cpu().numpy()
        obs = self.observe_torch()
        fail_t = torch.as_tensor(failed, device=dev)
        reward = torch.where(fail_t, 0.0, (com_x() - before) / self.control_dt)
        self.elapsed += 1
        truncated = (self.elapsed >= self.episode_steps) & ~failed
        done = failed | truncated
        info = {"failed": failed}
        if done.any():
            info["final_observation"] = obs.clone()
            info["_final_obs"] = done.copy()
            self.batch.reset(done)
            self.elapsed[done] = 0
            self.on_reset(done)
            obs = self.observe_torch()
        return (obs, reward, fail_t, torch.as_tensor(truncated, device=dev), info)

    def on_reset(self, mask):
        if hasattr(self, "phase"):
            self.phase[mask] = 0.0


class SnakeCrawlEnv(SingleEnv):
    """One snake of SnakeCrawlVectorEnv as a gymnasium.Env (what gymnasium.make gives); the
    keywords are SnakeCrawlVectorEnv's."""

    def __init__(self, **kwargs):
        super().__init__(SnakeCrawlVectorEnv(1, **kwargs))

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
