#!/usr/bin/env python3
"""readme_test.py - the README's examples run as written (make test).

Every ```sh block of README.md runs with bash -e, in order, in one
temporary folder holding links to the checkout's build/ ($GRAFT_BUILD if
set), examples/ and python/ (so the blocks' relative paths work as from the repository root,
and nothing is written into the checkout).  A ```text block right after a
```sh block is what that block prints: each of its lines must be a line of
the output (trailing blanks ignored), in order.  Every ```python block runs
in the same folder with the module on the path; a line `print(...)  # X`
must print X.  Blocks without a language (the set-up commands) are not run.

    /usr/bin/python3 tests/readme_test.py [README.md]
"""
import contextlib
import io
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def fail(msg):
    sys.exit(f"readme_test.py: {msg}")


def lines_in_order(expected, output):
    """Each expected line is an output line, in order (trailing blanks ignored)."""
    out = [l.rstrip() for l in output.splitlines()]
    i = 0
    for want in (l.rstrip() for l in expected.splitlines()):
        while i < len(out) and out[i] != want:
            i += 1
        if i == len(out):
            return want
        i += 1
    return None


def main():
    readme = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "README.md")
    text = open(readme).read()
    blocks = re.findall(r"^```(\w+)\n(.*?)^```", text, re.S | re.M)
    if not any(kind == "sh" for kind, _ in blocks):
        fail("no sh blocks in " + readme)
    ran = 0
    with tempfile.TemporaryDirectory() as d:
        # GRAFT_BUILD: another build folder (make sanitize's) in the place of build/
        os.symlink(os.environ.get("GRAFT_BUILD", os.path.join(ROOT, "build")), os.path.join(d, "build"))
        for name in ("examples", "python"):
            os.symlink(os.path.join(ROOT, name), os.path.join(d, name))
        last = None
        for kind, body in blocks:
            if kind == "sh":
                r = subprocess.run(["bash", "-e", "-c", body], cwd=d, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True)
                if r.returncode:
                    fail(f"this block exited {r.returncode}:\n{body}\n{r.stdout}")
                last = r.stdout
                ran += 1
            elif kind == "text":
                if last is None:
                    fail("a text block follows no sh block:\n" + body)
                missing = lines_in_order(body, last)
                if missing is not None:
                    fail(f"the output lacks the line '{missing}' (in order); it was:\n{last}")
                last = None
            elif kind == "python":
                sys.path.insert(0, os.path.join(ROOT, "python"))
                cwd = os.getcwd()
                os.chdir(d)
                out = io.StringIO()
                try:
                    with contextlib.redirect_stdout(out):
                        exec(compile(body, readme, "exec"), {})
                finally:
                    os.chdir(cwd)
                for line in body.splitlines():
                    m = re.match(r"print\(.*\)\s+# (.*)$", line.strip())
                    if m and m.group(1) not in out.getvalue():
                        fail(f"'{line.strip()}' did not print '{m.group(1)}': {out.getvalue()!r}")
                ran += 1
            else:
                last = None
    print(f"readme_test.py: {ran} blocks of {os.path.basename(readme)} ran as written")


if __name__ == "__main__":
    main()
