"""Parameter studies: one scene, run for every combination of a grid of values, each run a Ray
task (or a local process), each in its own folder, with one summary table for the whole study
(docs/distributed.md).

    python3 -m slender.sweep SCENE.json --grid FIELD=V1,V2,... [--grid ...] [--address ADDR]
                             [--local [--jobs N]] [--out DIR] [--duration T] [--backend cpu]

    from slender.sweep import run_sweep
    rows = run_sweep("apps/scenes/rod_drop.json",
                     {"materials.0.youngs_modulus": [2e6, 2e7],
                      "forces.ground.friction": [0.1, 0.5]},
                     out_dir="out/drop_study", duration=0.5)

A FIELD is a dotted path into the scene's JSON (docs/scene_format.md): dict keys, list indices
(``rods.0.radius`` or ``rods[0].radius``) or, in a list of named objects, a name
(``materials.rubber.youngs_modulus``). A value is read as JSON (``2e6``, ``true``, ``"soft"``,
``[0,0,-9.81]``) and otherwise taken as a string; commas inside brackets or quotes do not split.

Each run writes DIR/run_NNNN/: scene.json (the scene as it ran: the grid's values, the duration
and backend applied; relative file paths in it still refer to the original scene's folder),
the scene's outputs as ``slender run`` writes them (energies.csv always; VTK frames only where the
scene's output block sets ``"vtk": true``; nodes.csv where it names nodes), final_state.csv
(every node's position and velocity at the end) and summary.json (its row of the table). The run
is ``slender run``'s own loop (Simulator.run, host/run.cpp): the last step shortened to land on
the end time, and with ``"adaptive": true`` a failed step retried at half the step size down to
min_dt, grown back after 4 good steps. DIR/sweep.csv (and DIR/sweep.parquet when pyarrow is
installed) holds one row per run: its id, the grid's values, status (done, step-failed,
input-error, error, crashed), error (for a failed step the program's message), steps, simulated
time, Newton iterations, dt halvings, the final energies, the centre of mass, the largest
displacement and speed, the host and the wall times. A run that fails is a row with its error;
the others go on.
"""

import argparse
import copy
import itertools
import json
import logging
import math
import os
import socket
import sys
import time

__all__ = ["run_sweep", "run_one", "parse_grid", "set_field", "main", "SUMMARY_COLUMNS"]

#: the columns of the table after the run id and the grid's fields
SUMMARY_COLUMNS = ["status", "error", "steps", "sim_time", "newton_iters",
                   "steps_without_iteration", "dt_halvings", "kinetic", "stretch", "bend",
                   "twist", "gravity", "total", "com_x", "com_y", "com_z", "max_displacement",
                   "max_speed", "nnode", "nfree", "host", "build_s", "wall_s"]
#: columns that differ between two runs of the same scene (timings)
TIMING_COLUMNS = ("build_s", "wall_s")

# ---- the grid ------------------------------------------------------------------------------
def _split_values(text):
    """Splits at commas that are not inside brackets, braces or double quotes."""
    out, depth, quoted, cur = [], 0, False, []
    for i, ch in enumerate(text):
        if ch == '"' and (i == 0 or text[i - 1] != "\\"):
            quoted = not quoted
        elif not quoted and ch in "[{":
            depth += 1
        elif not quoted and ch in "]}":
            depth -= 1
        if ch == "," and depth == 0 and not quoted:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    out.append("".join(cur))
    return out


def _parse_value(token):
    token = token.strip()
    try:
        return json.loads(token)
    except ValueError:
        return token


def parse_grid(specs):
    """["FIELD=V1,V2", ...] -> [(FIELD, [V1, V2]), ...] (values read as JSON, else strings)."""
    grid = []
    for spec in specs:
        field, eq, values = spec.partition("=")
        field = field.strip()
        if not eq or not field:
            raise ValueError(f"--grid {spec!r}: expected FIELD=V1,V2,...")
        vals = [_parse_value(v) for v in _split_values(values)]
        if any(v == "" for v in vals):
            raise ValueError(f"--grid {spec!r}: an empty value")
        if field in [f for f, _ in grid]:
            raise ValueError(f"--grid {field}: given twice")
        grid.append((field, vals))
    return grid


def _path_tokens(path):
    tokens = []
    for part in path.replace("[", ".").replace("]", "").split("."):
        if part == "":
            raise ValueError(f"{path}: an empty component")
        tokens.append(part)
    return tokens


