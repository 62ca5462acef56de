"""Slender: discrete elastic rods and shells, simulated with implicit Newton steps.

The native core (``slender._core``) holds the scene loader and the simulators; this package adds
Gymnasium vector environments (``slender.envs``), the soft-snake learning example
(``slender.snake``), its registration with Gymnasium (``slender/Snake-v0``) and an adapter for
Stable-Baselines3 (``slender.rl``, docs/rl.md), and, on a Ray cluster, vector environments split
over actors (``slender.distributed``) and parameter studies (``slender.sweep``,
``python3 -m slender.sweep``). These two import Ray only when they are used: ``import slender``
works without it (nor does it need Gymnasium). Pictures, videos and plots of a run's outputs:
``slender.render``, ``slender.plot`` (docs/rendering.md); a run as one USD file:
``Simulator.run(usd=...)``, ``slender.export_usd`` (docs/usd.md).

    import slender
    model = slender.load_model("apps/scenes/snake.json")   # or build_model(dict), SceneBuilder
    batch = slender.BatchedSimulator(model, num_envs=64)
    status = batch.step()          # numpy int8 per environment, 0 = converged
    x = batch.positions()          # numpy view (num_envs, nnode, 3), no copy
"""

from ._core import (  # noqa: F401
    BatchedSimulator,
    BatchRollout,
    Model,
    Rollout,
    Simulator,
    StrainController,
    cuda_device_count,
    export_usd,
    load_model,
)
from ._threads import guard as _guard

_guard(Simulator)  # one lock per simulator object: safe under threads (docs/python.md)
_guard(BatchedSimulator)
_guard(Rollout)
_guard(BatchRollout)

from .envs import Box, SingleEnv, VectorEnv  # noqa: E402, F401
from .scene import SceneBuilder, build_model  # noqa: E402, F401

try:  # slender/Snake-v0 for gymnasium.make and make_vec (docs/rl.md), when Gymnasium is there
    from .rl import register as _register

    _register()
except ImportError:  # pragma: no cover - depends on the machine
    pass
except Exception as _err:  # pragma: no cover - a broken Gymnasium must not break slender
    import warnings

    warnings.warn(f"slender: slender/Snake-v0 not registered with Gymnasium ({_err!r})")

STATUS_NAMES = ("converged", "max-iterations", "line-search-failed", "non-finite",
                "linear-solve-failed")


def __getattr__(name):
    """slender.distributed and slender.sweep (they need Ray), slender.render and slender.plot
    (matplotlib), slender.autograd (PyTorch), imported on first use."""
    if name in ("distributed", "sweep", "render", "plot", "autograd"):
        import importlib

        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'slender' has no attribute '{name}'")


__all__ = ["BatchedSimulator", "BatchRollout", "Model", "Rollout", "Simulator",
           "cuda_device_count", "export_usd", "load_model", "build_model", "SceneBuilder", "Box",
           "SingleEnv", "VectorEnv", "STATUS_NAMES"]
