"""Vector environments split over Ray actors (docs/distributed.md).

``ShardedVectorEnv`` offers the API of ``slender.envs.VectorEnv`` (``reset(seed, options)``,
``step(actions)``, the single and batched spaces, ``num_envs``, ``close()``) for environments
that live in several processes, possibly on several machines: the ``num_envs`` environments are
cut into ``num_shards`` contiguous ranges, and each range is one vector environment built by
``env_fn(n, **env_kwargs)`` inside a Ray actor. A step is one remote call per shard (its slice of
the actions in; observations, rewards, flags and info out, as arrays), and the answers are put
back together in environment order.

    import ray, slender.distributed as sd
    from slender.snake import SnakeVectorEnv
    ray.init()                                    # a local cluster, or ray.init(address=...)
    env = sd.ShardedVectorEnv(SnakeVectorEnv, num_envs=256, num_shards=4,
                              env_kwargs={"control_dt": 0.1})
    obs, info = env.reset(seed=7)
    obs, reward, terminated, truncated, info = env.step(actions)   # actions (256, 3)
    env.close()

Reproducibility. Environment ``i`` (its global index, not its place in a shard) gets its own
random generator, ``numpy.random.default_rng(numpy.random.SeedSequence(seed, spawn_key=(i,)))``,
which is ``SeedSequence(seed).spawn(num_envs)[i]``. The optional ``randomize(rng, i)`` draws
environment ``i``'s physical parameters from it (a dict of ``BatchedSimulator.set_params``
keywords) whenever that environment is reset. Since both depend on ``seed`` and ``i`` only, the
same seed gives the same rollouts for every number of shards, and equal to the same environment
run in one process with ``local=True``. (The batch-wide ``VectorEnv.rng`` of each shard is
seeded with the same ``seed`` and so does depend on the sharding: per-environment randomness
belongs in ``randomize``.)

Failures. An actor that dies, a call that does not answer within ``timeout_s`` seconds and an
exception raised inside a shard's environment all raise ``ShardError``, naming the shard and its
environment range; after it the environment refuses further steps (close it and build a new one).

``local=True`` runs the same shards one after the other in this process, without Ray: for
debugging, and as the single-process reference of the reproducibility rule.
"""

import re

import numpy as np

try:
    import ray
    from ray import exceptions as _rex
except ImportError as _err:  # pragma: no cover - depends on the machine
    raise ImportError(
        "slender.distributed needs Ray: python3 -m pip install ray (" + str(_err) + ")"
    ) from _err

from .envs import Box

__all__ = ["ShardedVectorEnv", "ShardError", "Shard", "UniformParams", "shard_ranges", "env_rng"]


class ShardError(RuntimeError):
    """A shard failed: its actor died, it did not answer in time, or its environment raised.
    ``shard`` is its number, ``envs`` its global environment range (first, end)."""

    def __init__(self, shard, envs, what):
        self.shard = shard
        self.envs = tuple(envs)
        super().__init__(f"shard {shard} (environments {envs[0]}..{envs[1] - 1}): {what}")


def shard_ranges(num_envs, num_shards):
    """The (first, end) global environment range of each shard: contiguous, in order, sizes
    differing by at most one (the first num_envs % num_shards shards hold one more)."""
    if num_shards < 1 or num_envs < num_shards:
        raise ValueError(f"num_shards must be between 1 and num_envs = {num_envs}, "
                         f"got {num_shards}")
    base, extra = divmod(num_envs, num_shards)
    out, lo = [], 0
    for k in range(num_shards):
        hi = lo + base + (1 if k < extra else 0)
        out.append((lo, hi))
        lo = hi
    return out


def env_rng(seed, index):
    """The random generator of global environment ``index`` under ``seed`` (the module's
    reproducibility rule): SeedSequence(seed).spawn(n)[index] for any n > index."""
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(int(index),)))


class UniformParams:
    """A randomize function: each named BatchedSimulator.set_params keyword drawn uniformly from
    its (low, high), in the order of the names, e.g.
    UniformParams(youngs_scale=(0.5, 2.0), ground_friction=(0.1, 0.6)). (A class of this module
    rather than a lambda, so that every node can unpickle it by name.)"""

    def __init__(self, **ranges):
        self.ranges = {k: (float(lo), float(hi)) for k, (lo, hi) in ranges.items()}

    def __call__(self, rng, index):
        return {k: float(rng.uniform(lo, hi)) for k, (lo, hi) in self.ranges.items()}

    def __repr__(self):
        return f"UniformParams({self.ranges})"


