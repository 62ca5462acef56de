"""Plots of a run's tables, drawn without a display (docs/rendering.md).

    python3 -m slender.plot OUT_DIR [--out DIR] [--size WxH]

    from slender.plot import plot_run
    paths = plot_run("out/rod_drop")     # ["out/rod_drop/plots/energies.png", ...]

OUT_DIR is the folder a run wrote. ``energies.csv`` (time, then one column per energy and the
Newton iterations of each record) becomes ``energies.png``: every energy together in the first
panel, then each column in a panel of its own. ``nodes.csv`` (time, then for each tracked node
PART_nINDEX_x, _y, _z, _vx, _vy, _vz) becomes one ``nodes_PART_nINDEX.png`` per node: its
position and its velocity against time. The plots go to OUT_DIR/plots unless ``--out`` says
otherwise. Like slender.render, this file imports nothing from the rest of the package.
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import re
import sys

import numpy as np

__all__ = ["PlotError", "read_table", "plot_energies", "plot_nodes", "plot_run", "main"]

DEFAULT_SIZE = (1000, 700)
NODE_COLUMN = re.compile(r"^(?:(?P<part>.+)_)?n(?P<node>-?\d+)_(?P<what>v?[xyz])$")
NOT_ENERGIES = ("newton_iters",)  # columns of energies.csv that are not energies [J]


class PlotError(ValueError):
    """A table that cannot be read or a plot that cannot be written (the message says which
    file and what is wrong)."""


def _figure(size):
    """A matplotlib figure of ``size`` pixels on the Agg canvas (no display, no pyplot)."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as e:
        raise PlotError(f"slender.plot needs matplotlib ({e}): python3 -m pip install "
                        f"matplotlib") from None
    dpi = 100
    fig = Figure(figsize=(size[0] / dpi, size[1] / dpi), dpi=dpi)
    FigureCanvasAgg(fig)
    return fig


def read_table(path):
    """A CSV table of numbers with a header: (column names, array (rows, columns))."""
    try:
        with open(path, newline="", encoding="utf-8") as f:
            rows = list(csv.reader(f))
    except OSError as e:
        raise PlotError(f"{path}: cannot read ({e.strerror})") from None
    if not rows or not rows[0]:
        raise PlotError(f"{path}: empty (no header line)")
    header = [h.strip() for h in rows[0]]
    if header[0] != "time":
        raise PlotError(f"{path}: the first column is {header[0]!r}, expected 'time'")
    data = []
    for line, row in enumerate(rows[1:], start=2):
        if not row:
            continue
        if len(row) != len(header):
            raise PlotError(f"{path}:{line}: {len(row)} values, the header has {len(header)} "
                            f"columns")
        try:
            data.append([float(v) for v in row])
        except ValueError:
            col = next(k for k, v in enumerate(row) if not _number(v))
            raise PlotError(f"{path}:{line}: column {header[col]!r} holds {row[col]!r}, which "
                            f"is not a number") from None
    if not data:
        raise PlotError(f"{path}: no rows after the header")
    return header, np.array(data)


def _number(text):
    try:
        float(text)
        return True
    except ValueError:
        return False


def _save(fig, path):
    """Write a figure as PNG under a temporary name, then rename it."""
    d, base = os.path.split(path)
    tmp = os.path.join(d, f".{os.path.splitext(base)[0]}.{os.getpid()}.part.png")
    try:
        fig.savefig(tmp, format="png", dpi=fig.dpi)
        os.replace(tmp, path)
    except OSError as e:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise PlotError(f"cannot write {path}: {e.strerror or e}") from None
    return path


def _run_name(csv_path):
    """The name of the run's folder for a title: bytes that are not UTF-8 (which Python keeps as
    lone surrogates, and matplotlib cannot draw) shown as U+FFFD."""
    name = os.path.basename(os.path.dirname(os.path.abspath(csv_path)))
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def plot_energies(csv_path, png_path, size=DEFAULT_SIZE):
    """energies.csv as a PNG: all energies in one panel, then one panel per column."""
    header, data = read_table(csv_path)
    t = data[:, 0]
    cols = header[1:]
    energies = [c for c in cols if c not in NOT_ENERGIES]
    panels = ([None] if energies else []) + cols
    ncols = 2 if len(panels) > 1 else 1
    nrows = math.ceil(len(panels) / ncols)
    fig = _figure(size)
    axes = fig.subplots(nrows, ncols, sharex=True, squeeze=False)
    for ax, col in zip(axes.flat, panels):
        if col is None:
            for c in energies:
                ax.plot(t, data[:, header.index(c)], label=c, lw=1.2)
            ax.set_title("energies together [J]", fontsize=9)
            ax.legend(fontsize=7, ncol=2, loc="best")
        else:
            y = data[:, header.index(col)]
            if col == "newton_iters":
                ax.step(t, y, where="post", lw=1, color="tab:gray")
                ax.set_title("Newton iterations per record", fontsize=9)
            else:
                ax.plot(t, y, lw=1.2)
                ax.set_title(f"{col} [J]", fontsize=9)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[len(panels):]:
        ax.set_visible(False)
    for ax in axes[-1]:
        ax.set_xlabel("time [s]", fontsize=8)
    fig.suptitle(_run_name(csv_path) +
                 ": energies.csv", fontsize=11)
    fig.tight_layout()
    return _save(fig, png_path)


