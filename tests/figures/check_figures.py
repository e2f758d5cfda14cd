#!/usr/bin/env python3
"""Checks what `failslow diagnose --svg DIR --html FILE` wrote, with real tools.

  check_figures.py xml    REPORT.json   every file the report lists exists; every SVG parses
                                        (xml.etree) with an <svg> root and a width and height
  check_figures.py render REPORT.json   every SVG rasterised by rsvg-convert (librsvg2-bin): the
                                        PNG has the SVG's size; in the straggler's phase heatmap
                                        the culprit's row is brighter and far in colour from every
                                        other rank's row (pixels read back below)
  check_figures.py html   REPORT.json   the HTML page in headless Chromium: it loads with no
                                        console message, its DOM holds every figure, and in a
                                        screenshot the page's first heatmap (under the most
                                        severe finding with one) shows that finding's rank's row
                                        as above

Exit 0 when the checks pass, 1 when one fails, 77 (ctest: skipped) when the tool is absent.
PNG pixels are read with zlib alone (8-bit RGB/RGBA, the five PNG filters).
"""
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
import zlib

SKIP = 77


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def read_png(path, max_rows=None):
    """(width, height, channels, rows as bytearrays) of an 8-bit RGB(A) non-interlaced PNG;
    with max_rows, only the first max_rows rows are decoded (pure Python: ~1 s per 1M bytes)."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        fail(path + ": not a PNG")
    pos, idat, ihdr = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    w, h, depth, ctype, _, _, interlace = ihdr
    if depth != 8 or ctype not in (2, 6) or interlace:
        fail(path + ": PNG depth %d colour type %d interlace %d not handled" % (depth, ctype, interlace))
    ch = 3 if ctype == 2 else 4
    raw = zlib.decompress(idat)
    stride = w * ch
    rows, prev = [], bytearray(stride)
    for y in range(h if max_rows is None else min(h, max_rows)):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if f == 1:
            for i in range(ch, stride):
                line[i] = (line[i] + line[i - ch]) & 255
        elif f == 2:
            line = bytearray((a + b) & 255 for a, b in zip(line, prev))
        elif f == 3:
            for i in range(stride):
                left = line[i - ch] if i >= ch else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 255
        elif f == 4:
            for i in range(stride):
                a = line[i - ch] if i >= ch else 0
                b = prev[i]
                c = prev[i - ch] if i >= ch else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    return w, h, ch, rows


def pixel(img, x, y):
    w, h, ch, rows = img
    x, y = int(x), int(y)
    return tuple(rows[y][x * ch:x * ch + 3])


def luma(c):
    return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]


def distance(a, b):
    return sum((p - q) ** 2 for p, q in zip(a, b)) ** 0.5


def load_report(path):
    rep = json.load(open(path))
    return rep, os.path.dirname(os.path.abspath(path))


def resolve(base, p):
    return p if os.path.isabs(p) else os.path.join(base, p)


def straggler_heatmap(rep, base):
    """(culprit rank, heatmap svg path, svg text) of the first straggler finding."""
    for i, f in enumerate(rep["findings"]):
        if f["kind"] != "straggler":
            continue
        for entry in rep.get("files", []):
            if entry["kind"] == "heatmap" and i in entry["findings"] and not entry["path"].endswith("heatmap_iteration.svg"):
                path = resolve(base, entry["path"])
                return f["ranks"][0], path, open(path, encoding="utf-8").read()
    fail("no straggler finding with a heatmap in the report")


def cell_layout(svg_text, start=0):
    m = re.search(r'<g class="heatmap-cells"[^>]*>', svg_text[start:])
    if not m:
        fail("no heatmap-cells group")
    tag = m.group(0)
    a = {k: float(v) for k, v in re.findall(r'data-([a-z-]+)="([0-9.]+)"', tag)}
    return a, start + m.start()


def check_rows(img, layout, culprit, origin=(0, 0), what=""):
    """The culprit's row at the last column against every other row's."""
    ox, oy = origin
    cols = int((layout["cols"] + layout["cols-per-cell"] - 1) // layout["cols-per-cell"])
    x = ox + layout["x"] + (cols - 0.5) * layout["cell-width"]

    def row_colour(r):
        y = oy + layout["y"] + (r // int(layout["rows-per-cell"]) + 0.5) * layout["cell-height"]
        return pixel(img, x, y)

    mine = row_colour(culprit)
    others = [row_colour(r) for r in range(int(layout["rows"])) if r // int(layout["rows-per-cell"]) != culprit // int(layout["rows-per-cell"])]
    for r, c in enumerate(others):
        if not (luma(mine) > luma(c) + 40 and distance(mine, c) > 80):
            fail("%s: the culprit's row %s is not distinct from another row's %s" % (what, mine, c))
    print("%s: rank %d's row %s, other rows luma <= %.0f (culprit %.0f)" % (what, culprit, mine, max(luma(c) for c in others), luma(mine)))


def cmd_xml(report_path):
    rep, base = load_report(report_path)
    files = rep.get("files", [])
    if not files:
        fail("the report lists no files")
    svgs = 0
    for entry in files:
        path = resolve(base, entry["path"])
        if not os.path.isfile(path):
            fail("listed but missing: " + path)
        for i in entry["findings"]:
            if not 0 <= i < len(rep["findings"]):
                fail("%s refers to finding %d of %d" % (path, i, len(rep["findings"])))
        if path.endswith(".svg"):
            root = ET.parse(path).getroot()
            if root.tag != "{http://www.w3.org/2000/svg}svg" or float(root.get("width")) <= 0:
                fail(path + ": not an SVG document with a size")
            svgs += 1
    print("%d files listed, %d SVG documents parse" % (len(files), svgs))


def cmd_render(report_path):
    tool = shutil.which("rsvg-convert")
    if not tool:
        print("SKIP: rsvg-convert not found (Debian package librsvg2-bin; scripts/install-deps.sh installs it)")
        sys.exit(SKIP)
    rep, base = load_report(report_path)
    culprit, hm_path, hm_text = straggler_heatmap(rep, base)
    with tempfile.TemporaryDirectory() as tmp:
        for entry in rep["files"]:
            path = resolve(base, entry["path"])
            if not path.endswith(".svg"):
                continue
            png = os.path.join(tmp, os.path.basename(path) + ".png")
            subprocess.run([tool, path, "-o", png], check=True)
            root = ET.parse(path).getroot()
            img = read_png(png)
            if (img[0], img[1]) != (int(float(root.get("width"))), int(float(root.get("height")))):
                fail("%s rendered %dx%d, the SVG says %sx%s" % (path, img[0], img[1], root.get("width"), root.get("height")))
            if path == hm_path:
                layout, _ = cell_layout(hm_text)
                check_rows(img, layout, culprit, what=os.path.basename(path) + " (rsvg-convert)")
    print("rendered every SVG at its size")


def cmd_html(report_path):
    tool = next((shutil.which(t) for t in ("chromium", "chromium-browser", "google-chrome") if shutil.which(t)), None)
    if not tool:
        print("SKIP: no chromium (Debian package chromium; scripts/install-deps.sh installs it)")
        sys.exit(SKIP)
    rep, base = load_report(report_path)
    html_path = next((resolve(base, e["path"]) for e in rep["files"] if e["kind"] == "html"), None)
    if not html_path:
        fail("the report lists no html file")
    page = open(html_path, encoding="utf-8").read()
    # The page's first heatmap sits under the most severe finding that has one: its rank's stripe.
    layout, at = cell_layout(page)
    sections = re.findall(r'<section class="finding" id="finding-([0-9]+)"', page[:at])
    if not sections:
        fail("the first heatmap is not under a finding")
    f = rep["findings"][int(sections[-1]) - 1]
    if not f["ranks"]:
        fail("the first heatmap's finding names no rank")
    culprit = f["ranks"][0]
    with tempfile.TemporaryDirectory() as tmp:
        common = [tool, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
                  "--force-device-scale-factor=1", "--user-data-dir=" + os.path.join(tmp, "profile"),
                  "--enable-logging=stderr", "--v=0"]
        url = "file://" + os.path.abspath(html_path)
        dom = subprocess.run(common + ["--dump-dom", url], capture_output=True, text=True, timeout=60)
        console = [l for l in dom.stderr.splitlines() if "CONSOLE" in l or "Uncaught" in l or "Failed to load" in l]
        if console:
            fail("console messages:\n" + "\n".join(console))
        svgs = len([e for e in rep["files"] if e["path"].endswith(".svg")])
        if dom.returncode != 0 or dom.stdout.count("<svg") < svgs or "Verdict" not in dom.stdout:
            fail("the DOM Chromium built lacks the figures or the verdict")
        shot = os.path.join(tmp, "page.png")
        w, h = 1200, 3000
        subprocess.run(common + ["--screenshot=" + shot, "--window-size=%d,%d" % (w, h), url],
                       capture_output=True, timeout=60)
        # The heatmap's 1 px #333333 frame: the first run of cols x cell width + 2 such pixels.
        cols = int((layout["cols"] + layout["cols-per-cell"] - 1) // layout["cols-per-cell"])
        want = int(cols * layout["cell-width"]) + 2
        rows_px = int((layout["rows"] + layout["rows-per-cell"] - 1) // layout["rows-per-cell"] * layout["cell-height"])
        img = None
        for limit in (1200, 2000, h):
            img = read_png(shot, limit)
            if (img[0], img[1]) != (w, h):
                fail("screenshot %dx%d, asked %dx%d" % (img[0], img[1], w, h))
            origin = None
            frame = bytes([0x33] * 3 * want) if img[2] == 3 else None
            for y, row in enumerate(img[3]):
                x = row.find(frame) if frame else -1
                if x >= 0 and x % 3 == 0:
                    origin = (x // 3 + 1 - layout["x"], y + 1 - layout["y"])
                    break
            if origin and origin[1] + layout["y"] + rows_px < len(img[3]):
                break
            origin = None
        if not origin:
            fail("the heatmap's frame (%d px wide) is not in the screenshot" % want)
        check_rows(img, layout, culprit, origin, what="the page's first heatmap in Chromium")
        print("the page loads without console messages; %d figures in its DOM" % dom.stdout.count("<svg"))


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("xml", "render", "html"):
        print(__doc__)
        sys.exit(2)
    {"xml": cmd_xml, "render": cmd_render, "html": cmd_html}[sys.argv[1]](sys.argv[2])
