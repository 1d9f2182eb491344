#!/usr/bin/env python3
"""Fails when a library source includes a header of a layer above its own.

The library is built in layers (ARCHITECTURE.md), each a static library that
links only the ones below it; a header of a higher layer would still compile,
so this check, run by the build before the first layer compiles, is what
keeps the arrows one way. Usage: check_layers.py TOP STAMP
"""
import os
import re
import sys

# Each layer and the layers it may include (itself included). api/mlff.h,
# the public types, may be included from everywhere.
ALLOWED = {
    'core': {'core'},
    'models': {'core', 'models'},
    'backends': {'core', 'backends'},
    'runtime': {'core', 'models', 'backends', 'runtime'},
    'api': {'core', 'models', 'backends', 'runtime', 'api'},
}
PUBLIC = 'api/mlff.h'
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def layer_of(path):
    return path.split('/', 1)[0] if path.split('/', 1)[0] in ALLOWED else None


def main():
    top, stamp = sys.argv[1], sys.argv[2]
    problems = []
    for layer in ALLOWED:
        for root, _, names in os.walk(os.path.join(top, layer)):
            for name in sorted(names):
                if not name.endswith(('.c', '.h')):
                    continue
                path = os.path.join(root, name)
                rel = os.path.relpath(path, top)
                with open(path, encoding='utf-8') as f:
                    text = f.read()
                for inc in INCLUDE.findall(text):
                    target = None
                    for base in (os.path.dirname(rel), '', 'api'):
                        candidate = os.path.normpath(os.path.join(base, inc))
                        if os.path.exists(os.path.join(top, candidate)):
                            target = candidate
                            break
                    if target is None or target == PUBLIC:
                        continue
                    to = layer_of(target)
                    if to and to not in ALLOWED[layer]:
                        allowed = ', '.join(d + '/' for d in sorted(ALLOWED[layer]))
                        problems.append(f'{rel}: includes {target}: {layer}/ may include only {allowed} '
                                        '(ARCHITECTURE.md)')
    if problems:
        sys.stderr.write('\n'.join(problems) + '\n')
        return 1
    with open(stamp, 'w') as f:
        f.write('/* the layers were checked (scripts/check_layers.py) */\n')
    return 0


if __name__ == '__main__':
    sys.exit(main())
