"""uvloop_http.py PORT - an HTTP/1.1 keep-alive server on uvloop (libuv) for
test_uvloop.sh. Each request runs one task on a ThreadPoolExecutor of two
threads (run_in_executor); the task's result comes back to the loop through
call_soon_threadsafe, which is libuv's uv_async_send (an eventfd write).

SIGTERM (a loop signal handler: Python's C handler writes to its wakeup
socket) stops the server. It then prints its ground truth as one JSON line:
the loop's thread id, requests answered, and for each executor thread (native
tid) the tasks it ran."""
import asyncio
import json
import signal
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

import uvloop

BODY = b"hello from uvloop\n"
RESPONSE = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n%s" % (len(BODY), BODY)
pool = ThreadPoolExecutor(max_workers=2)
tasks_by_tid = {}  # executor thread -> tasks run (each thread writes only its own key)
answered = 0


def task(n):
    tid = threading.get_native_id()
    tasks_by_tid[tid] = tasks_by_tid.get(tid, 0) + 1
    return sum(range(n))


async def handle(reader, writer):
    global answered
    loop = asyncio.get_running_loop()
    try:
        while True:
            await reader.readuntil(b"\r\n\r\n")
            await loop.run_in_executor(pool, task, 200)
            writer.write(RESPONSE)
            answered += 1
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


async def main(port):
    loop = asyncio.get_running_loop()
    stop = loop.create_future()
    loop.add_signal_handler(signal.SIGTERM, stop.set_result, None)
    server = await asyncio.start_server(handle, "127.0.0.1", port)
    await stop
    server.close()


uvloop.install()
asyncio.run(main(int(sys.argv[1])))
pool.shutdown(wait=True)
print(json.dumps({"loop_tid": threading.get_native_id(), "answered": answered,
                  "tasks_by_tid": {str(t): n for t, n in tasks_by_tid.items()}}))