def _child(node, token, path):
    """The index or key of `token` in node (a list or dict) along `path`."""
    if isinstance(node, list):
        try:
            i = int(token)
        except ValueError:
            named = [k for k, x in enumerate(node)
                     if isinstance(x, dict) and x.get("name") == token]
            if len(named) != 1:
                raise ValueError(f"{path}: no element named '{token}' in a list of {len(node)}")
            return named[0]
        if not -len(node) <= i < len(node):
            raise ValueError(f"{path}: index {i} out of range (the list has {len(node)})")
        return i
    if isinstance(node, dict):
        return token
    raise ValueError(f"{path}: '{token}' looks into a {type(node).__name__}, not an object or "
                     f"a list")


def set_field(scene, path, value):
    """Sets the scene's value at a dotted path (see the module docstring). Missing objects on
    the way are made (an optional section such as integrator.newton); list indices and names
    must exist. The scene's reader judges the result (an unknown key is its error)."""
    tokens = _path_tokens(path)
    node = scene
    for tok in tokens[:-1]:
        key = _child(node, tok, path)
        if isinstance(node, dict) and key not in node:
            node[key] = {}
        node = node[key]
    node[_child(node, tokens[-1], path)] = value


def _normalize_grid(grid):
    if isinstance(grid, dict):
        grid = list(grid.items())
    out = []
    for item in grid:
        if isinstance(item, str):
            out += parse_grid([item])
        else:
            field, values = item
            out.append((str(field), list(values)))
    reserved = {"run"} | set(SUMMARY_COLUMNS)
    for field, values in out:
        if field in reserved:
            raise ValueError(f"grid field '{field}' has the name of a summary column")
        if not values:
            raise ValueError(f"grid field '{field}': no values")
    if len({f for f, _ in out}) != len(out):
        raise ValueError("a grid field is given twice")
    return out


# ---- one run -------------------------------------------------------------------------------
def _num(v):
    return "%.17g" % v


def _write(path, text):
    """Writes whole, under a temporary name first (as the program's outputs)."""
    tmp = path + ".part"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def _plain_value(v):
    return v if isinstance(v, (int, float, str, bool)) or v is None else json.dumps(v)


def run_one(run, scene, overrides, base_dir, run_dir, duration=None, backend=None):
    """Runs one combination: the scene with overrides [(field, value), ...] applied, in run_dir;
    returns its row of the table (a dict). Never raises for a bad run: its status and error say
    what happened."""
    import numpy as np

    import slender

    t_start = time.perf_counter()
    row = {"run": run}
    for field, value in overrides:
        row[field] = _plain_value(value)
    row.update({c: math.nan for c in SUMMARY_COLUMNS})
    row.update(status="error", error="", host=socket.gethostname(), steps=0,
               newton_iters=0, steps_without_iteration=0, dt_halvings=0)
    os.makedirs(run_dir, exist_ok=True)

    def finish(status, error=""):
        row["status"], row["error"] = status, error
        _write(os.path.join(run_dir, "summary.json"), json.dumps(row, indent=1) + "\n")
        return row

    # the scene as it runs
    scene = copy.deepcopy(scene)
    try:
        for field, value in overrides:
            set_field(scene, field, value)
        if duration is not None:
            scene.setdefault("integrator", {})["duration"] = duration
        if backend is not None:
            scene["backend"] = backend
        # every run records its energies; VTK frames only where the scene asks for them
        output = scene.setdefault("output", {})
        if not isinstance(output, dict):
            raise ValueError(f"output: expected an object, got {type(output).__name__}")
        output["energies"] = True
        output.setdefault("vtk", False)
        slender.scene._check_finite(scene, "")  # JSON has no NaN: named before the reader
        text = json.dumps(scene, indent=1, default=slender.scene._plain)
        scene_file = os.path.join(run_dir, "scene.json")
        _write(scene_file, text + "\n")
    except (ValueError, TypeError) as e:
        return finish("input-error", str(e))

    try:
        # what build_model(scene) does, with the errors naming the file written above
        model = slender._core._build_model_text(text, scene_file, base_dir, None, None)
        sim = slender.Simulator(model, backend=scene.get("backend", "cpu"))
    except ValueError as e:
        return finish("input-error", str(e))
    except Exception as e:  # noqa: BLE001 - a CUDA backend that cannot run here, ...
        return finish("error", f"{type(e).__name__}: {e}")
    row["build_s"] = time.perf_counter() - t_start
    row["nnode"], row["nfree"] = model.nnode, model.nfree

    # the run loop of `slender run` (host/run.cpp, Simulator.run), its outputs into run_dir
    wall0 = time.perf_counter()
    try:
        res = sim.run(out_dir=str(run_dir))
        e = sim.energies()
    except Exception as e:  # noqa: BLE001 - an error inside a step (a callback, the backend)
        row["wall_s"] = time.perf_counter() - wall0
        return finish("error", f"{type(e).__name__}: {e}")
    row["wall_s"] = time.perf_counter() - wall0
    for k in ("steps", "newton_iters", "steps_without_iteration", "dt_halvings"):
        row[k] = res[k]
    status, error = ("done", "") if res["ok"] else ("step-failed", res["message"])

    # the final state's measures
    x, v = np.asarray(sim.positions), np.asarray(sim.velocities)
    mass = np.asarray(model.node_mass)
    com = mass @ x / mass.sum()
    row.update(sim_time=sim.time, com_x=com[0], com_y=com[1], com_z=com[2],
               max_displacement=float(np.linalg.norm(x - model.initial_positions, axis=1).max()),
               max_speed=float(np.linalg.norm(v, axis=1).max()))
    for k in ("kinetic", "stretch", "bend", "twist", "gravity"):
        row[k] = e[k]
    row["total"] = e["kinetic"] + e["stretch"] + e["bend"] + e["twist"] + e["gravity"]
    row.update({k: float(row[k]) for k in SUMMARY_COLUMNS
                if isinstance(row[k], (np.floating, np.integer))})

    lines = ["node,x,y,z,vx,vy,vz"]
    for n in range(model.nnode):
        lines.append(",".join([str(n)] + [_num(c) for c in (*x[n], *v[n])]))
    _write(os.path.join(run_dir, "final_state.csv"), "\n".join(lines) + "\n")
    return finish(status, error)


