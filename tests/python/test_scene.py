"""Scenes made in Python (issue 19, item 2): a dict, a JSON string and slender.SceneBuilder
build the same model as the scene file, step for step; numpy arrays make networks and shells;
bad input raises ValueError naming the field; the net example runs."""

import copy
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import slender

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SCENES = os.path.join(ROOT, "apps", "scenes")


def run_steps(model, n):
    sim = slender.Simulator(model)
    for _ in range(n):
        assert sim.step()["status"] == "converged"
    return np.array(sim.positions)


@pytest.mark.parametrize("name", ["rod_drop", "parachute_matdismech"])
def test_dict_and_text_build_the_scene_files_model(name):
    path = os.path.join(SCENES, f"{name}.json")
    with open(path) as f:
        scene = json.load(f)
    from_file = slender.load_model(path)
    # the parachute reads its geometry file relative to the scene's folder
    from_dict = slender.build_model(scene, base_dir=SCENES)
    from_text = slender.build_model(json.dumps(scene), base_dir=SCENES)
    for m in (from_dict, from_text):
        assert (m.nnode, m.nedge, m.ntri, m.nfree) == (from_file.nnode, from_file.nedge,
                                                       from_file.ntri, from_file.nfree)
        np.testing.assert_array_equal(m.initial_positions, from_file.initial_positions)
    np.testing.assert_array_equal(run_steps(from_dict, 5), run_steps(from_file, 5))


def cantilever_builder(nodes=21):
    b = slender.SceneBuilder("cantilever")
    steel = b.material("steel", density=7850, youngs_modulus=2e9, poisson_ratio=0.3)
    beam = b.straight_rod("beam", start=[0, 0, 0], end=[0.1, 0, 0], nodes=nodes, material=steel,
                          section=b.circle(1e-3))
    b.fix_nodes(beam, [0, 1])
    b.gravity([0, 0, -9.81])
    b.integrator(dt=1e-3, duration=0.1)
    return b


def test_builder_equals_the_same_scene_written_as_json():
    b = cantilever_builder()
    text = """{"name": "cantilever",
      "materials": [{"name": "steel", "density": 7850, "youngs_modulus": 2e9,
                     "poisson_ratio": 0.3}],
      "rods": [{"name": "beam", "material": "steel", "radius": 1e-3,
                "shape": {"type": "straight", "start": [0, 0, 0], "end": [0.1, 0, 0],
                          "nodes": 21}}],
      "boundary": {"fixed_nodes": [{"part": "beam", "nodes": [0, 1]}]},
      "forces": {"gravity": [0, 0, -9.81]},
      "integrator": {"dt": 1e-3, "duration": 0.1}}"""
    a, c = b.build(), slender.build_model(text)
    assert a.name == "cantilever" and a.nfree == c.nfree
    np.testing.assert_array_equal(run_steps(a, 10), run_steps(c, 10))
    # the tip has sagged (gravity acts), and dt / duration overrides apply
    assert run_steps(a, 10)[-1, 2] < 0
    assert b.build(dt=5e-4).dt == 5e-4
    # to_dict is a copy; to_json is the same scene
    d = b.to_dict()
    d["rods"][0]["radius"] = 2e-3
    assert b.to_dict()["rods"][0]["radius"] == 1e-3
    assert slender.build_model(b.to_json()).nfree == a.nfree


def test_numpy_arrays_make_networks_and_shells():
    b = slender.SceneBuilder("arrays")
    m = b.material("m", density=1000, youngs_modulus=1e6, poisson_ratio=0.3)
    nodes = np.array([[0, 0, 0], [0.1, 0, 0], [0.2, 0, 0], [0.1, 0.1, 0]], dtype=np.float64)
    edges = np.array([[0, 1], [1, 2], [1, 3]], dtype=np.int64)
    net = b.network("net", nodes=nodes, edges=edges, material=m, section=b.rectangle(2e-3, 1e-3))
    sheet_nodes = np.array([[0, 0, 1], [0.1, 0, 1], [0, 0.1, 1], [0.1, 0.1, 1]])
    sheet = b.mesh_shell("sheet", nodes=sheet_nodes, triangles=np.array([[0, 1, 2], [1, 3, 2]]),
                         material=m, thickness=np.float64(1e-3), bending="mid_edge")
    b.fix_nodes(net, np.array([0]))
    b.fix_shell_edges(sheet, [0, 1])
    b.gravity(np.array([0.0, 0.0, -9.81]))
    b.integrator(dt=1e-3)
    model = b.build()
    assert (model.nnode, model.nedge, model.ntri) == (8, 3, 2)
    np.testing.assert_array_equal(model.initial_positions[:4], nodes)
    np.testing.assert_array_equal(model.initial_positions[4:], sheet_nodes)
    x = run_steps(model, 5)
    assert x[3, 2] < 0 and x[7, 2] < 1  # both fall under gravity


