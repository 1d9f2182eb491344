#!/usr/bin/env python3
"""scripts/check_layers.py passes on the tree and fails a wrong-way include.

Usage: test_layers.py REPO_ROOT
"""
import os
import shutil
import subprocess
import sys
import tempfile


def run(script, top):
    with tempfile.TemporaryDirectory() as out:
        return subprocess.run([sys.executable, script, top, os.path.join(out, 'stamp.h')],
                              capture_output=True, text=True)


def main():
    root = sys.argv[1]
    script = os.path.join(root, 'scripts', 'check_layers.py')
    failures = 0
    ok = run(script, root)
    if ok.returncode != 0:
        print('FAIL: the tree itself:', ok.stderr)
        failures += 1
    # core/ reaching up into runtime/, and backends/ into models/: each refused, named.
    for layer, include, target in [('core', '"runtime/plan.h"', 'runtime/plan.h'),
                                   ('backends', '"../models/family.h"', 'models/family.h')]:
        with tempfile.TemporaryDirectory() as top:
            for d in ('core', 'models', 'backends', 'runtime', 'api'):
                shutil.copytree(os.path.join(root, d), os.path.join(top, d))
            with open(os.path.join(top, layer, 'wrong_way.c'), 'w') as f:
                f.write('#include %s\n' % include)
            bad = run(script, top)
            expected = '%s/wrong_way.c: includes %s' % (layer, target)
            if bad.returncode == 0 or expected not in bad.stderr:
                print('FAIL: %s including %s: status %d, %r' % (layer, target, bad.returncode, bad.stderr))
                failures += 1
            else:
                print('refused: %s' % bad.stderr.strip())
    print('all passed' if not failures else 'FAILED')
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