def _run_one_args(args):
    return run_one(*args)


def _crashed_row(run, overrides, why):
    row = {"run": run}
    for field, value in overrides:
        row[field] = _plain_value(value)
    row.update({c: math.nan for c in SUMMARY_COLUMNS})
    row.update(status="crashed", error=why, host="")
    return row


# ---- the study -----------------------------------------------------------------------------
def _read_scene(scene, base_dir):
    if isinstance(scene, dict):
        return copy.deepcopy(scene), os.path.abspath(base_dir or os.getcwd()), "<scene dict>"
    path = os.fspath(scene)
    try:
        with open(path) as f:
            data = json.load(f)
    except OSError as e:
        raise ValueError(f"{path}: cannot read the scene: {e.strerror}") from e
    except ValueError as e:
        raise ValueError(f"{path}: not a JSON scene: {e}") from e
    if not isinstance(data, dict):
        raise ValueError(f"{path}: a scene is a JSON object")
    return data, os.path.abspath(base_dir or os.path.dirname(os.path.abspath(path))), path


def _import_ray():
    try:
        import ray
    except ImportError as e:
        raise RuntimeError("Ray is not installed (python3 -m pip install ray); --local runs the "
                           "sweep on this machine without it") from e
    return ray


def run_sweep(scene, grid, out_dir="sweep", duration=None, backend=None, base_dir=None,
              address=None, local=False, jobs=1, num_cpus=1, num_gpus=None, retries=0,
              overwrite=False, log=None):
    """Runs the scene for every combination of the grid and returns the table's rows (a list of
    dicts, in run order), also written to out_dir/sweep.csv (and sweep.parquet with pyarrow).

    scene: a scene file's path or a dict of the scene format (then relative file paths in it
        resolve against base_dir, default the working directory).
    grid: {field: [values]} or [(field, [values]), ...] or ["FIELD=V1,V2", ...]; the runs are
        the product of the value lists, the last field varying fastest.
    duration, backend: override the scene's integrator duration and backend in every run.
    address: a Ray cluster's address; None joins the cluster that RAY_ADDRESS names or that
        runs on this machine, else starts a local one; a Ray initialized already in this
        process is used as it is.
    local: run without Ray, in this process one after the other (jobs=1) or in a pool of jobs
        processes.
    num_cpus, num_gpus: each Ray task's request (num_gpus defaults to 1 with backend cuda).
    retries: Ray's max_retries for a task whose worker died (0: such a run is a 'crashed' row).
    overwrite: allow an out_dir that is not empty (files of the same names are replaced).
    log: a function taking a line of progress (None: quiet).
    """
    scene, base_dir, source = _read_scene(scene, base_dir)
    grid = _normalize_grid(grid)
    for field, values in grid:
        for value in values:
            set_field(copy.deepcopy(scene), field, value)  # a bad path: before any run
    if local and address:
        raise ValueError("local and address exclude each other")
    out_dir = os.path.abspath(out_dir)
    if os.path.isdir(out_dir) and os.listdir(out_dir) and not overwrite:
        raise ValueError(f"{out_dir} is not empty (overwrite=True / --force writes into it)")
    os.makedirs(out_dir, exist_ok=True)
    combos = list(itertools.product(*[values for _, values in grid]))
    fields = [f for f, _ in grid]
    width = max(4, len(str(len(combos) - 1)))
    tasks = []
    for i, combo in enumerate(combos):
        run = f"run_{i:0{width}d}"
        tasks.append((run, list(zip(fields, combo)), os.path.join(out_dir, run)))
    _write(os.path.join(out_dir, "sweep.json"), json.dumps(
        {"scene": source, "base_dir": base_dir, "grid": [[f, v] for f, v in grid],
         "duration": duration, "backend": backend, "runs": len(tasks)}, indent=1) + "\n")
    say = log or (lambda line: None)
    say(f"sweep: {len(tasks)} runs of {source} into {out_dir}")

    rows = [None] * len(tasks)

    def done(i, row):
        rows[i] = row
        left = sum(r is None for r in rows)
        note = f" ({row['error']})" if row["status"] != "done" else ""
        say(f"sweep: {row['run']} {row['status']}{note}; {len(tasks) - left}/{len(tasks)}")

    args = [(run, scene, ov, base_dir, run_dir, duration, backend) for run, ov, run_dir in tasks]
    if local and jobs <= 1:
        for i, a in enumerate(args):
            done(i, run_one(*a))
    elif local:
        _run_pool(args, tasks, jobs, done)
    else:
        eff_backend = backend or scene.get("backend", "cpu")
        gpus = num_gpus if num_gpus is not None else (1 if eff_backend == "cuda" else 0)
        _run_ray(args, tasks, address, num_cpus, gpus, retries, done)

    _write_table(rows, fields, out_dir, say)
    return rows


