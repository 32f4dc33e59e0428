#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""slow-bus.py LISTEN UPSTREAM DELAY_MS STALL_FILE: a slowed-down system bus for the tests.

A byte proxy on the unix socket LISTEN in front of the bus socket UPSTREAM (the system dbus-daemon's).
What the client sends goes on at once; what the bus sends back (the authentication's answers, every method
reply and signal) is held DELAY_MS first, in order, and not at all while STALL_FILE exists (a bus that has
stopped answering). A STALL_FILE that holds a method's name (e.g. StartTransientUnit) stalls a connection
only once its client has called that method: a bus that stops answering in the middle of a verb. Credentials are the proxy's own (root, as the tests' clients), so the daemon's EXTERNAL
authentication holds. No file descriptor passes: sdrun sends none over the bus. Prints "ready" once it
listens and "connection" for each client; ends on SIGTERM.
"""
import asyncio
import os
import signal
import sys
import time


def stalled(stall_file, seen):
    """The bus holds its answers: STALL_FILE exists, and is empty or names a method the client has called."""
    try:
        with open(stall_file, "rb") as f:
            after = f.read().strip()
    except FileNotFoundError:
        return False
    return not after or after in seen


async def pump(reader, writer, delay, stall_file, seen=None, sent=None):
    try:
        while True:
            data = await reader.read(65536)
            if not data:
                break
            if sent is not None:
                sent.extend(data)
            due = time.monotonic() + delay
            while seen is not None and stalled(stall_file, bytes(seen)):
                await asyncio.sleep(0.05)
            wait = due - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            writer.write(data)
            await writer.drain()
    except (ConnectionError, asyncio.CancelledError):
        pass
    finally:
        writer.close()


async def main():
    listen, upstream, delay_ms, stall_file = sys.argv[1:5]
    delay = int(delay_ms) / 1000.0

    async def client(c_reader, c_writer):
        print("connection", flush=True)
        try:
            u_reader, u_writer = await asyncio.open_unix_connection(upstream)
        except OSError:
            c_writer.close()
            return
        seen = bytearray()  # what the client sent: a stall may wait for a method's name in it
        up = asyncio.ensure_future(pump(c_reader, u_writer, 0, stall_file, sent=seen))
        down = asyncio.ensure_future(pump(u_reader, c_writer, delay, stall_file, seen=seen))
        await asyncio.wait([up, down], return_when=asyncio.FIRST_COMPLETED)
        up.cancel()
        down.cancel()
        u_writer.close()
        c_writer.close()

    server = await asyncio.start_unix_server(client, path=listen)
    os.chmod(listen, 0o666)
    stop = asyncio.get_running_loop().create_future()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set_result, None)
    print("ready", flush=True)
    async with server:
        await stop


if __name__ == "__main__":
    asyncio.run(main())
