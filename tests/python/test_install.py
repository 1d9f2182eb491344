#!/usr/bin/python3
"""The package installs with pip into a venv made with --system-site-packages
(no build isolation, no index: no network needed), and the installed copy,
used from outside the source tree, finds libmlff through MLFF_LIBRARY.

Usage: test_install.py   (MLFF_LIBRARY as set by meson)
The package source is copied to a temporary folder first: setuptools writes
build/ and *.egg-info next to the sources it builds.
"""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402

PACKAGE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python")

CHECK = r"""
import os, sys
import mlff
from mlff.ase import MLFFCalculator
from ase import Atoms
assert os.path.realpath(mlff.__file__).startswith(os.path.realpath(sys.prefix)), mlff.__file__
assert os.path.realpath(mlff.library_path()) == os.path.realpath(os.environ["MLFF_LIBRARY"])
atoms = Atoms("OH2", positions=[[0, 0, 0], [0.96, 0, 0], [-0.24, 0.93, 0]])
atoms.calc = MLFFCalculator()
print(mlff.__file__, mlff.library_path(), atoms.get_potential_energy())
"""


def skip_or_fail(message):
    if os.environ.get("CI") == "true":
        print("FAIL: %s (required under CI)" % message, file=sys.stderr)
        sys.exit(1)
    print("SKIP: " + message, file=sys.stderr)
    sys.exit(_common.SKIP)


def run(args, **kwargs):
    print("+ " + " ".join(args))
    return subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, timeout=300, **kwargs)


def main():
    _common.require("numpy", "ase")
    library = os.environ.get("MLFF_LIBRARY")
    if not library:
        skip_or_fail("MLFF_LIBRARY is not set")
    with tempfile.TemporaryDirectory(prefix="mlff-install-") as tmp:
        venv = os.path.join(tmp, "venv")
        r = run([sys.executable, "-m", "venv", "--system-site-packages", venv])
        if r.returncode != 0:
            print(r.stdout)
            skip_or_fail("cannot make a venv (install python3-venv)")
        source = os.path.join(tmp, "src")
        shutil.copytree(PACKAGE_DIR, source,
                        ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
        pip = [os.path.join(venv, "bin", "python"), "-m", "pip"]
        r = run(pip + ["install", "--no-build-isolation", "--no-index",
                       "--disable-pip-version-check", "--no-cache-dir", source])
        print(r.stdout)
        if r.returncode != 0:
            print("FAIL: pip install", file=sys.stderr)
            return 1
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        r = run([os.path.join(venv, "bin", "python"), "-c", CHECK], cwd=tmp, env=env)
        print(r.stdout)
        if r.returncode != 0:
            print("FAIL: the installed package does not work", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
