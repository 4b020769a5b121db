"""A TCP proxy in front of the S3 server that cuts connections half-way through a response:
the network failure a ranged GET meets in production (a reset mid-body), made on demand."""

from __future__ import annotations

import socket
import threading


class CuttingProxy:
    """Listens on 127.0.0.1 and forwards to `target` (host, port). While `cuts` is above 0,
    a response that grows past `after` bytes is cut there: both sockets are closed with
    nothing more sent (the client sees a connection reset in the middle of the body), and
    `cuts` goes down by one. `cuts = -1` cuts every such response."""

    def __init__(self, target: tuple[str, int], *, after: int = 4096, cuts: int = 1):
        self.target = target
        self.after = after
        self.cuts = cuts
        self.cut = 0  # responses cut so far
        self._lock = threading.Lock()
        self._server = socket.socket()
        self._server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._server.bind(("127.0.0.1", 0))
        self._server.listen(64)
        self.port = self._server.getsockname()[1]
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self._stop = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _take_cut(self) -> bool:
        with self._lock:
            if self.cuts == 0:
                return False
            if self.cuts > 0:
                self.cuts -= 1
            self.cut += 1
            return True

    def _accept(self) -> None:
        while not self._stop:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            upstream = socket.create_connection(self.target)
            # bytes of the response in flight (a keep-alive connection carries several: a
            # request resets the count)
            state = {"sent": 0}
            for args in ((client, upstream, False, state), (upstream, client, True, state)):
                threading.Thread(target=self._pipe, args=args, daemon=True).start()

    def _pipe(self, src: socket.socket, dst: socket.socket, response: bool, state: dict) -> None:
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                if not response:
                    state["sent"] = 0
                elif state["sent"] + len(data) > self.after and self._take_cut():
                    dst.sendall(data[: max(self.after - state["sent"], 0)])
                    # RST rather than FIN: the client sees a reset, as when a peer dies
                    dst.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\0\0\0\0\0\0\0")
                    break
                else:
                    state["sent"] += len(data)
                dst.sendall(data)
        except OSError:
            pass
        finally:
            # shutdown first: it wakes the other direction's thread blocked in recv on the
            # same socket (a close alone would wait for that recv to return)
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                s.close()

    def close(self) -> None:
        self._stop = True
        self._server.close()
