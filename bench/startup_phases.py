"""Where a model's start-up goes, phase by phase: a fresh Python process per
run (four runs a device, the first warming the caches; the last logs the
cache with MLFF_LOG=cache), its clock from the parent's before the spawn.

    PYTHONPATH=python python3 bench/startup_phases.py MODEL.mlff [DEVICE ...]

Phases: Python's start, numpy's and mlff's imports, the model's opening,
the 300-atom water cluster's first and second energies and forces, the
close. bench_export.py measures the start-up itself (issue 58)."""
import json, os, subprocess, sys, time
REFERENCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "reference")
if len(sys.argv) > 1 and sys.argv[1] == "child":
    t0 = float(sys.argv[4]); t = [time.time()]
    import numpy as np; t.append(time.time())
    import mlff; t.append(time.time())
    d = json.load(open(os.path.join(REFERENCE, "water_cluster_100.json")))
    z = np.array(d["species"], np.int32); r = np.array(d["coordinates"], float)
    m = mlff.Model(sys.argv[2], device=sys.argv[3], precision="float32"); t.append(time.time())
    m.evaluate(z, r); t.append(time.time())
    m.evaluate(z, r); t.append(time.time())
    m.close(); t.append(time.time())
    names = ["spawn", "numpy", "mlff", "open", "first", "second", "close"]
    print(" ".join("%s %.3f" % (n, b - a) for n, a, b in zip(names, [t0] + t, t)), "total %.3f" % (t[4] - t0))
    sys.exit(0)
model = sys.argv[1]
for dev in sys.argv[2:] or ["opencl", "vulkan"]:
    for k in range(4):
        env = dict(os.environ)
        if k == 3:
            env["MLFF_LOG"] = "cache"
        t0 = time.time()
        p = subprocess.run([sys.executable, __file__, "child", model, dev, repr(t0)], capture_output=True, text=True, env=env)
        print(dev, k, p.stdout.strip(), ("rc %d %s" % (p.returncode, p.stderr[-300:])) if p.returncode else "")
        if k == 3:
            lines = p.stderr.splitlines()
            print("   cache log: %d lines; %s" % (len(lines), " | ".join(lines[:3])))
