"""moto's S3 server on 127.0.0.1, in a process of its own: the real S3 endpoint of the
object-store tests (the s3_server fixture) and of bench.remote."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path


class S3Server:
    """A real S3 endpoint on 127.0.0.1: moto's server, in a process of its own.

    `env` is what a client needs (endpoint, region, credentials: the standard AWS
    variables); `fs` is a pyarrow filesystem the tests write through (kafkacodec itself
    never writes to a bucket); `upload(local, url)` copies a local tree under a URL."""

    def __init__(self, port: int, proc):
        self.port = port
        self.proc = proc
        self._log = None
        self.endpoint = f"http://127.0.0.1:{port}"
        self.env = {
            "AWS_ENDPOINT_URL": self.endpoint, "AWS_REGION": "us-east-1",
            "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_EC2_METADATA_DISABLED": "true",
        }  # fmt: skip
        from pyarrow import fs as pafs

        self.fs = pafs.S3FileSystem(endpoint_override=self.endpoint, region="us-east-1",
                                    access_key="testing", secret_key="testing",
                                    allow_bucket_creation=True)  # fmt: skip

    def bucket(self, name: str) -> str:
        self.fs.create_dir(name)
        return f"s3://{name}"

    def upload(self, local: Path, url: str) -> str:
        """Copy the files below local to url/<relative path>; returns url."""
        key = url[len("s3://") :].rstrip("/")
        for p in sorted(Path(local).rglob("*")):
            if p.is_file():
                with self.fs.open_output_stream(f"{key}/{p.relative_to(local).as_posix()}") as o:
                    o.write(p.read_bytes())
        return url

    def put(self, url: str, data: bytes) -> None:
        with self.fs.open_output_stream(url[len("s3://") :]) as o:
            o.write(data)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        if self._log is not None:
            self._log.close()

    def moto(self, path: str, body: bytes = b"") -> bytes:
        """A call of moto's own API (reset-auth, ...)."""
        import urllib.request

        req = urllib.request.Request(f"{self.endpoint}/moto-api/{path}", data=body or None,
                                     method="POST" if body else "GET",
                                     headers={"Content-Type": "text/plain"})  # fmt: skip
        return urllib.request.urlopen(req, timeout=10).read()


def start_moto(log_path: Path, timeout: float = 30) -> S3Server:
    """Start moto's server on a free port of 127.0.0.1; S3Server.stop() ends it."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    log = open(log_path, "w")  # noqa: SIM115 - closed by stop()
    proc = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                            stdout=log, stderr=subprocess.STDOUT)  # fmt: skip
    deadline = time.monotonic() + timeout
    while True:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/moto-api/", timeout=1).read()
            break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                log.close()
                raise RuntimeError(f"moto's server did not start (see {log_path})") from None
            time.sleep(0.05)
    server = S3Server(port, proc)
    server._log = log
    return server
