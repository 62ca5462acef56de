"""Stills of the example scenes for the docs (docs/images/SCENE.png, docs/rendering.md).

Each scene of the list below is run with the simulator for a duration short enough to take
a few seconds, and one of its frames is rendered with slender.render (the camera fitted to the
whole run, the ground of the scene drawn) into a 640 x 480 PNG of at most 256 colours. At the
end the Markdown table of docs/rendering.md is printed.

    PYTHONPATH=build/python python3 apps/examples/render_stills.py [--bin build/slender]
        [--runs out/stills] [--images docs/images] [--only rod_drop,cloth_drop]
"""

import argparse
import os
import subprocess
import sys
import time

import numpy as np
from PIL import Image

from slender import render

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

# scene, simulated duration [s], time of the still [s] (None: the last frame), render options,
# what the picture shows
STILLS = [
    ("rod_drop", 0.4, 0.12, {"camera": "-75,15"},
     "a soft rod dropped at an angle onto the ground with friction"),
    ("rolling_ribbon", 0.8, 0.4, {},
     "a steel ring rolling down a plane declined by 25 degrees (validation V6)"),
    ("spider_incline", 2.0, None, {},
     "a four-legged rod spider on a floor, gravity tilted as on an incline (the picture's "
     "'up' follows it)"),
    ("rod_twist", 3.0, None, {"color": "twist"},
     "a rubber rod clamped at both ends, one end turned six times while moved in: it "
     "buckles into a twisted loop"),
    ("showcase", 4.0, 1.3, {},
     "a helical spring bouncing; a whip shaken sideways, its tip carrying a tail through an "
     "elastic joint"),
    ("sma_limb", 6.0, 2.0, {"color": "curvature"},
     "a shape-memory-alloy limb curling back after being heated"),
    ("silicone_stretch", 0.5, None, {},
     "three silicone cords (Hookean, Ogden, neo-Hookean) stretched by a hanging weight"),
    ("viscoelastic_beams", 1.0, None, {},
     "two silicone fingers, one with Kelvin-Voigt damping, and a flap, sagging from straight"),
    ("rolling_robot_drop", 0.3, 0.06, {},
     "Huang et al.'s star-shaped rolling robot of seven curled limbs, dropped onto the ground "
     "(Rayleigh beta sets its rebound)"),
    ("huang_jumper", 0.25, 0.06, {},
     "Huang et al.'s SMA jumper in flight: its loop straightened, pulled at its leading edge"),
    ("star_roll", 1.2, 0.9, {},
     "Huang et al.'s star-shaped robot rolling forward over its front limb as its heated rear "
     "limb straightens against the ground"),
    ("steel_rod_benchmark", 1.0, 0.75, {},
     "Bartholdt et al.'s clamped steel rod under a follower tip force and moment, its tip "
     "turned by 1.3 rad"),
    ("tendon_finger", 2.5, None, {"color": "curvature"},
     "a soft finger curled by a tendon along its underside, its tension ramped to 6.5 N"),
    ("bartholdt_actuator", 1.5, None, {"color": "curvature"},
     "Bartholdt et al.'s three-chamber pneumatic actuator hanging from a clamp, one chamber at "
     "60 kPa bending it a little (the colour: its curvature), its 60 g marker plate at the tip"),
    ("matdismech_pneunet", 1.0, None, {"color": "curvature"},
     "MAT-DiSMech's PneuNets: three rods of natural curvature 15.7, 31.5 and 47.2 1/m under "
     "gravity and a tip force (a static solve)"),
    ("dismech_manipulator", 8.3, 8.27, {},
     "DisMech's two-limb manipulator playing its authors' curvature trajectory, bent into an S"),
    ("jellyfish_thrust", 2.0, None, {},
     "the jellyfish bell pulsing and swimming upward by the thrust of its displaced volume"),
    ("rayleigh_beams", 2.0, None, {},
     "two cantilevers, one with Rayleigh damping, and a clamped plate, sagging from straight"),
    ("cloth_drop", 0.4, None, {"color": "bending_energy_density"},
     "a circular cloth held at its centre falls and folds"),
    ("shell_fold", 0.2, None, {},
     "a shell strip lying partly on the ground starts to fold onto itself"),
    ("manta_ray", 0.35, None, {},
     "a 1 m shell flapping its wings like a manta ray"),
    ("jellyfish", 1.0, None, {},
     "a hemispherical shell bell with eight rod tentacles joined to its rim"),
    ("parachute", 0.5, None, {},
     "a hexagonal shell canopy with six rod ropes and a payload, falling"),
]


def _quantized_png(image, path):
    """A PNG of at most 256 colours (a few times smaller than full colour)."""
    img = Image.fromarray(image).quantize(colors=256, method=Image.Quantize.MEDIANCUT)
    tmp = path + ".part.png"
    img.save(tmp, format="PNG", optimize=True)
    os.replace(tmp, path)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--bin", default=os.path.join(ROOT, "build", "slender"),
                   help="the simulator (build/slender)")
    p.add_argument("--runs", default=os.path.join(ROOT, "out", "stills"),
                   help="where the runs are written")
    p.add_argument("--images", default=os.path.join(ROOT, "docs", "images"),
                   help="where the stills are written")
    p.add_argument("--only", help="comma-separated scene names")
    p.add_argument("--size", default="640x480")
    args = p.parse_args(argv)
    only = set(args.only.split(",")) if args.only else None
    os.makedirs(args.images, exist_ok=True)
    rows = []
    for scene, duration, t_still, options, caption in STILLS:
        if only and scene not in only:
            continue
        scene_file = os.path.join(ROOT, "apps", "scenes", scene + ".json")
        out = os.path.join(args.runs, scene)
        t0 = time.perf_counter()
        subprocess.run([args.bin, "run", scene_file, "--out", out, "--duration", str(duration),
                        "-q"], check=True)
        t_run = time.perf_counter() - t0
        r = render.RunRenderer(out, scene=scene_file, size=args.size, **options)
        times = np.array(r.times)
        k = len(times) - 1 if t_still is None else int(np.argmin(np.abs(times - t_still)))
        png = os.path.join(args.images, scene + ".png")
        _quantized_png(r.image(k), png)
        print(f"{scene}: ran {duration} s in {t_run:.1f} s, still at t = {times[k]:.3g} s: "
              f"{png} ({os.path.getsize(png) // 1024} KB)", file=sys.stderr)
        rel = os.path.relpath(png, os.path.join(ROOT, "docs"))
        colour = options.get("color", "speed")
        rows.append(f"| `{scene}` | {caption} | {duration} s, t = {times[k]:.3g} s, {colour} "
                    f"| ![{scene}]({rel}) |")
    print("| scene | what it shows | run, still, colour | still |")
    print("| --- | --- | --- | --- |")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