def error_of(scene):
    with pytest.raises(ValueError) as e:
        slender.build_model(scene)
    return str(e.value)


def test_errors_name_the_field():
    b = cantilever_builder(nodes=1)
    assert "rods[0].shape.nodes" in error_of(b)
    d = cantilever_builder().to_dict()
    d["rods"][0]["shape"]["start"] = [0, float("nan"), 0]
    assert error_of(d) == "rods[0].shape.start[1]: not a finite number, got nan"
    d = cantilever_builder().to_dict()
    d["rods"][0]["raduis"] = 1e-3
    msg = error_of(d)
    assert "rods[0].raduis" in msg and "unknown field" in msg
    # a typo in a keyword of the builder reaches the reader, which names it
    b = slender.SceneBuilder()
    b.material("m", 1000, 1e6, 0.3)
    b.straight_rod("r", [0, 0, 0], [1, 0, 0], 5, "m", b.circle(1e-3), stifness={"EA": 1})
    assert "rods[0].stifness" in error_of(b)
    # an unknown material, a bad index row, non-JSON text, a non-scene
    d = cantilever_builder().to_dict()
    d["rods"][0]["material"] = "gold"
    assert "rods[0].material" in error_of(d)
    b = slender.SceneBuilder()
    b.material("m", 1000, 1e6, 0.3)
    b.network("n", nodes=np.zeros((2, 3)) + [[0, 0, 0], [1, 0, 0]], edges=[[0, 1, 1]],
              material="m", section=b.circle(1e-3))
    assert "networks[0].edges[0]: expected 2 node indices, got 3" in error_of(b)
    assert "malformed JSON" in error_of("{\"materials\": [")
    with pytest.raises(TypeError):
        slender.build_model(42)
    arr = np.array([[0.0, 0.0, 0.0], [np.inf, 0, 0]])
    b = slender.SceneBuilder()
    b.material("m", 1000, 1e6, 0.3)
    b.polyline_rod("r", arr, "m", b.circle(1e-3))
    assert error_of(b) == "rods[0].shape.points[1][0]: not a finite number"


def test_relative_paths_resolve_against_base_dir(tmp_path, monkeypatch):
    with open(os.path.join(SCENES, "parachute_matdismech.json")) as f:
        scene = json.load(f)
    # from another working directory the geometry file is not found, and the error says where
    monkeypatch.chdir(tmp_path)
    msg = error_of(copy.deepcopy(scene))
    assert "networks[0].file" in msg and str(tmp_path) in msg
    model = slender.build_model(scene, base_dir=SCENES)
    assert model.ntri > 0 and model.nedge > 0


