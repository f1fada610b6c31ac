"""A static PEP 503 index over HTTP (a folder with ``simple/<name>/index.html`` pages and the
files they link to) that writes one line per request to a log: the path and the
``Authorization`` header, or ``-``. It stands in for PyPI behind the hub's pass-through, and
the log shows what reached it.

    python logging_index_server.py PORT ROOT LOGFILE
"""

from __future__ import annotations

import functools
import http.server
import sys
import threading
from pathlib import Path


class _Handler(http.server.SimpleHTTPRequestHandler):
    log_path: Path
    lock = threading.Lock()

    def _record(self) -> None:
        line = f"{self.path}\t{self.headers.get('Authorization') or '-'}\n"
        with self.lock, open(self.log_path, "a") as f:
            f.write(line)

    def do_GET(self) -> None:
        self._record()
        super().do_GET()

    def do_HEAD(self) -> None:
        self._record()
        super().do_HEAD()

    def log_message(self, format: str, *args: object) -> None:  # the log file is enough
        pass


def main() -> None:
    port, root, log = int(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    _Handler.log_path = log
    handler = functools.partial(_Handler, directory=str(root))
    with http.server.ThreadingHTTPServer(("127.0.0.1", port), handler) as server:
        server.serve_forever()


if __name__ == "__main__":
    main()
