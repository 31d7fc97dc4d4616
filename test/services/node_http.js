// node_http.js - the HTTP server of test/integration/test_node.sh: every
// request reads FILE with fs.readFile, i.e. on libuv's threadpool, whose
// threads park in cond_wait and hand results back to the main loop through
// uv_async_send (an eventfd write).
// Usage: node node_http.js PORT FILE [exit-on-term]
// With exit-on-term, SIGTERM calls process.exit(0) so that the process
// ends through exit() and its destructors; without it, node's default
// SIGTERM action kills it on the spot.
'use strict';
const http = require('http');
const fs = require('fs');

const [port, file, mode] = process.argv.slice(2);
if (mode === 'exit-on-term') process.on('SIGTERM', () => process.exit(0));

http.createServer((req, res) => {
  fs.readFile(file, (err, data) => {
    res.statusCode = err ? 500 : 200;
    res.end(err ? String(err) : data);
  });
}).listen(Number(port), '127.0.0.1');