def node_groups(header):
    """The columns of nodes.csv grouped by node: {'PART_nINDEX': {'x': k, 'vx': k, ...}}, in
    the order of the header; columns of another form are grouped under 'other'."""
    groups = {}
    for k, name in enumerate(header[1:], start=1):
        m = NODE_COLUMN.match(name)
        if m:
            key = (m.group("part") + "_" if m.group("part") else "") + "n" + m.group("node")
            groups.setdefault(key, {})[m.group("what")] = k
        else:
            groups.setdefault("other", {})[name] = k
    return groups


def plot_nodes(csv_path, out_dir, size=DEFAULT_SIZE):
    """nodes.csv as one PNG per tracked node (position and velocity against time)."""
    header, data = read_table(csv_path)
    t = data[:, 0]
    written = []
    for key, cols in node_groups(header).items():
        pos = [c for c in ("x", "y", "z") if c in cols]
        vel = [c for c in ("vx", "vy", "vz") if c in cols]
        rest = [c for c in cols if c not in pos + vel]
        panels = [(p, u) for p, u in ((pos, "position [m]"), (vel, "velocity [m/s]"),
                                      (rest, "value")) if p]
        fig = _figure(size)
        axes = fig.subplots(len(panels), 1, sharex=True, squeeze=False)[:, 0]
        for ax, (names, label) in zip(axes, panels):
            for c in names:
                ax.plot(t, data[:, cols[c]], lw=1.2, label=c)
            ax.set_ylabel(label, fontsize=9)
            ax.legend(fontsize=8, loc="best")
            ax.grid(alpha=0.3)
            ax.tick_params(labelsize=8)
        axes[-1].set_xlabel("time [s]", fontsize=9)
        fig.suptitle(f"{_run_name(csv_path)}: "
                     f"node {key}", fontsize=11)
        fig.tight_layout()
        safe = re.sub(r"[^A-Za-z0-9_.-]", "_", key)
        written.append(_save(fig, os.path.join(out_dir, f"nodes_{safe}.png")))
    return written


def _parse_size(size):
    if isinstance(size, str):
        try:
            w, h = (int(s) for s in size.lower().split("x"))
        except ValueError:
            raise PlotError(f"size {size!r}: expected WIDTHxHEIGHT, e.g. 1000x700") from None
    else:
        w, h = (int(s) for s in size)
    if not (200 <= w <= 8192 and 150 <= h <= 8192):
        raise PlotError(f"size {w}x{h}: width 200 to 8192, height 150 to 8192 pixels")
    return w, h


def plot_run(out_dir, out=None, size=DEFAULT_SIZE):
    """Plot OUT_DIR/energies.csv and OUT_DIR/nodes.csv (those that exist) into ``out``
    (default OUT_DIR/plots); returns the paths written."""
    out_dir = os.fspath(out_dir)
    if not os.path.isdir(out_dir):
        raise PlotError(f"{out_dir}: no such folder")
    size = _parse_size(size)
    energies = os.path.join(out_dir, "energies.csv")
    nodes = os.path.join(out_dir, "nodes.csv")
    have = [p for p in (energies, nodes) if os.path.isfile(p)]
    if not have:
        raise PlotError(f"{out_dir}: neither energies.csv nor nodes.csv (is it the --out "
                        f"folder of a run?)")
    out = os.path.join(out_dir, "plots") if out is None else os.fspath(out)
    try:
        os.makedirs(out, exist_ok=True)
    except OSError as e:
        raise PlotError(f"cannot write plots into {out}: {e.strerror or e}") from None
    written = []
    if energies in have:
        written.append(plot_energies(energies, os.path.join(out, "energies.png"), size))
    if nodes in have:
        written += plot_nodes(nodes, out, size)
    return written


def main(argv=None):
    """The command line: ``python3 -m slender.plot OUT_DIR [--out DIR] [--size WxH]``."""
    p = argparse.ArgumentParser(
        prog="python3 -m slender.plot",
        description="Plot a run's energies.csv and nodes.csv as PNG images.")
    p.add_argument("out_dir", help="the run's output folder")
    p.add_argument("--out", metavar="DIR", help="where to write the plots (OUT_DIR/plots)")
    p.add_argument("--size", default="%dx%d" % DEFAULT_SIZE, help="WIDTHxHEIGHT in pixels")
    args = p.parse_args(argv)
    try:
        paths = plot_run(args.out_dir, args.out, args.size)
    except PlotError as e:
        print(f"slender.plot: error: {e}", file=sys.stderr)
        return 2
    # the paths as the file system's bytes (a name that is not UTF-8 printed as it is)
    sys.stdout.flush()
    sys.stdout.buffer.write(b"".join(os.fsencode(path) + b"\n" for path in paths))
    sys.stdout.buffer.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