def _run_pool(args, tasks, jobs, done):
    import concurrent.futures as cf
    import multiprocessing

    # spawn, not fork: a forked child of a process whose OpenMP threads ran may hang
    with cf.ProcessPoolExecutor(max_workers=jobs,
                                mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = {pool.submit(_run_one_args, a): i for i, a in enumerate(args)}
        for fut in cf.as_completed(futures):
            i = futures[fut]
            try:
                done(i, fut.result())
            except Exception as e:  # noqa: BLE001 - the worker process died
                done(i, _crashed_row(tasks[i][0], tasks[i][1], f"{type(e).__name__}: {e}"))


def _run_ray(args, tasks, address, num_cpus, num_gpus, retries, done):
    ray = _import_ray()
    started = False
    if not ray.is_initialized():
        # no address: Ray joins RAY_ADDRESS or a cluster running on this machine, else starts one
        ray.init(address=address, logging_level=logging.WARNING)
        started = True
    refs = []
    try:
        task = ray.remote(run_one).options(num_cpus=num_cpus, num_gpus=num_gpus,
                                           max_retries=retries)
        scene_ref = ray.put(args[0][1])  # the scene crosses the network once
        refs = [task.remote(a[0], scene_ref, *a[2:]) for a in args]
        index = {ref: i for i, ref in enumerate(refs)}
        pending = list(refs)
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            for ref in ready:
                i = index[ref]
                try:
                    done(i, ray.get(ref))
                except ray.exceptions.RayError as e:
                    text = str(e).strip().splitlines()
                    done(i, _crashed_row(tasks[i][0], tasks[i][1], f"{type(e).__name__}: "
                                         f"{text[0] if text else ''}"))
        refs = []
    finally:
        for ref in refs:  # an interrupt or an error here: no task keeps running for nothing
            try:
                ray.cancel(ref, force=True)
            except Exception:  # noqa: BLE001 - finished already
                pass
        if started:
            ray.shutdown()


def _write_table(rows, fields, out_dir, say):
    import csv

    columns = ["run"] + fields + SUMMARY_COLUMNS
    path = os.path.join(out_dir, "sweep.csv")
    with open(path + ".part", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=columns)
        w.writeheader()
        for row in rows:
            w.writerow({c: ("" if isinstance(row.get(c), float) and math.isnan(row[c])
                            else row.get(c)) for c in columns})
    os.replace(path + ".part", path)
    written = [path]
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        pa = None
    if pa is not None:
        cols = {}
        for c in columns:
            vals = [row.get(c) for row in rows]
            kinds = {type(v) for v in vals if v is not None}
            if len(kinds) > 1 and not kinds <= {int, float}:
                vals = [None if v is None else str(v) for v in vals]  # a mixed grid column
            elif kinds == {int, float}:
                vals = [float(v) for v in vals]
            cols[c] = vals
        pq.write_table(pa.table(cols), os.path.join(out_dir, "sweep.parquet"))
        written.append(os.path.join(out_dir, "sweep.parquet"))
    counts = {}
    for row in rows:
        counts[row["status"]] = counts.get(row["status"], 0) + 1
    say("sweep: " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())) + "; table in "
        + " and ".join(written))


