#!/usr/bin/python3
"""browser_test.py - the HTML audit report, loaded in a real browser.

usage: browser_test.py GRAFT OUTDIR [MODEL...]

For each model (default: examples/tiny_cnn.onnx; and always a chain of 1200
Identity nodes, for a page that lists its firings in chunks), `graft optimize --report
--html --why conv_bn` writes the audit and its page; headless Chromium
(Debian's chromium) loads the page from a file:// URL with the network off
(--dump-dom after the page's scripts ran) and the test checks in the DOM that
every firing of the JSON audit is listed (its rule, level and source), that
the opened firing's neighbourhood drawings have its matched and created nodes,
that the optimized graph's SVG has one node per node of the optimized model,
that --why's answers are there, and that the page names nothing on the
network.  `graft explain REPORT.json --html` must write the same page.
Skipped, with a message, when chromium is not installed."""
import html.parser
import json
import os
import shutil
import subprocess
import sys
import tempfile

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def chromium(args, url, budget=True):
    """Runs headless Chromium on url with no network: every host name
    resolves nowhere and the proxy is a closed port."""
    with tempfile.TemporaryDirectory() as profile:
        cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir=" + profile,
               "--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=127.0.0.1:9",
               ] + (["--virtual-time-budget=20000"] if budget else []) + args + [url]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


def chromium_real(page):
    """Chromium on a page in real time (no virtual time budget): --dump-dom
    once the page has loaded (before any timer runs)."""
    return chromium(["--dump-dom"], "file://" + os.path.abspath(page), budget=False)


def all_rows_at_once(page, copy):
    """A copy of page that lists every firing before its load event: the
    chunks the page adds on timers, added at once (what that costs, in real
    time, is then data-complete)."""
    with open(page) as f, open(copy, "w") as g:
        g.write(f.read().replace("</body></html>", "<script>while (chunks.length) addRows();</script></body></html>"))


class Dom(html.parser.HTMLParser):
    """What the test looks for in the dumped DOM."""

    def __init__(self):
        super().__init__()
        self.rows = {}          # firing id -> attributes of its <tr>
        self.cells = {}         # firing id -> its cells' text
        self.graph_nodes = set()
        self.detail_titles = []  # <title>s inside the opened firing's details
        self.why_rows = 0
        self.scripted = None    # the page's clock at the end of its script
        self.complete = None    # ... once every firing is listed
        self.info = ""          # the graph's node panel's text
        self.stack = []         # open elements: (tag, attrs)
        self.cur_row = None
        self.in_title = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "body" and "data-scripted" in a:
            self.scripted = int(a["data-scripted"])
        if tag == "body" and "data-complete" in a:
            self.complete = int(a["data-complete"])
        if tag == "tr" and "firing" in a.get("class", "").split():
            self.rows[a["id"]] = a
            self.cur_row = a["id"]
        elif tag == "tr":
            self.cur_row = None
        if tag == "tr" and a.get("class") == "why":
            self.why_rows += 1
        if tag == "g" and a.get("class") == "node" and a.get("id", "").startswith("g") \
                and any(t == "div" and x.get("id") == "graphsvg" for t, x in self.stack):
            self.graph_nodes.add(a["id"])
        self.in_title = tag == "title" and any(t == "td" and x.get("class") == "detail" for t, x in self.stack)
        if self.cur_row and tag == "td":
            self.cells.setdefault(self.cur_row, []).append("")
        if tag not in VOID:
            self.stack.append((tag, a))

    def handle_endtag(self, tag):
        while self.stack:
            t, _ = self.stack.pop()
            if t == tag:
                break
        if tag == "title":
            self.in_title = False

    def handle_data(self, data):
        if any(t == "aside" and x.get("id") == "info" for t, x in self.stack):
            self.info += data
        if self.cur_row and self.cells.get(self.cur_row):
            self.cells[self.cur_row][-1] += data
        if self.in_title:
            self.detail_titles.append(data)


