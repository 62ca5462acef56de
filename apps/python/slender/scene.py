"""Scenes made in Python: from a dict of the JSON scene format, from a JSON string, or with
``SceneBuilder``, whose methods mirror the C++ ``SceneBuilder`` (include/slender/builder.h).

Every way ends in the same reader as a scene file (docs/scene_format.md), so a scene made in
Python and the same scene written as JSON build the same model, and every error is the reader's:
a ``ValueError`` naming the field (``rods[0].shape.nodes: ...``).

    import numpy as np, slender
    b = slender.SceneBuilder("net")
    steel = b.material("steel", density=7850, youngs_modulus=2e11, poisson_ratio=0.3)
    b.network("net", nodes=np.array(...), edges=np.array(...), material=steel,
              section=b.circle(1e-3))
    b.fix_nodes("net", [0, 1])
    b.gravity([0, 0, -9.81])
    b.integrator(dt=1e-3, duration=0.5)
    model = b.build()          # or slender.build_model(b.to_dict())
"""

import copy
import json
import math
import os

import numpy as np

from . import _core

__all__ = ["SceneBuilder", "build_model"]


def _plain(x):
    """numpy arrays and scalars as Python lists and numbers (for json.dumps)."""
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, np.generic):
        return x.item()
    raise TypeError(f"a {type(x).__name__} is not a scene value (numbers, strings, lists, dicts)")


def _check_finite(x, path):
    """A ValueError naming the first NaN or infinity (JSON has neither)."""
    if isinstance(x, dict):
        for k, v in x.items():
            _check_finite(v, f"{path}.{k}" if path else str(k))
    elif isinstance(x, (list, tuple)):
        for i, v in enumerate(x):
            _check_finite(v, f"{path}[{i}]")
    elif isinstance(x, np.ndarray) and x.dtype.kind == "f":
        bad = np.argwhere(~np.isfinite(x))
        if len(bad):
            raise ValueError(f"{path}{''.join(f'[{i}]' for i in bad[0])}: not a finite number")
    elif isinstance(x, (float, np.floating)) and not math.isfinite(x):
        raise ValueError(f"{path}: not a finite number, got {x}")


def build_model(scene, base_dir=None, dt=None, duration=None):
    """Builds a Model from a scene: a dict of the JSON scene format, a JSON string, or a
    SceneBuilder. Relative file paths in it resolve against ``base_dir`` (default: the working
    directory); ``dt`` and ``duration`` override the scene's integrator. Bad input raises
    ValueError naming the field. (A scene file: ``slender.load_model(path)``.)"""
    if isinstance(scene, SceneBuilder):
        scene = scene.to_dict()
    if isinstance(scene, dict):
        _check_finite(scene, "")
        text = json.dumps(scene, indent=1, default=_plain)
        file = "<scene dict>"
    elif isinstance(scene, str):
        text = scene
        file = "<scene text>"
    else:
        raise TypeError(f"a scene is a dict, a JSON string or a SceneBuilder, got "
                        f"{type(scene).__name__}")
    base = os.path.abspath(base_dir if base_dir is not None else os.getcwd())
    return _core._build_model_text(text, file, base, dt, duration)