class Shard:
    """One shard: the vector environment of global environments first .. first + num_envs - 1.
    Ray runs it as an actor; ``local=True`` runs it in the driver. Returns plain numpy arrays
    and dicts, which is all that crosses the network."""

    def __init__(self, env_fn, num_envs, first, env_kwargs=None, randomize=None):
        self.env = env_fn(int(num_envs), **(env_kwargs or {}))
        if self.env.num_envs != num_envs:
            raise ValueError(f"env_fn made {self.env.num_envs} environments, asked for "
                             f"{num_envs}")
        self.first = int(first)
        self.randomize = randomize
        self.rngs = None
        if randomize is not None:
            if not (hasattr(self.env, "on_reset") and hasattr(self.env, "batch")):
                raise TypeError("randomize needs a slender.envs.VectorEnv (its on_reset hook and "
                                "batch.set_params)")
            hook = self.env.on_reset

            def on_reset(mask):
                self._draw_params(mask)
                hook(mask)

            self.env.on_reset = on_reset  # resets inside step() draw new parameters too

    def _draw_params(self, mask):
        if self.rngs is None:  # reset() sets them before the env's own reset runs
            return
        for j in np.flatnonzero(mask):
            params = self.randomize(self.rngs[j], self.first + int(j))
            if params:
                self.env.batch.set_params(int(j), **params)

    def describe(self):
        """num_envs and the single spaces (what the driver checks and concatenates)."""
        return {"num_envs": self.env.num_envs,
                "single_observation_space": self.env.single_observation_space,
                "single_action_space": self.env.single_action_space}

    def reset(self, entropy, seed=None, options=None):
        """New per-environment generators when entropy is given (else they go on), then the
        environment's reset."""
        if entropy is not None:
            self.rngs = [env_rng(entropy, self.first + j) for j in range(self.env.num_envs)]
        return self.env.reset(seed=seed, options=options)

    def step(self, actions):
        return self.env.step(actions)

    def ping(self):
        """Nothing: for measuring a remote call's round trip."""
        return None

    def close(self):
        close = getattr(self.env, "close", None)
        if close is not None:
            close()


def _merge_info(infos, obs_parts, sizes):
    """The shards' info dicts as one: per-environment arrays concatenated in environment order.
    A shard that reset nothing has no final_observation: its observations stand in (they are
    what VectorEnv puts there for such environments). Anything else that is not such an array
    in every shard is kept as a list with one entry per shard (None where missing)."""
    keys = []
    for info in infos:
        keys += [k for k in info if k not in keys]
    merged = {}
    for k in keys:
        vals = [info.get(k) for info in infos]
        if k == "final_observation":
            vals = [v if v is not None else o for v, o in zip(vals, obs_parts)]
        if all(isinstance(v, np.ndarray) and v.ndim >= 1 and len(v) == n
               for v, n in zip(vals, sizes)):
            merged[k] = np.concatenate(vals)
        else:
            merged[k] = vals
    return merged


