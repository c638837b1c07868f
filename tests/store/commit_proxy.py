"""A loopback TCP proxy in front of the PostgreSQL server that can lose the answer to a
COMMIT (or to a statement that is its own transaction): the server commits, and the
client's connection is cut before it hears so.

What a network cut at the wrong moment does; the store must then find out whether
its write was saved instead of doing it again.
"""

from __future__ import annotations

import contextlib
import socket
import threading


class CommitProxy:
    """Forwards 127.0.0.1:`port` to the server at `upstream`; `lose_answer_to()` arms it."""

    def __init__(self, upstream: tuple[str, int]) -> None:
        self.upstream = upstream
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self._armed = threading.Event()
        self._marker = b"COMMIT\x00"
        self.lost = threading.Event()  # set once an answer was lost
        self._sockets: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def lose_answer_to(self, marker: bytes = b"COMMIT\x00") -> None:
        """Lose the answer to the next statement whose text holds `marker`."""
        self._marker = marker
        self.lost.clear()
        self._armed.set()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            server = socket.create_connection(self.upstream)
            self._sockets += [client, server]
            committing = threading.Event()
            threading.Thread(
                target=self._to_server, args=(client, server, committing), daemon=True
            ).start()
            threading.Thread(
                target=self._to_client, args=(server, client, committing), daemon=True
            ).start()

    def _to_server(
        self, client: socket.socket, server: socket.socket, committing: threading.Event
    ) -> None:
        with contextlib.suppress(OSError):
            while data := client.recv(65536):
                if self._armed.is_set() and self._marker in data:
                    self._armed.clear()
                    committing.set()
                server.sendall(data)
        with contextlib.suppress(OSError):
            server.shutdown(socket.SHUT_WR)

    def _to_client(
        self, server: socket.socket, client: socket.socket, committing: threading.Event
    ) -> None:
        with contextlib.suppress(OSError):
            while data := server.recv(65536):
                if committing.is_set():
                    # The server answered (it is saved): the client never hears it.
                    self.lost.set()
                    break
                client.sendall(data)
        for s in (client, server):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            s.close()

    def close(self) -> None:
        self._listener.close()
        for s in self._sockets:
            with contextlib.suppress(OSError):
                s.close()
