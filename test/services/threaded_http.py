"""threaded_http.py PORT - a thread-per-connection HTTP/1.1 server from
Python's standard library (http.server.ThreadingHTTPServer): each
connection gets a thread that blocks in recv on a blocking socket, the
shape of a plain pthread server. GET /quit stops it; it then prints its
ground truth as one JSON object: pid, the main thread's tid, the
connections it accepted (the test's port probes among them), and for each
connection thread its tid, the connection's fd and the requests it served.
"""
import http.server
import json
import os
import sys
import threading

served = {}
lock = threading.Lock()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: one thread serves many requests

    def do_GET(self):
        tid = threading.get_native_id()
        with lock:
            e = served.setdefault(tid, {"fd": self.connection.fileno(), "requests": 0, "quit": False})
            e["requests"] += 1
            e["quit"] |= self.path == "/quit"
        body = b"hello\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        if self.path == "/quit":
            threading.Thread(target=server.shutdown).start()

    def log_message(self, *args):
        pass


class Server(http.server.ThreadingHTTPServer):
    accepted = 0

    def get_request(self):  # the accept: counted once it returned a connection
        conn = super().get_request()
        Server.accepted += 1
        return conn


server = Server(("127.0.0.1", int(sys.argv[1])), Handler)
server.daemon_threads = False  # server_close joins the connection threads
server.serve_forever()
server.server_close()
print(json.dumps({"pid": os.getpid(), "main_tid": threading.get_native_id(), "accepted": Server.accepted,
                  "served": {str(t): e for t, e in served.items()}}))
