#!/usr/bin/python3
"""Renders a --trace file as chrome://tracing shows it, to a PNG, without a
display: catapult's trace2html (the chrome://tracing viewer as one page)
embeds the trace, headless Chromium opens the page, and the DevTools protocol
waits for the import to finish and takes the screenshot. Used for the README's
picture (docs/images/timeline-mlp.png).

usage: scripts/screenshot_trace.py TRACE.json OUT.png --catapult DIR
           [--width 1600] [--height 900]
needs: chromium and python3-websocket (Debian packages), and a checkout of
https://github.com/catapult-project/catapult (its tracing/, common/ and
third_party/ directories) as DIR."""
import argparse
import base64
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request

import websocket

PORT = 9337


def devtools_call(ws, ids, method, **params):
    request_id = next(ids)
    ws.send(json.dumps({"id": request_id, "method": method, "params": params}))
    while True:
        message = json.loads(ws.recv())
        if message.get("id") == request_id:
            if "error" in message:
                sys.exit("screenshot_trace: %s failed: %s" % (method, message["error"]))
            return message.get("result", {})


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("trace")
    parser.add_argument("png")
    parser.add_argument("--catapult", required=True)
    parser.add_argument("--width", type=int, default=1600)
    parser.add_argument("--height", type=int, default=900)
    args = parser.parse_args()
    trace2html = os.path.join(args.catapult, "tracing", "bin", "trace2html")
    with tempfile.TemporaryDirectory() as scratch:
        page = os.path.join(scratch, os.path.splitext(os.path.basename(args.trace))[0] + ".html")
        subprocess.run([sys.executable, trace2html, args.trace, "--output", page], check=True,
                       stdout=subprocess.DEVNULL)
        chrome = subprocess.Popen(
            ["chromium", "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
             "--user-data-dir=" + os.path.join(scratch, "profile"),
             "--remote-debugging-port=%d" % PORT, "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            targets = None
            for _ in range(150):
                try:
                    targets = json.load(urllib.request.urlopen("http://127.0.0.1:%d/json" % PORT))
                    break
                except OSError:
                    time.sleep(0.2)
            if targets is None:
                sys.exit("screenshot_trace: chromium did not start")
            target = [t for t in targets if t["type"] == "page"][0]
            ws = websocket.create_connection(target["webSocketDebuggerUrl"], suppress_origin=True)
            ids = iter(range(1, 1 << 30))
            devtools_call(ws, ids, "Emulation.setDeviceMetricsOverride", width=args.width,
                          height=args.height, deviceScaleFactor=1, mobile=False)
            devtools_call(ws, ids, "Page.navigate", url="file://" + os.path.abspath(page))
            # The viewer imports in steps behind an "Importing..." dialog.
            done = "!!document.querySelector('tr-ui-timeline-view') && " \
                   "document.body.innerText.indexOf('Importing') < 0"
            for _ in range(240):
                time.sleep(0.5)
                result = devtools_call(ws, ids, "Runtime.evaluate", expression=done,
                                       returnByValue=True)
                if result.get("result", {}).get("value"):
                    break
            else:
                sys.exit("screenshot_trace: the trace viewer did not finish importing in 2 min")
            time.sleep(2)
            shot = devtools_call(ws, ids, "Page.captureScreenshot", format="png")
            with open(args.png, "wb") as out:
                out.write(base64.b64decode(shot["data"]))
        finally:
            chrome.terminate()
            chrome.wait()


if __name__ == "__main__":
    main()
