"""A command run in a pseudo-terminal, as a user at a terminal runs it (for ``bench/scale.py``).

To a pipe a read command writes plain text without rich; in a terminal it prints through
rich's console with colour, and a line-buffered stdout writes a line at a time: a benchmark
that times only pipes misses that (as one that ran at 200 columns missed the tables rich
narrowed at 80). :func:`terminal_seconds` runs a command with its stdout on a pseudo-terminal
of the given width and its output drained, and gives its wall time.
"""

from __future__ import annotations

import fcntl
import os
import pty
import struct
import subprocess
import termios
import threading
import time


def terminal_seconds(argv: list[str], env: dict[str, str], columns: int) -> float:
    """Wall seconds of ``argv`` with stdout on a pseudo-terminal ``columns`` wide (stderr
    dropped); raises ``CalledProcessError`` when it fails."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))

    def drain() -> None:
        try:
            while os.read(master, 65536):
                pass
        except OSError:  # (the terminal's other side closed: all read)
            pass

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        started = time.perf_counter()
        subprocess.run(argv, env=env, stdout=slave, stderr=subprocess.DEVNULL, check=True)
        return time.perf_counter() - started
    finally:
        os.close(slave)
        reader.join(timeout=10)
        os.close(master)
