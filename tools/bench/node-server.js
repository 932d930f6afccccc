// node-server: the Node.js peer in the bench, plain node:http, one process.
// Serves the same five routes and bodies as the reference service so the two
// are compared on equal work; PORT and HOST come from the environment.
'use strict';
const http = require('node:http');
const crypto = require('node:crypto');

const HEALTH = '{"status":"ok"}';
const JSON_BODY = '{"id":1,"name":"widget","tags":["a","b","c"],"price":12.5,' +
  '"stock":{"warehouse":"north","count":42},"active":true}';
const HASH_INPUT = 'hello world'.repeat(100);

// Plain numbers are exact here: (1e9+7) + 31e6 stays far below 2^53.
function compute() {
  let result = 0;
  for (let i = 0; i < 1000000; i++) result = (result + i * 31) % 1000000007;
  return result;
}

function send(res, status, body) {
  res.writeHead(status, {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(body),
  });
  res.end(body);
}

const server = http.createServer((req, res) => {
  const url = req.url;
  if (req.method !== 'GET') return send(res, 405, '{"error":"method not allowed"}');
  if (url === '/health') return send(res, 200, HEALTH);
  if (url === '/json') return send(res, 200, JSON_BODY);
  if (url === '/compute') return send(res, 200, `{"result":${compute()}}`);
  if (url === '/hash') {
    const hex = crypto.createHash('sha256').update(HASH_INPUT).digest('hex');
    return send(res, 200, `{"sha256":"${hex}"}`);
  }
  const m = /^\/blog\/([0-9]+)$/.exec(url);
  if (m) {
    const id = Number(m[1]);
    if (Number.isSafeInteger(id) && id >= 1) {
      return send(res, 200,
        `{"id":${id},"title":"post ${id}","body":"This is post ${id}.","likes":0}`);
    }
  }
  send(res, 404, '{"error":"not found"}');
});

// Long keep-alive so wrk's connections are never recycled mid-run.
server.keepAliveTimeout = 120000;
server.headersTimeout = 121000;
server.listen(Number(process.env.PORT || 8080), process.env.HOST || '127.0.0.1', () => {
  console.log(JSON.stringify({ msg: 'listening', port: server.address().port }));
});