def check(graft, outdir, model, failures):
    name = os.path.splitext(model)[0].strip("./").replace("/", "_")[-60:]
    base = os.path.join(outdir, name)
    report, page, opt = base + ".json", base + ".html", base + ".opt.onnx"
    for p in (report, page, opt):
        if os.path.exists(p):
            os.remove(p)
    r = subprocess.run([graft, "optimize", model, "-o", opt, "--report", report, "--html", page, "--why", "conv_bn"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        failures.append("%s: graft optimize --html failed: %s" % (model, r.stderr[-500:]))
        return
    audit = json.load(open(report))
    text = open(page).read()
    for bad in ('src="http', "src='http", 'href="http', "url(http", "@import"):
        if bad in text:
            failures.append("%s: the page names the network: %s" % (model, bad))
    # the firing to open: the first one that created nodes, else the first
    opened = next((i for i, f in enumerate(audit["firings"]) if f["created"] and f["matched"]), 0)
    r = chromium(["--dump-dom"], "file://%s#f%d" % (os.path.abspath(page), opened))
    if r.returncode != 0 or "<body" not in r.stdout:
        failures.append("%s: chromium failed: %s" % (model, r.stderr[-500:]))
        return
    dom = Dom()
    dom.feed(r.stdout)
    if dom.scripted is None or dom.complete is None:
        failures.append("%s: the page's script did not finish (data-scripted %s, data-complete %s)" %
                        (model, dom.scripted, dom.complete))
    firings = audit["firings"]
    if len(dom.rows) != len(firings):
        failures.append("%s: %d firings listed, the audit has %d" % (model, len(dom.rows), len(firings)))
    for i, f in enumerate(firings):
        row = dom.rows.get("f%d" % i)
        cells = dom.cells.get("f%d" % i, [])
        if not row or row.get("data-rule") != f["rule"] or row.get("data-level") != f["level"] \
                or cells[1:4] != [f["rule"], f["level"], f.get("source", "")]:
            failures.append("%s: firing %d (%s) is not listed as in the audit: %r" % (model, i, f["rule"], cells[:4]))
            break
    for i, f in enumerate(firings):
        if dom.cells.get("f%d" % i, [""] * 5)[4].split(", ")[0] != (f["matched"] or [""])[0]:
            failures.append("%s: firing %d's matched nodes are not shown as in the audit" % (model, i))
            break
    if firings:
        f = firings[opened]
        want = set(f["matched"]) | {c["node"] for c in f["created"]}
        missing = want - set(dom.detail_titles)
        if missing:
            failures.append("%s: firing %d's drawings lack the nodes %s" % (model, opened, sorted(missing)[:5]))
    after = sum(audit["op_histogram"]["after"].values())
    if len(dom.graph_nodes) != after:
        failures.append("%s: the optimized graph's SVG has %d nodes, the model %d" % (model, len(dom.graph_nodes), after))
    if "why" in audit and dom.why_rows != len(audit["why"]["nodes"]):
        failures.append("%s: %d --why answers on the page, the audit has %d" % (model, dom.why_rows, len(audit["why"]["nodes"])))
    # a click on a created node of the graph shows where it came from; the
    # rule filter set to the opened firing's rule shows its firings alone
    clicked = base + ".click.html"
    rule = firings[opened]["rule"] if firings else ""
    with open(clicked, "w") as f:
        f.write(text.replace("</body></html>", "<script>const k = graph.nodes.findIndex((n) => createdBy[n.name] !== undefined);"
                             "if (k >= 0) $('g' + k).dispatchEvent(new MouseEvent('click', { bubbles: true }));"
                             "$('rule').value = %s; $('rule').dispatchEvent(new Event('change'));"
                             "</script></body></html>" % json.dumps(rule)))
    r = chromium(["--dump-dom"], "file://" + os.path.abspath(clicked))
    click = Dom()
    click.feed(r.stdout)
    start = text.index('<script type="application/json" id="graphdata">')
    graph = json.loads(text[text.index(">", start) + 1:text.index("</script>", start)])
    created = {c["node"] for f in firings for c in f["created"]}
    if any(n["name"] in created for n in graph["nodes"]) and not ("Created by" in click.info and "stands for" in click.info):
        failures.append("%s: a click on a created node does not show its provenance: %r" % (model, click.info[:200]))
    shown = [i for i, a in click.rows.items() if "hidden" not in a]
    if firings and len(shown) != sum(f["rule"] == rule for f in firings):
        failures.append("%s: the filter on rule %s shows %d firings, the audit has %d" %
                        (model, rule, len(shown), sum(f["rule"] == rule for f in firings)))
    again = base + ".explain.html"
    r = subprocess.run([graft, "explain", report, "--html", again], capture_output=True, text=True)
    if r.returncode != 0 or open(again).read() != text:
        failures.append("%s: graft explain --html does not write the same page: %s" % (model, r.stderr[-300:]))
    print("html: %s: %d firings listed, %d graph nodes drawn, firing %d drawn, %d shown by the filter on %s" %
          (model, len(dom.rows), len(dom.graph_nodes), opened, len(shown), rule))


def identity_chain(outdir, n):
    """A model of n Identity nodes in a row: n firings, more than the page
    lists as it loads (the rest come in chunks); the first one's name is
    markup, which the page must show as text."""
    import onnx
    from onnx import TensorProto, helper
    nodes = [helper.make_node("Identity", ["x" if i == 0 else "v%d" % i], ["y" if i == n - 1 else "v%d" % (i + 1)],
                              name="id%d" % i) for i in range(n)]
    nodes[0].name = 'id0 </script><!--<script> "&'  # names are data, never markup
    nodes.append(helper.make_node("Relu", ["y"], ["z"], name="relu"))
    g = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                          [helper.make_tensor_value_info("z", TensorProto.FLOAT, [2, 3])])
    path = os.path.join(outdir, "identity_chain.onnx")
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)
    return path


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    if not CHROMIUM:
        print("html browser test: SKIPPED: chromium is not installed (apt-get install chromium, or make deps)")
        return
    graft, outdir = os.path.abspath(sys.argv[1]), sys.argv[2]
    os.makedirs(outdir, exist_ok=True)
    models = (sys.argv[3:] or ["examples/tiny_cnn.onnx"]) + [identity_chain(outdir, 1200)]
    failures = []
    for m in models:
        check(graft, outdir, m, failures)
    for f in failures:
        print("FAIL", f)
    if failures:
        sys.exit(1)
    print("html browser test: %d model%s, all checks passed" % (len(models), "" if len(models) == 1 else "s"))


if __name__ == "__main__":
    main()
