"""Frames each non-empty line of stdin that is not a `//` comment as an LSP message (Content-Length
header, blank line, body) on stdout. A line starting with `RAW ` is written
as it is after the prefix (with `\\r\\n` escapes decoded): for broken frames."""
import sys

out = sys.stdout.buffer
for line in sys.stdin.read().splitlines():
    if not line.strip() or line.startswith("//"):
        continue
    if line.startswith("RAW "):
        out.write(line[4:].replace("\\r", "\r").replace("\\n", "\n").encode())
        continue
    body = line.encode()
    out.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
