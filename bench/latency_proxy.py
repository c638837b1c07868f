"""A TCP proxy that delays every byte by half a round trip each way: a database on
another machine, for the benches (this machine's kernel has no netem).

    python bench/latency_proxy.py LISTEN_PORT TARGET_PORT RTT_MS

Prints `ready` once it listens on 127.0.0.1:LISTEN_PORT; forwards to
127.0.0.1:TARGET_PORT. Threads and blocking sockets, not an event loop: epoll's
timeouts are whole milliseconds, sleeps are not. Order is kept: every chunk waits
the same time.
"""

from __future__ import annotations

import contextlib
import queue
import socket
import sys
import threading
import time


def _nodelay(s: socket.socket) -> socket.socket:
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def _direction(source: socket.socket, target: socket.socket, delay: float) -> None:
    chunks: queue.SimpleQueue[tuple[float, bytes]] = queue.SimpleQueue()

    def read() -> None:
        while True:
            try:
                chunk = source.recv(65536)
            except OSError:
                chunk = b""
            chunks.put((time.monotonic() + delay, chunk))
            if not chunk:
                return

    def write() -> None:
        while True:
            due, chunk = chunks.get()
            wait = due - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            if not chunk:
                with contextlib.suppress(OSError):
                    target.shutdown(socket.SHUT_WR)
                return
            try:
                target.sendall(chunk)
            except OSError:
                return

    threading.Thread(target=read, daemon=True).start()
    threading.Thread(target=write, daemon=True).start()


def main(listen: int, target_port: int, rtt_ms: float) -> None:
    delay = rtt_ms / 2000
    server = socket.create_server(("127.0.0.1", listen))
    print("ready", flush=True)
    while True:
        client, _ = server.accept()
        upstream = socket.create_connection(("127.0.0.1", target_port))
        _direction(_nodelay(client), _nodelay(upstream), delay)
        _direction(upstream, client, delay)


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]))
