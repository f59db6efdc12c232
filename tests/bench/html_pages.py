#!/usr/bin/python3
"""html_pages.py - make bench-html: the HTML audit report of every corpus model
in headless Chromium (BENCHMARKS.md, "HTML audit report").

usage: html_pages.py GRAFT CORPUS OUTDIR [REPS]

For each .onnx under CORPUS: `graft optimize --html` (timed: the whole
command, graft-html's Graphviz layouts included), then Chromium loads the
page from a file:// URL with the network off (--dump-dom, real time: no
virtual time budget) and the page's own clock says when it was usable
(data-scripted: performance.now() after the HTML is parsed, the script ran
and the layout was forced; milliseconds since navigation).  The page lists
its first 500 firings as it loads and adds the rest on timers; for the
test loads a copy that adds them all before its load event (the same page
up to data-scripted), which says when every firing is listed (data-complete)
and lets the test see them all.  Every page must
list every firing of its audit and draw the optimized graph.  The largest
models (by nodes, and by file size) are loaded REPS times more; the median
is reported."""
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "html"))
import browser_test  # noqa: E402


def load_ms(page):
    r = browser_test.chromium_real(page)
    dom = browser_test.Dom()
    dom.feed(r.stdout)
    return dom


def main():
    graft, corpus, out = os.path.abspath(sys.argv[1]), sys.argv[2], sys.argv[3]
    reps = int(sys.argv[4]) if len(sys.argv) > 4 else 5
    if not browser_test.CHROMIUM:
        print("bench-html: SKIPPED: chromium is not installed")
        return
    os.makedirs(out, exist_ok=True)
    models = sorted(os.path.join(d, f) for d, _, fs in os.walk(corpus) for f in fs if f.endswith(".onnx"))
    rows, bad = [], []
    for m in models:
        name = os.path.relpath(m, corpus)[:-5].replace("/", "_")
        base = os.path.join(out, name)
        for p in (base + ".html", base + ".json"):
            if os.path.exists(p):
                os.remove(p)
        t = time.time()
        r = subprocess.run([graft, "optimize", m, "-o", base + ".opt.onnx", "--report", base + ".json",
                            "--html", base + ".html"], capture_output=True, text=True)
        secs = time.time() - t
        if not os.path.exists(base + ".html"):
            bad.append("%s: no page (exit %d): %s" % (name, r.returncode, r.stderr.strip()[-200:]))
            continue
        audit = json.load(open(base + ".json"))
        browser_test.all_rows_at_once(base + ".html", base + ".all.html")
        dom = load_ms(base + ".all.html")
        nodes = sum(audit["op_histogram"]["before"].values()), sum(audit["op_histogram"]["after"].values())
        ok = len(dom.rows) == len(audit["firings"]) and len(dom.graph_nodes) == nodes[1] and dom.complete is not None
        if not ok:
            bad.append("%s: %d of %d firings listed, %d of %d graph nodes drawn, scripted %s" %
                       (name, len(dom.rows), len(audit["firings"]), len(dom.graph_nodes), nodes[1], dom.scripted))
        rows.append((name, nodes, len(audit["firings"]), os.path.getsize(base + ".html"), secs, dom.scripted,
                     os.path.getsize(m), base + ".html", dom.complete))
        print("%-70s %5d -> %4d nodes %5d firings %7.0f KB  optimize+html %5.2f s  page usable %s ms, all listed %s ms" %
              (name, nodes[0], nodes[1], len(audit["firings"]), os.path.getsize(base + ".html") / 1024, secs,
               dom.scripted, dom.complete), flush=True)
    print("\n%d models, %d pages, %d problems; slowest page usable at %d ms, slowest all listed at %d ms" %
          (len(models), len(rows), len(bad), max(r[5] or 0 for r in rows), max(r[8] or 0 for r in rows)))
    for b in bad:
        print("PROBLEM", b)
    for label, key in (("most nodes", lambda r: r[1][0]), ("largest file", lambda r: r[6])):
        big = max(rows, key=key)
        times = [load_ms(big[7]).scripted for _ in range(reps)]
        complete = [load_ms(big[7][:-5] + ".all.html").complete for _ in range(reps)]
        walls = []
        for _ in range(reps):
            t = time.time()
            browser_test.chromium_real(big[7])
            walls.append(time.time() - t)
        blank = []
        for _ in range(reps):
            t = time.time()
            browser_test.chromium_real(os.devnull)
            blank.append(time.time() - t)
        print("%s: %s (%d -> %d nodes, %d firings, %.0f KB page): page usable at median %d ms (runs %s), "
              "every firing listed at median %d ms (runs %s); chromium --dump-dom %.2f s wall against %.2f s "
              "for an empty page" %
              (label, big[0], big[1][0], big[1][1], big[2], big[3] / 1024, statistics.median(times), times,
               statistics.median(complete), complete, statistics.median(walls), statistics.median(blank)))
    sys.exit(1 if bad else 0)


main()
