#!/usr/bin/python3
"""Streaming `mlff energy`: memory, batches, signals and --resume, progress,
--on-error, compressed input and standard input.

Usage: test_stream.py MLFF MAKE_TINY_MODEL MLFF_CONVERT GEN_FRAMES DATA_DIR

Most runs use a tiny model (made here: ANI-2x's elements, no angular terms,
one small network) so that 10^5 frames take seconds; its numbers mean
nothing, which is all these tests need. Standard library only.
MLFF_STREAM_FRAMES sets the frames of the large memory run (default 10^5);
MLFF_TEST_SANITIZED=1 (an ASan build) skips the memory comparison, as the
sanitizer's own memory grows with the work done.
"""
import bz2
import gzip
import lzma
import os
import pty
import random
import re
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time

failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)
    return condition


class Result:
    def __init__(self, args, rc, out, err, rss_kb=0):
        self.args, self.rc, self.out, self.err, self.rss_kb = args, rc, out, err, rss_kb

    def __repr__(self):
        return "mlff %s -> rc=%d\nstdout: %r\nstderr: %r" % (
            " ".join(self.args), self.rc, self.out[:300], self.err[-800:])


def run(args, stdin=None, model=True):
    full = [MLFF, "energy"] + (["--model", TINY] if model else []) + args
    p = subprocess.run(full, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=600)
    return Result(args, p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace"))


def generate(n, seed=1, extra=()):
    return subprocess.run([sys.executable, GEN, str(n), str(seed)] + list(extra), check=True,
                          stdout=subprocess.PIPE).stdout


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)
    return path


def read(path):
    with open(path, "rb") as f:
        return f.read()


# ---------------------------------------------------------------------------
# An extended XYZ reader of our own, independent of the one under test.