class ShardedVectorEnv:
    """num_envs environments made by env_fn(n, **env_kwargs), cut into num_shards Ray actors.

    env_fn: a class or function, importable on every node (a ``slender.envs.VectorEnv`` such as
        ``slender.snake.SnakeVectorEnv``, or anything with its reset/step/spaces API).
    num_cpus, num_gpus: each actor's resource request. With num_gpus=1, Ray gives each actor
        its own GPU (CUDA_VISIBLE_DEVICES), on which a simulator built with backend="cuda"
        lives; env_fn must build it so (through env_kwargs).
    randomize: optional randomize(rng, global_index) -> dict of BatchedSimulator.set_params
        keywords, called at every reset of that environment (see the module docstring).
    timeout_s: the longest wait for any remote call (construction included) before ShardError.
    actor_options: more options for the actors (e.g. {"runtime_env": {...}}).
    local: run the shards in this process, without Ray.
    """

    def __init__(self, env_fn, num_envs, num_shards, env_kwargs=None, randomize=None,
                 num_cpus=1, num_gpus=0, timeout_s=300.0, actor_options=None, local=False):
        self.num_envs = int(num_envs)
        self.num_shards = int(num_shards)
        self.ranges = shard_ranges(self.num_envs, self.num_shards)
        self.sizes = [hi - lo for lo, hi in self.ranges]
        self.timeout_s = float(timeout_s)
        self.local = bool(local)
        self.actors = []
        self._broken = None
        self._closed = False
        self._seeded = False
        args = [(env_fn, n, lo, env_kwargs, randomize) for (lo, _), n in
                zip(self.ranges, self.sizes)]
        if self.local:
            for k, a in enumerate(args):
                self.actors.append(self._local_call(k, lambda a=a: Shard(*a)))
        else:
            if not ray.is_initialized():
                raise RuntimeError("ShardedVectorEnv: Ray is not initialized; call ray.init() "
                                   "(a local cluster) or ray.init(address=...) first")
            opts = {"num_cpus": num_cpus, "num_gpus": num_gpus, "max_restarts": 0,
                    "max_task_retries": 0}
            opts.update(actor_options or {})
            cls = ray.remote(Shard).options(**opts)
            self.actors = [cls.remote(*a) for a in args]
        try:
            desc = self._call("describe", [() for _ in self.ranges])
            first = desc[0]
            for k, d in enumerate(desc):
                for key in ("single_observation_space", "single_action_space"):
                    if tuple(d[key].shape) != tuple(first[key].shape):
                        raise ShardError(k, self.ranges[k], f"{key} {tuple(d[key].shape)} "
                                         f"differs from shard 0's {tuple(first[key].shape)}")
        except BaseException:
            self.close()  # the other shards' actors end too
            raise
        self.single_observation_space = first["single_observation_space"]
        self.single_action_space = first["single_action_space"]
        self.observation_space = _batched(self.single_observation_space, self.num_envs)
        self.action_space = _batched(self.single_action_space, self.num_envs)

    # ---- the remote calls ------------------------------------------------------------------
    def _local_call(self, k, fn):
        try:
            return fn()
        except Exception as e:  # noqa: BLE001 - every shard failure becomes a ShardError
            self._broken = ShardError(k, self.ranges[k], f"{type(e).__name__}: {e}")
            raise self._broken from e

    def _call(self, method, per_shard_args):
        """One call of `method` on every shard with its arguments; the answers in shard order.
        Any failure marks the environment broken and raises ShardError for the first failed
        shard (in shard order)."""
        if self._closed:
            raise RuntimeError("ShardedVectorEnv: used after close()")
        if self._broken is not None:
            raise ShardError(self._broken.shard, self._broken.envs,
                             f"this environment failed before ({self._broken}); close it and "
                             "make a new one")
        if self.local:
            return [self._local_call(k, lambda k=k, a=a: getattr(self.actors[k], method)(*a))
                    for k, a in enumerate(per_shard_args)]
        refs = [getattr(actor, method).remote(*a)
                for actor, a in zip(self.actors, per_shard_args)]
        _, pending = ray.wait(refs, num_returns=len(refs), timeout=self.timeout_s)
        late = set(pending)
        out, error = [], None
        for k, ref in enumerate(refs):
            if ref in late:
                error = error or (k, f"no answer to {method}() within {self.timeout_s:g} s")
                continue
            try:
                out.append(ray.get(ref, timeout=self.timeout_s))
            except _rex.RayActorError as e:
                if getattr(e, "actor_init_failed", False):  # the traceback's last line
                    error = error or (k, f"its environment could not be made: "
                                      f"{_plain_text(e).splitlines()[-1]}")
                else:
                    error = error or (k, f"its actor died during {method}(): {_first_line(e)}")
            except _rex.RayTaskError as e:
                cause = e.cause if getattr(e, "cause", None) is not None else e
                error = error or (k, f"{method}() raised {type(cause).__name__}: "
                                  f"{_first_line(cause)}")
            except _rex.RayError as e:
                error = error or (k, f"{method}() failed: {type(e).__name__}: {_first_line(e)}")
        if error is not None:
            self._broken = ShardError(error[0], self.ranges[error[0]], error[1])
            raise self._broken
        return out

    # ---- the vector API --------------------------------------------------------------------
    def reset(self, seed=None, options=None):
        """Every environment back to its start. A seed (an int) sets the per-environment
        generators; without one they go on, except at the first reset, which draws one entropy
        for all shards."""
        if seed is not None:
            entropy = int(seed)
        elif not self._seeded:
            entropy = int(np.random.SeedSequence().entropy)
        else:
            entropy = None
        parts = self._call("reset", [(entropy, seed, options) for _ in self.ranges])
        self._seeded = True
        obs = [p[0] for p in parts]
        return np.concatenate(obs), _merge_info([p[1] for p in parts], obs, self.sizes)

    def step(self, actions):
        if not self._seeded:
            raise RuntimeError("ShardedVectorEnv: reset() before the first step() (it seeds the "
                               "environments)")
        actions = np.asarray(actions)
        if actions.shape != tuple(self.action_space.shape):
            raise ValueError(f"actions of shape {actions.shape}, expected "
                             f"{tuple(self.action_space.shape)}")
        parts = self._call("step", [(actions[lo:hi],) for lo, hi in self.ranges])
        obs = [p[0] for p in parts]
        info = _merge_info([p[4] for p in parts], obs, self.sizes)
        return (np.concatenate(obs), np.concatenate([p[1] for p in parts]),
                np.concatenate([p[2] for p in parts]), np.concatenate([p[3] for p in parts]),
                info)

    def ping(self):
        """One empty call per shard (the remote-call overhead without any work)."""
        self._call("ping", [() for _ in self.ranges])

    def close(self):
        """Ends the actors (their environments go with them)."""
        if self.local:
            for shard in self.actors:
                shard.close()
        else:
            for actor in self.actors:
                try:
                    ray.kill(actor, no_restart=True)
                except Exception:  # noqa: BLE001 - already gone, or Ray is shut down
                    pass
        self.actors = []
        self._closed = True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _batched(space, n):
    return Box(np.broadcast_to(space.low, (n,) + tuple(space.shape)),
               np.broadcast_to(space.high, (n,) + tuple(space.shape)), dtype=space.dtype)


def _plain_text(e):
    """An exception's message without terminal colour codes (Ray adds some)."""
    return re.sub(r"\x1b\[[0-9;]*m", "", str(e)).strip() or type(e).__name__


def _first_line(e):
    return _plain_text(e).splitlines()[0]