# ---- the command line ----------------------------------------------------------------------
def _parser():
    p = argparse.ArgumentParser(
        prog="slender sweep",
        description="Runs a scene for every combination of a grid of values (as Ray tasks, or "
                    "locally with --local) and writes one summary table (DIR/sweep.csv) and "
                    "each run's outputs (DIR/run_NNNN/). Also: python3 -m slender.sweep.")
    p.add_argument("scene", help="the scene file (JSON)")
    p.add_argument("--grid", action="append", required=True, metavar="FIELD=V1,V2,...",
                   help="a dotted path into the scene (materials.0.youngs_modulus, "
                        "rods[0].radius, materials.rubber.density) and its values; repeat for "
                        "more fields (every combination runs)")
    p.add_argument("--address", help="the Ray cluster's address (default: RAY_ADDRESS, or the "
                                     "cluster running on this machine, or a new local one)")
    p.add_argument("--local", action="store_true", help="run without Ray, on this machine")
    p.add_argument("--jobs", type=int, default=1,
                   help="with --local: runs at a time in separate processes (default 1)")
    p.add_argument("--out", default="sweep", metavar="DIR",
                   help="the study's folder (default: sweep); must be empty unless --force")
    p.add_argument("--duration", type=float, metavar="T", help="simulated time of each run [s]")
    p.add_argument("--backend", choices=["cpu", "cuda"], help="default: the scene's")
    p.add_argument("--num-cpus", type=float, default=1, help="CPUs per Ray task (default 1)")
    p.add_argument("--num-gpus", type=float, help="GPUs per Ray task (default 1 with cuda)")
    p.add_argument("--retries", type=int, default=0,
                   help="Ray retries of a run whose worker died (default 0)")
    p.add_argument("--force", action="store_true", help="write into a folder that is not empty")
    p.add_argument("--quiet", "-q", action="store_true", help="print nothing but errors")
    return p


def main(argv=None):
    """The command line; exit codes: 0 every run done, 3 some run did not finish (the table is
    complete), 2 bad arguments, scene or grid, or Ray missing without --local, 1 other errors."""
    args = _parser().parse_args(argv)
    if args.local and args.address:
        print("slender sweep: --local and --address exclude each other", file=sys.stderr)
        return 2
    if args.duration is not None and not (args.duration >= 0 and math.isfinite(args.duration)):
        print("slender sweep: --duration must be a time of 0 s or more", file=sys.stderr)
        return 2
    if not args.local:
        try:
            _import_ray()
        except RuntimeError as e:
            print(f"slender sweep: {e}", file=sys.stderr)
            return 2
    log = None if args.quiet else (lambda line: print(line, file=sys.stderr, flush=True))
    try:
        rows = run_sweep(args.scene, parse_grid(args.grid), out_dir=args.out,
                         duration=args.duration, backend=args.backend, address=args.address,
                         local=args.local, jobs=args.jobs, num_cpus=args.num_cpus,
                         num_gpus=args.num_gpus, retries=args.retries, overwrite=args.force,
                         log=log)
    except ValueError as e:
        print(f"slender sweep: {e}", file=sys.stderr)
        return 2
    except Exception as e:  # noqa: BLE001 - e.g. a cluster that cannot be reached
        print(f"slender sweep: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    return 0 if all(r["status"] == "done" for r in rows) else 3


if __name__ == "__main__":
    # run the module's own functions (slender.sweep.run_one), so that Ray and the process pool
    # find them by name in their workers
    from slender.sweep import main as _main

    sys.exit(_main())
