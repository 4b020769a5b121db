"""Run kafkacodec's command line and kill it (SIGKILL, as a power cut would end it) just
before its Nth file-system step: a rename, fsync, truncate, unlink or mkdir.

    python tests/log/crashing_cli.py N recover DIR --repair ...

Exits as the command does when it takes fewer than N steps; dies by SIGKILL otherwise.
"""

import os
import signal
import sys

STEPS = ("rename", "replace", "fsync", "ftruncate", "truncate", "unlink", "mkdir")


def _install(limit: int) -> None:
    count = 0

    def wrap(real):
        def step(*args, **kwargs):
            nonlocal count
            if count == limit:
                os.kill(os.getpid(), signal.SIGKILL)
            count += 1
            return real(*args, **kwargs)

        return step

    for name in STEPS:
        setattr(os, name, wrap(getattr(os, name)))


if __name__ == "__main__":
    _install(int(sys.argv[1]))
    from kafkacodec.cli import main

    sys.exit(main(sys.argv[2:]))