def test_the_net_example_runs(tmp_path):
    env = dict(os.environ)
    out = subprocess.run([sys.executable, os.path.join(ROOT, "apps", "examples", "net_in_code.py"),
                          "--steps", "60", "--json", str(tmp_path / "net.json")],
                         capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    sag = float(out.stdout.strip().splitlines()[-1].split()[-2])
    assert 1 < sag < 100  # mm: the centre hangs below the corners
    # the written scene is a scene file: it builds the same model
    a = slender.load_model(str(tmp_path / "net.json"))
    assert a.nnode == 90 and a.ntri == 8


def test_rayleigh_damping_from_the_builder():
    b = cantilever_builder()
    b.mass_damping(0.5).stiffness_damping(1e-3)
    b.straight_rod("other", [0, 0.1, 0], [0.1, 0.1, 0], 11, "steel", b.circle(1e-3),
                   damping={"stiffness_proportional": 2e-3})
    b.fix_edges("other", [0])
    d = b.to_dict()["forces"]["damping"]
    assert d == {"mass_proportional": 0.5, "stiffness_proportional": 1e-3}
    m = b.build()
    beta = m.arrays()["node_stiffness_damping"]
    assert beta[0] == 1e-3 and beta[-1] == 2e-3
    assert run_steps(m, 3)[-1, 2] < 0
    # both batches take it, with the same bits
    v, w = slender.BatchedSimulator(m, 2, engine="vectorized"), slender.BatchedSimulator(m, 2)
    for batch in (v, w):
        for _ in range(3):
            assert (batch.step() == 0).all()
    np.testing.assert_array_equal(v.positions(), w.positions())


def test_material_keywords_reach_the_part():
    b = cantilever_builder()
    b.straight_rod("cord", [0, 0.1, 0], [0, 0.1, -0.1], 11, "steel", b.circle(1e-3),
                   stretching={"law": "ogden", "alpha": 1.3308, "scale": 2.2703},
                   youngs_modulus={"time": {"type": "sma", "n": 2.5, "tau": 8, "t_bar": 1.2,
                                            "t0": 0.25}})
    b.fix_edges("cord", [0])
    m = b.build()
    alpha = m.arrays()["edge_stretch_alpha"]
    assert alpha[0] == 0 and alpha[-1] == 1.3308
    assert run_steps(m, 3).shape == (m.nnode, 3)
    bad = cantilever_builder()
    bad.straight_rod("cord", [0, 0.1, 0], [0, 0.1, -0.1], 11, "steel", bad.circle(1e-3),
                     stretching={"law": "ogden"})
    assert "rods[1].stretching.alpha" in error_of(bad)


def test_kelvin_voigt_damping_from_the_builder():
    b = cantilever_builder()
    b.kelvin_voigt(2e4)
    b.straight_rod("other", [0, 0.1, 0], [0.1, 0.1, 0], 11, "steel", b.circle(1e-3),
                   damping={"kelvin_voigt": 0})
    b.fix_edges("other", [0])
    assert b.to_dict()["forces"]["damping"] == {"kelvin_voigt": 2e4}
    m = b.build()
    tau = m.arrays()["node_kelvin_voigt"]
    E = b.to_dict()["materials"][0]["youngs_modulus"]
    assert tau[0] == pytest.approx(2e4 / E) and tau[-1] == 0
    assert run_steps(m, 3)[-1, 2] < 0
    # a negative eta names its field
    b.kelvin_voigt(-1)
    with pytest.raises(ValueError, match="forces.damping.kelvin_voigt"):
        b.build()
    # both batch engines run it, the same bits on each environment
    positions = []
    for engine in ("per-env", "vectorized"):
        batch = slender.BatchedSimulator(m, 2, engine=engine)
        for _ in range(3):
            batch.step()
        positions.append(np.array(batch.positions()))
    np.testing.assert_array_equal(positions[0], positions[1])
    assert positions[0][:, -1, 2].max() < 0  # the tips sag


def test_clamp_at_a_node_from_the_builder():
    # a rod clamped at its end node sags more than the same rod clamped by its first edge: its
    # free length is the whole rod (a clamped edge builds it in at the edge's middle); a clamp at
    # a middle node is a ValueError naming the field
    tips = {}
    for how in ("clamp", "edge"):
        b = slender.SceneBuilder("c")
        m = b.material("m", density=1000, youngs_modulus=1e7, poisson_ratio=0.5)
        b.straight_rod("r", [0, 0, 0], [0.1, 0, 0], 11, m, b.circle(1e-3))
        if how == "clamp":
            b.clamp("r", 0)
        else:
            b.fix_edges("r", [0])
        b.gravity([0, 0, -9.81]).integrator(type="static", dt=0.5, duration=1)
        sim = slender.Simulator(b.build())
        sim.step()
        sim.step()
        tips[how] = -sim.positions[10, 2]
    assert tips["clamp"] > 1.1 * tips["edge"]
    b = slender.SceneBuilder("c")
    m = b.material("m", density=1000, youngs_modulus=1e7, poisson_ratio=0.5)
    b.straight_rod("r", [0, 0, 0], [0.1, 0, 0], 11, m, b.circle(1e-3))
    b.clamp("r", 5)
    with pytest.raises(ValueError, match="clamps.0..node"):
        b.build()


def test_a_pressure_inflates_a_closed_shell_from_the_builder():
    # a regular tetrahedron, counter-clockwise about its outward normals, its centroid held by
    # symmetry: three coordinates of three nodes that stay on their planes
    s = 0.05
    nodes = np.array([[s, s, s], [s, -s, -s], [-s, s, -s], [-s, -s, s]])
    tris = np.array([[0, 1, 2], [0, 3, 1], [0, 2, 3], [1, 3, 2]])
    b = slender.SceneBuilder("tetra")
    m = b.material("rubber", density=1100, youngs_modulus=1e6, poisson_ratio=0.45)
    b.mesh_shell("skin", nodes=nodes, triangles=tris, material=m, thickness=1e-3)
    b.family("pressure", part="skin", pressure=2e3, time={"type": "ramp", "duration": 0.02})
    b.mass_damping(50)
    b.integrator(dt=1e-3)
    model = b.build()
    rows = model.arrays()["pressure_int"]
    assert rows.shape == (4, 4) and (rows[:, 3] == 0).all()  # one signal: the ramp
    assert model.arrays()["pressure_real"][0, 0] == 2e3
    sim = slender.Simulator(model)
    v0 = abs(np.linalg.det(nodes[1:] - nodes[0])) / 6
    for _ in range(40):
        assert sim.step()["status"] == "converged"
    e = sim.energies()
    x = np.array(sim.positions)
    v = abs(np.linalg.det(x[1:] - x[0])) / 6
    assert v > v0  # inflated
    assert e["load"] == pytest.approx(-2e3 * v, rel=1e-12)
    assert e["total"] == pytest.approx(sum(e[k] for k in ("kinetic", "stretch", "bend", "twist",
                                                          "gravity", "user", "load")), rel=1e-14)
    # an unknown field of the entry is named
    b.family("pressure", part="skin", pressure=1, presure=2)
    with pytest.raises(ValueError, match=r"forces.pressure\[1\].presure: unknown field"):
        b.build()


def test_a_shell_chooses_its_membrane():
    # the shell methods' membrane= (the JSON key "membrane"): the constant-strain triangles'
    # table holds the neo-Hookean (2) and St Venant-Kirchhoff (1) triangles, the springs none
    nodes = np.array([[0, 0, 0], [0.1, 0, 0], [0, 0.1, 0], [0.1, 0.1, 0]])
    tris = np.array([[0, 1, 2], [1, 3, 2]])
    b = slender.SceneBuilder("membranes")
    m = b.material("rubber", density=1100, youngs_modulus=1e6, poisson_ratio=0.5)
    b.mesh_shell("default", nodes=nodes, triangles=tris, material=m, thickness=1e-3)
    b.mesh_shell("stvk", nodes=nodes + [0, 0, 0.1], triangles=tris, material=m, thickness=1e-3,
                 membrane="stvk")
    b.rectangle_shell("springs", u=[0.1, 0, 0], v=[0, 0.1, 0], edge_length=0.05, material=m,
                      thickness=1e-3, origin=[0, 0, 0.2], membrane="springs")
    assert b.to_dict()["shells"][1]["membrane"] == "stvk"
    assert "membrane" not in b.to_dict()["shells"][0]
    model = b.build()
    rows = model.arrays()["membrane_int"]
    assert rows.shape == (4, 4) and list(rows[:, 3]) == [2, 2, 1, 1]
    np.testing.assert_array_equal(model.arrays()["membrane_real"][:, :3], [[1e6, 0.5, 1e-3]] * 4)
    d = b.to_dict()
    d["shells"][0]["membrane"] = "rubber"
    assert "shells[0].membrane: unknown membrane model 'rubber'" in error_of(d)


def test_a_point_mass_weighs_down_the_tip_and_bad_masses_name_their_field():
    # a tip mass of a tenth of the beam's own mass: statically, Euler-Bernoulli puts the tip
    # 1 + 0.1 (L^3 / 3) / (L^4 / 8) = 1 + 0.8 / 3 times as low as under the beam's weight alone
    # (measured +0.5 %: the root is a pinned pair of nodes, not a clamp at x = 0; C++:
    # PointMass.* to 1 % with the clamp placed right)
    free = cantilever_builder().integrator(type="static", dt=1, duration=1)
    mass = 0.1 * 7850 * np.pi * 1e-6 * 0.1
    loaded = cantilever_builder().integrator(type="static", dt=1, duration=1)
    loaded.point_mass("beam", -1, mass)
    assert loaded.to_dict()["point_masses"] == [{"part": "beam", "node": -1, "mass": mass}]
    a = run_steps(free.build(), 1)
    b = run_steps(loaded.build(), 1)
    assert b[-1, 2] / a[-1, 2] == pytest.approx(1 + 0.8 / 3, rel=0.02)
    bad = cantilever_builder().point_mass("beam", 3, -1.0)
    assert "point_masses[0].mass" in error_of(bad)
    bad = cantilever_builder().point_mass("beam", 21, 1.0)
    assert "point_masses[0].node" in error_of(bad)


def test_distributed_load_and_added_mass_from_the_builder():
    # a load per length on the beam: statically its tip sinks as under its own weight scaled by
    # w / (rho A g) (both are uniform loads per length; C++: DistributedLoad.* to 0.03 %)
    rho_a_g = 7850 * np.pi * 1e-6 * 9.81
    weight = cantilever_builder().integrator(type="static", dt=1, duration=1)
    loaded = cantilever_builder().integrator(type="static", dt=1, duration=1)
    loaded.distributed_load("beam", [0, 0, -rho_a_g])
    assert loaded.to_dict()["forces"]["distributed_loads"] == [
        {"part": "beam", "force_per_length": [0, 0, -rho_a_g]}]
    a = run_steps(weight.build(), 1)
    b = run_steps(loaded.build(), 1)
    assert b[-1, 2] / a[-1, 2] == pytest.approx(2, rel=1e-3)
    # added mass needs the buoyancy's fluid, and its field is named when it is missing
    wet = cantilever_builder().added_mass(1.0, parts=["beam"])
    assert "added_mass" in error_of(wet)
    wet.buoyancy(1000)
    assert wet.to_dict()["forces"]["added_mass"] == {"coefficient": 1.0, "parts": ["beam"]}
    assert run_steps(wet.build(), 2).shape == a.shape