def frames_of(text):
    """[(count line, comment pairs, atom lines)]; raises on anything torn."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    frames, i = [], 0
    while i < len(lines):
        if not lines[i].strip():
            i += 1
            continue
        n = int(lines[i])
        if i + 1 + n >= len(lines):
            raise ValueError("torn frame at line %d" % (i + 1))
        pairs = dict(re.findall(r'(\w+)=("[^"]*"|\S+)', lines[i + 1]))
        atoms = lines[i + 2:i + 2 + n]
        if any(len(a.split()) < 4 for a in atoms):
            raise ValueError("short atom line in frame at line %d" % (i + 1))
        frames.append((n, pairs, atoms))
        i += 2 + n
    return frames


def energies(text):
    return [float(p["energy"]) for _, p, _ in frames_of(text)]


# ---------------------------------------------------------------------------

def test_usage(tmp):
    f = write(os.path.join(tmp, "one.xyz"), generate(1))
    for args in (["--on-error", "maybe", f], ["--batch-atoms", "0", f], ["--resume", f],
                 ["--progress", "--quiet", f], ["--batch-atoms=x", f], ["--io-threads", "0", f],
                 ["--io-threads", "65", f]):
        r = run(args)
        check(r.rc == 2 and r.out == "" and r.err.count("\n") == 1, "usage error: %r" % r)


def test_output_is_not_an_input(tmp):
    path = write(os.path.join(tmp, "same.xyz"), generate(3))
    before = read(path)
    for extra in ([], ["--resume"]):
        r = run(extra + ["-o", path, path])
        check(r.rc == 1 and "both an input and the output" in r.err and read(path) == before,
              "-o naming an input is refused, the input untouched: %r" % r)


def test_batches_equal_one_call(tmp):
    """Streamed in batches, one frame a call, or everything in one call (as
    before streaming): the same numbers, in float64 to the last digits."""
    path = write(os.path.join(tmp, "mixed.xyz"), generate(1500, 7, ["--periodic"]))
    args = ["--forces", "--stress", "--precision", "float64", path]
    streamed = run(args)
    if not check(streamed.rc == 0 and streamed.err == "", "streamed run: %r" % streamed):
        return
    alone = run(["--batch-atoms", "1"] + args)
    whole = run(["--batch-atoms", "100000000"] + args)
    check(alone.rc == 0 and whole.rc == 0, "one frame a call, one call: %r %r" % (alone, whole))
    a, b, c = frames_of(streamed.out), frames_of(alone.out), frames_of(whole.out)
    check(len(a) == len(b) == len(c) == 1500, "1500 frames each")
    worst = 0.0
    for x, y, z in zip(a, b, c):
        check(x[0] == y[0] == z[0] and x[2][0].split()[:4] == z[2][0].split()[:4], "same atoms, in order")
        for other in (y, z):
            worst = max(worst, abs(float(x[1]["energy"]) - float(other[1]["energy"])))
            for la, lb in zip(x[2], other[2]):
                fa, fb = la.split()[4:7], lb.split()[4:7]
                worst = max(worst, max(abs(float(p) - float(q)) for p, q in zip(fa, fb)))
        check(("stress" in x[1]) == (x[1].get("pbc") == '"T T T"'), "stress on periodic frames only")
    check(worst < 1e-9, "streamed = one call = one frame a call (largest difference %g)" % worst)
    check(streamed.out == whole.out, "batches give the bytes one call gives")


def peak_rss_kb(args, frames):
    """Runs mlff on generated frames piped in (no file that size), returns
    its peak resident memory in KB and its result."""
    gen = subprocess.Popen([sys.executable, GEN, str(frames), "3"], stdout=subprocess.PIPE)
    full = [MLFF, "energy", "--model", TINY] + args + ["-"]
    with open(os.devnull, "wb") as null:
        p = subprocess.Popen(full, stdin=gen.stdout, stdout=null, stderr=subprocess.PIPE)
        gen.stdout.close()
        err = p.stderr.read()
        _, status, usage = os.wait4(p.pid, 0)
    gen.wait()
    return usage.ru_maxrss, os.waitstatus_to_exitcode(status), err.decode()


def test_memory(tmp):
    """Peak memory does not grow with the number of frames."""
    big = int(os.environ.get("MLFF_STREAM_FRAMES", "100000"))
    small = max(big // 10, 1000)
    t = time.time()
    rss_small, rc1, err1 = peak_rss_kb(["--forces"], small)
    rss_big, rc2, err2 = peak_rss_kb(["--forces"], big)
    print("peak RSS: %d frames %d KB, %d frames %d KB (%.1f s)" % (small, rss_small, big, rss_big,
                                                                   time.time() - t))
    check(rc1 == 0 and rc2 == 0, "memory runs: %s %s" % (err1[-300:], err2[-300:]))
    if os.environ.get("MLFF_TEST_SANITIZED") == "1":
        print("memory comparison skipped: sanitizer build")
        return
    check(rss_big <= 1.2 * rss_small,
          "peak RSS %d KB for %d frames within 20%% of %d KB for %d" % (rss_big, big, rss_small, small))


def wait_for_output(path, proc, seconds=120):
    end = time.time() + seconds
    while time.time() < end and proc.poll() is None:
        if os.path.exists(path) and os.path.getsize(path) > 0:
            return True
        time.sleep(0.01)
    return False


def test_signal_and_resume(tmp):
    """SIGTERM (and SIGINT) mid-file: exit 3, whole frames in OUT; --resume
    then gives what an uninterrupted run gives."""
    path = write(os.path.join(tmp, "many.xyz"), generate(12000, 5))
    full = os.path.join(tmp, "full.xyz")
    r = run(["--forces", "-o", full, path])
    if not check(r.rc == 0, "uninterrupted run: %r" % r):
        return
    expected = read(full)
    for sig, name in ((signal.SIGTERM, "SIGTERM"), (signal.SIGINT, "SIGINT")):
        out = os.path.join(tmp, "cut-%s.xyz" % name)
        p = subprocess.Popen([MLFF, "energy", "--model", TINY, "--forces", "-o", out, path],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        started = wait_for_output(out, p)
        p.send_signal(sig)
        stdout, stderr = p.communicate(timeout=300)
        stderr = stderr.decode()
        if not started or p.returncode == 0:
            print("note: the run ended before %s arrived; interrupting skipped" % name)
            continue
        check(p.returncode == 3, "%s: exit 3, got %d: %s" % (name, p.returncode, stderr))
        check(re.search(r"interrupted \(%s\) after input frame \d+: .* --resume" % name, stderr),
              "%s: says so, and how to go on: %r" % (name, stderr))
        partial = read(out).decode()
        try:
            n = len(frames_of(partial))
        except ValueError as e:
            n = -1
            check(False, "%s: OUT holds whole frames only (%s)" % (name, e))
        check(0 < n < 12000 and expected.startswith(partial.encode()),
              "%s: OUT is the start of the full output (%d frames)" % (name, n))
        r = run(["--forces", "--resume", "-o", out, path])
        check(r.rc == 0 and r.err == "", "%s: resume runs: %r" % (name, r))
        check(read(out) == expected, "%s: resumed = uninterrupted" % name)

    # A second signal does not wait for the batch: the process dies of it.
    out = os.path.join(tmp, "killed.xyz")
    p = subprocess.Popen([MLFF, "energy", "--model", TINY, "--forces", "--batch-atoms", "20000",
                          "-o", out, path], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if wait_for_output(out, p) or p.poll() is None:
        p.send_signal(signal.SIGTERM)
        time.sleep(0.05)
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
        p.communicate(timeout=300)
        check(p.returncode in (3, -signal.SIGTERM), "second SIGTERM: exit 3 or killed: %d" % p.returncode)


def test_torn_output(tmp):
    """OUT cut anywhere (a process killed while writing): --resume cuts the
    torn frame off and finishes; damage before whole frames, another input,
    other options: refused, OUT untouched."""
    path = write(os.path.join(tmp, "some.xyz"), generate(400, 9))
    full = os.path.join(tmp, "some-full.xyz")
    r = run(["--forces", "-o", full, path])
    if not check(r.rc == 0, "full run: %r" % r):
        return
    expected = read(full)
    second = expected.index(b"\n", expected.index(b"Properties")) + 1  # inside frame 1
    boundary = [m.start() for m in re.finditer(rb"\n\d+\n", expected)][10] + 1  # frame 12 starts
    cuts = [0, 1, 3, second, second + 17, boundary - 1, boundary, boundary + 2, len(expected) // 2,
            len(expected) - 1, len(expected)]
    out = os.path.join(tmp, "torn.xyz")
    for cut in cuts:
        write(out, expected[:cut])
        r = run(["--forces", "--resume", "-o", out, path])
        check(r.rc == 0, "resume after a cut at byte %d: %r" % (cut, r))
        check(read(out) == expected, "cut at byte %d: resumed = uninterrupted" % cut)
        torn = cut not in (0, boundary, len(expected))
        check(("torn frame" in r.err) == torn, "cut at %d: the cut is reported when there was one: %r"
              % (cut, r.err))

    # NUL bytes where a crashed machine left a hole at the end.
    write(out, expected[:boundary] + b"\0" * 300)
    r = run(["--forces", "--resume", "-o", out, path])
    check(r.rc == 0 and read(out) == expected, "NUL-filled end cut off: %r" % r)

    def refused(data, args, pattern, what):
        write(out, data)
        r = run(args + ["--resume", "-o", out, path])
        check(r.rc == 1 and re.search(pattern, r.err) and r.err.count("\n") == 1, "%s: %r" % (what, r))
        check(read(out) == data, "%s: OUT untouched" % what)

    damaged = expected[:second] + b"X" + expected[second + 1:]
    refused(damaged, ["--forces"], r"whole frames follow it", "damage in the middle")
    refused(expected, [], r"frame 1 has forces", "resumed without --forces")
    other = write(os.path.join(tmp, "other.xyz"), generate(400, 10))
    write(out, expected)
    r = run(["--forces", "--resume", "-o", out, other])
    check(r.rc == 1 and "not the same input" in r.err and read(out) == expected, "another input: %r" % r)
    refused(b"3\nname=x\nO 0 0 0\nH 0 0 1\nH 0 1 0\n", ["--forces"], r"has no energy", "not mlff's output")
    # Nothing to do: a finished OUT stays as it is; no OUT: a fresh run.
    write(out, expected)
    r = run(["--forces", "--resume", "-o", out, path])
    check(r.rc == 0 and read(out) == expected, "a finished OUT: %r" % r)
    os.unlink(out)
    r = run(["--forces", "--resume", "-o", out, path])
    check(r.rc == 0 and read(out) == expected, "no OUT yet: %r" % r)


def test_progress(tmp):
    """On a terminal a line redrawn in place; nothing on a pipe unless --progress; --quiet: nothing."""
    path = write(os.path.join(tmp, "prog.xyz"), generate(5000, 11))

    def on_pty(extra):
        master, slave = pty.openpty()
        p = subprocess.Popen([MLFF, "energy", "--model", TINY, "--forces", "-o", os.devnull] + extra +
                             [path], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=slave)
        os.close(slave)
        data = b""
        while True:
            ready, _, _ = select.select([master], [], [], 300)
            if not ready:
                break
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            data += chunk
        p.wait(timeout=300)
        os.close(master)
        return p.returncode, data.decode("utf-8", "replace")

    rc, text = on_pty([])
    check(rc == 0, "run on a terminal: %d %r" % (rc, text[-300:]))
    updates = re.findall(r"\r\x1b\[Kmlff: (\d+) of 5000 frames \([\d.]+%\), [\d.]+k? frames/s, "
                         r"[\d.]+[kM]? atoms/s, \d+:\d\d elapsed(, \d+:\d\d left)?", text)
    check(len(updates) >= 1, "progress lines on a terminal: %r" % text[-500:])
    check(re.search(r"5000 of 5000 frames \(100\.0%\)", text) and text.endswith("\n"),
          "the last progress line says all, and ends its line: %r" % text[-300:])
    rc, text = on_pty(["--quiet"])
    check(rc == 0 and text == "", "--quiet on a terminal: nothing: %r" % text)
    r = run(["--forces", "-o", os.devnull, path])
    check(r.rc == 0 and r.err == "", "nothing on a pipe: %r" % r)
    r = run(["--forces", "--progress", "-o", os.devnull, path])
    lines = r.err.splitlines()
    check(r.rc == 0 and lines and "\r" not in r.err and
          re.match(r"mlff: 5000 of 5000 frames \(100\.0%\), .*elapsed", lines[-1]),
          "--progress on a pipe: whole lines: %r" % r)
    # Standard input: no total known, frames and rates all the same.
    r = run(["--forces", "--progress", "-o", os.devnull, "-"], stdin=read(path))
    check(r.rc == 0 and re.match(r"mlff: 5000 frames, .*frames/s", r.err.splitlines()[-1]),
          "--progress from standard input: %r" % r)


def test_on_error(tmp):
    """Bad frames of both kinds: for the reader and for the library."""
    bad = write(os.path.join(tmp, "bad.xyz"), generate(300, 13, ["--bad", "7"]))
    clean = write(os.path.join(tmp, "clean.xyz"), generate(300, 13))
    bad_indices = [i for i in range(1, 301) if i % 7 == 0]
    r = run(["--forces", "--on-error", "skip", bad])
    check(r.rc == 0, "skip: exit 0: %r" % r)
    reports = r.err.splitlines()
    check(len(reports) == len(bad_indices) + 1, "one line per bad frame and a summary: %r" % r.err)
    for line, i in zip(reports, bad_indices):
        if i // 7 % 2:
            check(re.match(re.escape(bad) + r':\d+: frame %d, atom 2: coordinate "oops" is not a number$' % i,
                           line), "reader's bad frame %d reported: %r" % (i, line))
        else:
            check(re.match(re.escape(bad) + r":\d+: frame %d, atom 2: .*0.01 Angstrom" % i, line),
                  "library's bad frame %d reported: %r" % (i, line))
    check(reports[-1] == "mlff: %d bad frames left out, %d written" % (len(bad_indices), 300 - len(bad_indices)),
          "summary line: %r" % reports[-1:])
    frames = frames_of(r.out)
    tags = [int(p["input_frame"]) for _, p, _ in frames]
    check(tags == [i for i in range(1, 301) if i % 7], "input_frame=N on every frame written")
    whole = run(["--forces", clean])
    reference = {i + 1: e for i, e in enumerate(energies(whole.out))}
    check(all(abs(float(p["energy"]) - reference[int(p["input_frame"])]) < 1e-9 for _, p, _ in frames),
          "the good frames' energies are those of a clean input")
    # The line numbers are the file's: the atom line of each bad frame.
    lines = read(bad).decode().split("\n")
    for line in reports[:-1]:
        number = int(line.split(":")[1])
        check(" oops " in lines[number - 1] or lines[number - 1].startswith(("H", "C", "N", "O", "S", "F")),
              "line %d is the bad atom's: %r" % (number, lines[number - 1]))
    # Stop (the default): the frames before the first bad one, then the message.
    r = run(["--forces", bad])
    check(r.rc == 1 and len(frames_of(r.out)) == 6 and
          re.match(re.escape(bad) + r':\d+: frame 7, atom 2: coordinate "oops"', r.err) and
          r.err.count("\n") == 1, "stop at the first bad frame: %r" % r)
    # A frame the library rejects first.
    r = run(["--forces", "--on-error", "stop", write(os.path.join(tmp, "close14.xyz"),
                                                      generate(300, 13, ["--close", "14"]))])
    check(r.rc == 1 and len(frames_of(r.out)) == 13 and re.search(r"frame 14, atom 2: .*Angstrom", r.err),
          "stop at a frame the library rejects: %r" % r)
    # Structure: a garbage line, a frame cut short at the end, a count too large.
    water = "3\nname=w\nO 0 0 0.11779\nH 0 0.75545 -0.47116\nH 0 -0.75545 -0.47116\n"
    text = water + "garbage\n" + water + "5\nname=big\nO 0 0 0\nH 0 0 1\n" + water + "3\nname=cut\nO 0 0 0\n"
    messy = write(os.path.join(tmp, "messy.xyz"), text.encode())
    r = run(["--on-error", "skip", messy])
    tags = [int(p["input_frame"]) for _, p, _ in frames_of(r.out)]
    check(r.rc == 0 and tags == [1, 3, 5], "structural damage passed over: %r" % r)
    check(re.search(re.escape(messy) + r':6: frame 2: expected the number of atoms, found "garbage"', r.err) and
          re.search(re.escape(messy) + r":16: frame 4, atom 3: expected 4 columns, found 1", r.err) and
          re.search(re.escape(messy) + r":21: frame 6: truncated", r.err), "each reported: %r" % r.err)
    # Interrupted and resumed with skip: the same as without interruption.
    big_bad = write(os.path.join(tmp, "bigbad.xyz"), generate(8000, 17, ["--bad", "11"]))
    full = os.path.join(tmp, "skip-full.xyz")
    r = run(["--on-error", "skip", "-o", full, big_bad])
    out = os.path.join(tmp, "skip-cut.xyz")
    p = subprocess.Popen([MLFF, "energy", "--model", TINY, "--on-error", "skip", "-o", out, big_bad],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if wait_for_output(out, p):
        p.send_signal(signal.SIGTERM)
    p.communicate(timeout=300)
    r = run(["--on-error", "skip", "--resume", "-o", out, big_bad])
    check(r.rc == 0 and read(out) == read(full), "skip, interrupted and resumed = uninterrupted: %r" % r)


def damaged(seed, frames, end):
    """Generated frames with damage of every kind the reader reports, where a
    seeded generator puts it: bad atom lines (some of them atom counts, as a
    frame that declares too many atoms shows), bad count and comment lines,
    lines missing or added, CRLF; every third frame has a masses column and
    a column to skip. end: how the text ends ("cut": in the middle of a
    frame, else appended as it is)."""
    rng = random.Random(seed)
    lines, out, i = generate(frames, seed).decode().split("\n"), [], 0
    while i < len(lines):
        if not lines[i].strip():
            i += 1
            continue
        n = int(lines[i])
        comment, atoms = lines[i + 1], lines[i + 2:i + 2 + n]
        if len(out) % 3 == 0:
            comment = "Properties=species:S:1:pos:R:3:masses:R:1:tag:I:1 " + comment
            atoms = [a + " %.3f %d" % (rng.uniform(1, 40), k) for k, a in enumerate(atoms)]
        out += [lines[i], comment] + atoms
        i += 2 + n
    damage = [lambda l: "garbage", lambda l: str(rng.randint(1, 40)), lambda l: l + "\r",
              lambda l: l.replace("0", "x", 1), lambda l: "Xx 0 0 0", lambda l: "H 0 0 inf",
              lambda l: "C 1.0 2.0", lambda l: 'Lattice="1 2 3"', lambda l: "  " + l + "  1 2 3",
              lambda l: l + " 1.5e400"]
    for _ in range(frames // 15):
        k = rng.randrange(len(out))
        what = rng.randrange(len(damage) + 2)
        if what == len(damage):
            del out[k]
        elif what == len(damage) + 1:
            out.insert(k, rng.choice(["", "3"]))
        else:
            out[k] = damage[what](out[k])
    text = "\n".join(out) + "\n"
    return (text[:len(text) - 40] if end == "cut" else text + end).encode()


def test_io_threads(tmp):
    """Atoms parsed and frames formatted in several threads: the bytes, the
    messages and the exit status one thread gives, bad frames in the middle
    of batches that three threads parse included, in both --on-error modes."""
    def same(args, batches, what):
        for atoms in batches:
            one = run(["--io-threads", "1", "--batch-atoms", atoms] + args)
            many = run(["--io-threads", "3", "--batch-atoms", atoms] + args)
            check((many.rc, many.out, many.err) == (one.rc, one.out, one.err),
                  "%s, batches of %s atoms, 3 threads as 1: %r\n%r" % (what, atoms, one, many))
        return one
    clean = write(os.path.join(tmp, "threads-clean.xyz"), generate(800, 29, ["--periodic"]))
    r = same(["--forces", "--stress", clean], ["7000"], "clean frames")
    check(r.rc == 0 and len(frames_of(r.out)) == 800, "clean frames: %r" % r)
    bad = write(os.path.join(tmp, "threads-bad.xyz"), generate(800, 31, ["--bad", "7"]))
    r = same(["--forces", "--on-error", "skip", bad], ["7000"], "bad frames, skip")
    check(r.rc == 0 and r.err.count("\n") == 800 // 7 + 1, "bad frames, skip: %r" % r)
    r = same(["--forces", bad], ["7000"], "bad frames, stop")
    check(r.rc == 1 and len(frames_of(r.out)) == 6, "bad frames, stop: %r" % r)
    messy = write(os.path.join(tmp, "threads-damaged.xyz"), damaged(37, 900, "cut"))
    r = same(["--on-error", "skip", messy], ["7000", "300"], "damaged frames, skip")
    check(r.rc == 0 and r.err.count("\n") > 40 and len(frames_of(r.out)) > 700, "damaged, skip: %r" % r)
    r = same([messy], ["7000", "300"], "damaged frames, stop")
    check(r.rc == 1 and r.err.count("\n") == 1, "damaged, stop: %r" % r)
    # The last line without a line feed, bad.
    messy = write(os.path.join(tmp, "threads-damaged2.xyz"), damaged(41, 600, "2\nname=last\nH 0 0 0\nH 0 0"))
    r = same(["--on-error", "skip", messy], ["7000", "300"], "damaged frames, skip")
    check(r.rc == 0 and r.err.splitlines()[-2].endswith("atom 2: expected 4 columns, found 3"),
          "damaged, a bad last line: %r" % r)


def test_compressed_and_stdin(tmp):
    raw = generate(700, 19)
    plain = write(os.path.join(tmp, "c.xyz"), raw)
    expected = run(["--forces", plain])
    if not check(expected.rc == 0, "plain run: %r" % expected):
        return
    inputs = {
        "c.xyz.gz": gzip.compress(raw[:len(raw) // 3]) + gzip.compress(raw[len(raw) // 3:]),  # two members
        "c.xyz.bz2": bz2.compress(raw),
        "c.xyz.xz": lzma.compress(raw),
        "c.gzip-without-suffix": gzip.compress(raw),
    }
    for name, data in inputs.items():
        r = run(["--forces", write(os.path.join(tmp, name), data)])
        check(r.rc == 0 and r.out == expected.out, "%s reads as the plain file: %r" % (name, r))
    for name, data in (("plain", raw), ("gzip", gzip.compress(raw)), ("xz", lzma.compress(raw))):
        r = run(["--forces", "-"], stdin=data)
        check(r.rc == 0 and r.out == expected.out, "standard input, %s: %r" % (name, r))
    # A pipe named by path (a shell's <(zcat f)): not one byte of it taken before the run reads it.
    r_fd, w_fd = os.pipe()
    p = subprocess.Popen([MLFF, "energy", "--model", TINY, "--forces", "/dev/fd/%d" % r_fd],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, pass_fds=(r_fd,))
    os.close(r_fd)

    def feed():
        with os.fdopen(w_fd, "wb") as w:
            w.write(raw)

    writer = threading.Thread(target=feed)
    writer.start()
    out, err = p.communicate(timeout=300)
    writer.join()
    check(p.returncode == 0 and out.decode() == expected.out, "a pipe by path: %d %r" % (p.returncode, err[-300:]))
    # Several inputs, compressed and not, one stream in order.
    r = run(["--forces", os.path.join(tmp, "c.xyz.bz2"), plain])
    check(r.rc == 0 and r.out == expected.out * 2, "two inputs in order")
    # Errors keep their exact lines, inside compressed data too.
    bad = raw.split(b"\n")
    bad[5] = b"H 0 0 nan"  # line 6: the fourth atom of frame 1
    path = write(os.path.join(tmp, "bad.xyz.gz"), gzip.compress(b"\n".join(bad)))
    r = run([path])
    check(r.rc == 1 and re.match(re.escape(path) + r':6: frame 1, atom 4: coordinate "nan"', r.err),
          "line numbers in compressed data: %r" % r)
    # Broken compressed data.
    gz = gzip.compress(raw)
    r = run([write(os.path.join(tmp, "cut.xyz.gz"), gz[:len(gz) // 2])])
    check(r.rc == 1 and re.search(r"cut\.xyz\.gz: cannot read: the gzip data ends early", r.err),
          "a truncated .gz: %r" % r)
    r = run([write(os.path.join(tmp, "junk.xyz.xz"), gz)])
    check(r.rc == 1 and "junk.xyz.xz: cannot read: not xz data" in r.err, "a .xz that is not: %r" % r)
    r = run([write(os.path.join(tmp, "corrupt.xyz.bz2"), bz2.compress(raw)[:40] + b"\xff" * 200)])
    check(r.rc == 1 and "corrupt.xyz.bz2: cannot read:" in r.err, "corrupt bzip2: %r" % r)


def test_slow_pipe(tmp):
    """Frames from a producer that pauses are evaluated and written while it
    pauses, and a stop request does not wait for it."""
    frames = generate(50, 23)
    out = os.path.join(tmp, "slow.xyz")
    p = subprocess.Popen([MLFF, "energy", "--model", TINY, "-o", out, "-"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdin.write(frames)
    p.stdin.flush()
    deadline = time.time() + 60
    n = 0
    while time.time() < deadline:
        try:
            n = len(frames_of(read(out).decode())) if os.path.exists(out) else 0
        except ValueError:
            n = 0
        if n == 50:
            break
        time.sleep(0.02)
    check(n == 50, "frames written while the producer pauses: %d of 50" % n)
    p.send_signal(signal.SIGTERM)
    try:
        _, err = p.communicate(timeout=30)
        check(p.returncode == 3, "stopped while waiting for input: exit %d %r" % (p.returncode, err))
    except subprocess.TimeoutExpired:
        p.kill()
        check(False, "a stop request waited for the pipe")


def main():
    global MLFF, TINY, GEN
    if len(sys.argv) != 6:
        raise SystemExit(__doc__)
    MLFF, make_tiny, convert, GEN, _ = sys.argv[1:]
    MLFF = os.path.abspath(MLFF)
    with tempfile.TemporaryDirectory(prefix="mlff-stream-") as tmp:
        info = subprocess.run([make_tiny, tmp], check=True, stdout=subprocess.PIPE).stdout.decode().strip()
        TINY = os.path.join(tmp, "tiny.mlff")
        subprocess.run([convert, "--name", "tiny", info, TINY], check=True)
        tests = [test_usage, test_output_is_not_an_input, test_batches_equal_one_call, test_on_error, test_io_threads,
                 test_compressed_and_stdin,
                 test_torn_output, test_signal_and_resume, test_progress, test_slow_pipe, test_memory]
        only = os.environ.get("MLFF_STREAM_TESTS")
        for test in tests:
            if only and test.__name__ not in only.split(","):
                continue
            t = time.time()
            test(tmp)
            print("%s: %.1f s" % (test.__name__, time.time() - t))
    if failures:
        print("%d check(s) failed" % len(failures), file=sys.stderr)
        return 1
    print("all streaming tests passed")
    return 0


MLFF = TINY = GEN = None

if __name__ == "__main__":
    sys.exit(main())