class SceneBuilder:
    """A scene in code: each method adds what the JSON key of the same meaning adds
    (docs/scene_format.md) and returns the name of what it made (a material or a part), by which
    later calls refer to it. Nodes are indices within a part (negative ones count from its
    end). Optional keys of a part that have no argument here (``stiffness``, ``frame_normal``,
    ``natural_curvature``, ``springs``, ``contact_thickness``, ``stretching`` (a hyperelastic
    law), ``damping`` (the part's Rayleigh beta, Kelvin-Voigt eta), ``youngs_modulus`` (its modulus in time), ...)
    are passed as keyword arguments, as the JSON names them:
    ``b.straight_rod(..., stretching={"law": "ogden", "alpha": 1.33, "scale": 2.27})``."""

    def __init__(self, name="scene"):
        self._d = {"name": name, "materials": []}

    # ---- the scene -----------------------------------------------------------------------
    def name(self, name):
        self._d["name"] = name
        return self

    def backend(self, backend):
        """"cpu" or "cuda"."""
        self._d["backend"] = backend
        return self

    def to_dict(self):
        """The scene as a dict of the JSON scene format (a copy)."""
        return copy.deepcopy(self._d)

    def to_json(self, **kwargs):
        """The scene as JSON text (what a scene file would hold)."""
        return json.dumps(self._d, default=_plain, **kwargs)

    def build(self, base_dir=None, dt=None, duration=None):
        """The Model of this scene (build_model)."""
        return build_model(self._d, base_dir=base_dir, dt=dt, duration=duration)

    # ---- materials and cross-sections ----------------------------------------------------
    def material(self, name, density, youngs_modulus, poisson_ratio):
        self._d["materials"].append({"name": name, "density": density,
                                     "youngs_modulus": youngs_modulus,
                                     "poisson_ratio": poisson_ratio})
        return name

    @staticmethod
    def circle(radius):
        """A circular rod section [m]."""
        return {"radius": radius}

    @staticmethod
    def rectangle(width, height):
        """A rectangular rod section [m]."""
        return {"cross_section": {"width": width, "height": height}}

    # ---- parts ---------------------------------------------------------------------------
    def _part(self, group, name, material, section, fields, extra):
        part = {"name": name, "material": material}
        if section is not None:
            if not isinstance(section, dict):
                raise TypeError("section: SceneBuilder.circle(r) or SceneBuilder.rectangle(w, h)")
            part.update(section)
        part.update({k: v for k, v in fields.items() if v is not None})
        part.update(extra)
        self._d.setdefault(group, []).append(part)
        return name

    def straight_rod(self, name, start, end, nodes, material, section, **extra):
        shape = {"type": "straight", "start": start, "end": end, "nodes": nodes}
        return self._part("rods", name, material, section, {"shape": shape}, extra)

    def polyline_rod(self, name, points, material, section, closed=False, max_edge_length=None,
                     **extra):
        """Exactly these nodes (closed: an edge back to the first), or with max_edge_length
        each segment split evenly."""
        if max_edge_length is not None:
            if closed:
                raise ValueError("polyline_rod: closed with max_edge_length is not offered")
            shape = {"type": "polyline", "points": points, "max_edge_length": max_edge_length}
        else:
            shape = {"type": "nodes", "points": points, "closed": bool(closed)}
        return self._part("rods", name, material, section, {"shape": shape}, extra)

    def helix_rod(self, name, axis, radius, pitch, length, nodes, material, section,
                  center=(0, 0, 0), **extra):
        shape = {"type": "helix", "center": center, "axis": axis, "radius": radius,
                 "pitch": pitch, "length": length, "nodes": nodes}
        return self._part("rods", name, material, section, {"shape": shape}, extra)

    def network(self, name, nodes, edges, material, section, triangles=None, thickness=None,
                bending=None, membrane=None, **extra):
        """Nodes (n x 3) joined by rod edges (m x 2, 0-based); with triangles (k x 3) and a
        thickness, a rod + shell structure."""
        fields = {"nodes": nodes, "edges": edges, "triangles": triangles,
                  "thickness": thickness, "bending": bending, "membrane": membrane}
        return self._part("networks", name, material, section, fields, extra)

    def geometry_file(self, name, path, material, section, **extra):
        """A network from a MAT-DiSMech geometry file."""
        return self._part("networks", name, material, section, {"file": path}, extra)

    def _shell(self, name, mesh, material, thickness, bending, membrane, extra):
        # membrane: "neo_hookean" (the reader's default when None), "stvk" or "springs"
        fields = {"thickness": thickness, "bending": bending, "membrane": membrane, "mesh": mesh}
        return self._part("shells", name, material, None, fields, extra)

    def mesh_shell(self, name, nodes, triangles, material, thickness, bending="hinge",
                   membrane=None, **extra):
        """A shell of these nodes (n x 3) and triangles (k x 3, 0-based, counterclockwise about
        the normal)."""
        mesh = {"type": "mesh", "nodes": nodes, "triangles": triangles}
        return self._shell(name, mesh, material, thickness, bending, membrane, extra)

    def rectangle_shell(self, name, u, v, edge_length, material, thickness, origin=(0, 0, 0),
                        structured=True, bending="hinge", membrane=None, **extra):
        mesh = {"type": "rectangle", "origin": origin, "u": u, "v": v,
                "edge_length": edge_length, "structured": bool(structured)}
        return self._shell(name, mesh, material, thickness, bending, membrane, extra)

    def disk_shell(self, name, normal, radius, edge_length, material, thickness,
                   center=(0, 0, 0), bending="hinge", membrane=None, **extra):
        mesh = {"type": "disk", "center": center, "normal": normal, "radius": radius,
                "edge_length": edge_length}
        return self._shell(name, mesh, material, thickness, bending, membrane, extra)

    def hexagon_shell(self, name, normal, side, edge_length, material, thickness,
                      center=(0, 0, 0), bending="hinge", membrane=None, **extra):
        mesh = {"type": "hexagon", "center": center, "normal": normal, "side": side,
                "edge_length": edge_length}
        return self._shell(name, mesh, material, thickness, bending, membrane, extra)

    def hemisphere_shell(self, name, axis, radius, edge_length, material, thickness,
                         center=(0, 0, 0), bending="hinge", membrane=None, **extra):
        mesh = {"type": "hemisphere", "center": center, "axis": axis, "radius": radius,
                "edge_length": edge_length}
        return self._shell(name, mesh, material, thickness, bending, membrane, extra)

    def mesh_file_shell(self, name, path, material, thickness, bending="hinge", membrane=None,
                        **extra):
        """A shell from an .obj, .ply or MAT-DiSMech .txt mesh file."""
        return self._shell(name, {"type": "file", "path": path}, material, thickness, bending,
                           membrane, extra)

    # ---- joints and boundary conditions --------------------------------------------------
    def joint(self, *nodes):
        """Merges part nodes into one: joint(("arm", -1), ("hub", 0))."""
        self._d.setdefault("joints", []).append(
            [{"part": part, "node": node} for part, node in nodes])
        return self

    def _boundary(self, key, entry):
        self._d.setdefault("boundary", {}).setdefault(key, []).append(entry)
        return self

    def fix_nodes(self, part, nodes):
        """Positions fixed."""
        return self._boundary("fixed_nodes", {"part": part, "nodes": list(np.atleast_1d(nodes))})

    def fix_edges(self, part, edges):
        """Rod edges clamped: both nodes and the twist (a clamp at each edge's middle)."""
        return self._boundary("fixed_edges", {"part": part, "edges": list(np.atleast_1d(edges))})

    def clamp(self, part, node):
        """A rod's end built in at the node itself (node 0 or -1): its position, tangent and
        material frame held."""
        return self._boundary("clamps", {"part": part, "node": node})

    def fix_shell_edges(self, part, nodes):
        """A shell clamp along these nodes (docs/scene_format.md, "Shells")."""
        return self._boundary("fixed_edges", {"part": part, "nodes": list(np.atleast_1d(nodes))})

    def fix_twist(self, part, edges):
        return self._boundary("fixed_twist", {"part": part, "edges": list(np.atleast_1d(edges))})

    def fix_dofs(self, part, node, components):
        """Some of a node's coordinates fixed: components a string of x, y, z."""
        return self._boundary("fixed_dofs", {"part": part, "node": node,
                                             "components": components})

    def motion(self, part, nodes=None, edges=None, translation=None, twist=None, time=None):
        """Prescribed motion of fixed nodes (translation [m]) or edges (twist [rad]), scaled by
        a time function ({"type": "sine", "frequency": 2}, ...)."""
        m = {"part": part}
        for k, v in (("nodes", nodes), ("edges", edges), ("translation", translation),
                     ("twist", twist), ("time", time)):
            if v is not None:
                m[k] = list(np.atleast_1d(v)) if k in ("nodes", "edges") else v
        return self._boundary("motions", m)

    def event(self, time, fix=None, release=None):
        """A boundary event (docs/scene_format.md, "Boundary events"): at `time` [s] the DOFs
        a selection names are fixed (fix=...: held where they are) or released (release=...: on
        with their velocity). A selection is a dict with the boundary block's keys, e.g.
        {"fixed_nodes": [{"part": "rod", "nodes": [30]}]}."""
        e = {"time": time}
        if fix is not None:
            e["fix"] = fix
        if release is not None:
            e["release"] = release
        return self._boundary("events", e)

    # ---- forces, contact, actuation ------------------------------------------------------
    def _forces(self, key, value):
        self._d.setdefault("forces", {})[key] = value
        return self

    def gravity(self, g):
        return self._forces("gravity", g)

    def point_load(self, part, node, force, time=None):
        load = {"part": part, "node": node, "force": force}
        if time is not None:
            load["time"] = time
        self._d.setdefault("forces", {}).setdefault("point_loads", []).append(load)
        return self

    def viscosity(self, eta):
        """Viscous drag F = -eta dl u [Pa s]."""
        return self._forces("viscous_drag", {"viscosity": eta})

    def mass_damping(self, alpha):
        """F = -alpha M u [1/s]."""
        self._d.setdefault("forces", {}).setdefault("damping", {})["mass_proportional"] = alpha
        return self

    def stiffness_damping(self, beta):
        """Rayleigh stiffness damping F = -beta K u of every part [s] (a part's own: the keyword
        damping={"stiffness_proportional": beta} of the part's method)."""
        self._d.setdefault("forces", {}).setdefault("damping", {})["stiffness_proportional"] = beta
        return self

    def kelvin_voigt(self, eta):
        """Kelvin-Voigt strain-rate damping of every part: a viscous stress eta d(eps)/dt on
        each elastic strain [Pa s] (a part's own: damping={"kelvin_voigt": eta})."""
        self._d.setdefault("forces", {}).setdefault("damping", {})["kelvin_voigt"] = eta
        return self

    def buoyancy(self, medium_density):
        return self._forces("buoyancy", {"medium_density": medium_density})

    def aerodynamic_drag(self, coefficient, medium_density):
        return self._forces("aerodynamic_drag", {"coefficient": coefficient,
                                                 "medium_density": medium_density})

    def resistive_force(self, tangential, normal):
        """Resistive force theory on rod edges [N s/m^2]."""
        return self._forces("resistive_force", {"tangential": tangential, "normal": normal})

    def distributed_load(self, part, force_per_length, time=None):
        """A force per length [N/m] (world frame) on every rod edge of a part, times the time
        function s(t) if given: forces.distributed_loads."""
        load = {"part": part, "force_per_length": force_per_length}
        if time is not None:
            load["time"] = time
        self._d.setdefault("forces", {}).setdefault("distributed_loads", []).append(load)
        return self

    def added_mass(self, coefficient, parts=None):
        """Added mass in the buoyancy's fluid: C_a rho_med V per node of the listed parts (all
        if None), inertia only: forces.added_mass."""
        entry = {"coefficient": coefficient}
        if parts is not None:
            entry["parts"] = list(parts)
        return self._forces("added_mass", entry)

    def family(self, field, **entry):
        """An entry of a stencil family's own scene field, forces.<field> (docs/extending.md),
        for example family("pressure", part="balloon", pressure=3e3,
        time={"type": "ramp", "duration": 1}): a pressure inside a closed shell [Pa]."""
        self._d.setdefault("forces", {}).setdefault(field, []).append(dict(entry))
        return self

    def ground(self, **ground):
        """The ground, keys as in the scene format (type, point, normal, friction,
        contact_distance, slip_velocity, stiffness, ...)."""
        return self._forces("ground", {"type": "plane", **ground})

    def contact(self, stiffness=0, tolerance=1e-3, **extra):
        """Implicit contact between rods and shells (docs/scene_format.md)."""
        self._d["contact"] = {"stiffness": stiffness, "tolerance": tolerance, **extra}
        return self

    def actuate(self, target, part, amplitude=None, time=None, **extra):
        """A natural shape driven in time (target: hinge_angle, midedge_curvature,
        rod_curvature1, rod_curvature2, rod_twist, rod_stretch); select, wave, ramp_in, (for
        midedge_curvature) direction and series (a CSV of one column per driven spring, in
        place of time; amplitude then defaults to 1) as keywords."""
        entry = {"target": target, "part": part}
        if amplitude is not None:
            entry["amplitude"] = amplitude
        if time is not None:
            entry["time"] = time
        self._d.setdefault("actuation", []).append({**entry, **extra})
        return self

    def controller(self, strain, part, amplitude=None, **extra):
        """A PI controller on a natural strain (strain: rod_curvature1, rod_curvature2,
        rod_twist, rod_stretch, hinge_angle; docs/control.md): its reference as an actuation's
        fields (amplitude, time, wave, ramp_in, select, series, profile) and name, kp, ki,
        filter_time, spatial_smoothing, rate_limit, limits, anti_windup, tracking_time and
        feedforward as keywords."""
        entry = {"strain": strain, "part": part}
        if amplitude is not None:
            entry["amplitude"] = amplitude
        self._d.setdefault("controllers", []).append({**entry, **extra})
        return self

    def point_mass(self, part, node, mass):
        """A point mass [kg] at a node of a part (negative node: from the end): a payload.
        Inertia, gravity and the ground see it; it has no rotational inertia."""
        self._d.setdefault("point_masses", []).append(
            {"part": part, "node": node, "mass": mass})
        return self

    def initial_velocity(self, part, velocity):
        """One velocity for the whole part [m/s], or one per node (n x 3)."""
        for group in ("rods", "networks", "shells"):
            for p in self._d.get(group, []):
                if p["name"] == part:
                    p["initial_velocity"] = velocity
                    return self
        raise ValueError(f"initial_velocity: no part named '{part}'")

    def initial_twist(self, part, angle=None, velocity=None):
        """Initial twist angles [rad] and their velocities [rad/s] of a rod's or network's
        edges: one value for all, or one per edge."""
        for group in ("rods", "networks"):
            for p in self._d.get(group, []):
                if p["name"] == part:
                    for key, v in (("initial_twist_angle", angle),
                                   ("initial_twist_velocity", velocity)):
                        if v is not None:
                            p[key] = {"uniform": v} if np.ndim(v) == 0 else list(v)
                    return self
        raise ValueError(f"initial_twist: no part named '{part}'")

    # ---- integrator and output -----------------------------------------------------------
    def integrator(self, **settings):
        """type, dt, duration, beta, gamma, adaptive, min_dt, two_d, newton={...}."""
        self._d.setdefault("integrator", {}).update(settings)
        return self

    def output(self, **settings):
        """dir, every, vtk_every, vtk, energies, nodes=[{"part": ..., "node": ...}]."""
        self._d.setdefault("output", {}).update(settings)
        return self
