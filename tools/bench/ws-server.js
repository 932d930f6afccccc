// ws-server.js: the WebSocket echo's peer in tools/bench/streams.js, npm's
// ws (tools/bench's package) on Node's http server: GET /ws/echo upgrades;
// each text message is parsed as JSON, checked for GET /ws/echo's contract
// ({text: a string of at most 1000, n: an integer}) and answered with
// {text, n: n + 1}, as the reference service's getWsEcho_message does; a
// message that breaks it closes with 1008. Usage: node ws-server.js PORT.
'use strict';
const http = require('node:http');
const { WebSocketServer } = require('ws');

const port = Number(process.argv[2]);
const server = http.createServer((req, res) => { res.writeHead(404).end(); });
const wss = new WebSocketServer({ server, path: '/ws/echo', perMessageDeflate: false, maxPayload: 1 << 20 });
wss.on('connection', (sock) => {
  sock.on('message', (data, isBinary) => {
    let m;
    try { m = isBinary ? null : JSON.parse(data); } catch { m = null; }
    if (!m || typeof m !== 'object' || typeof m.text !== 'string' || m.text.length > 1000 || !Number.isInteger(m.n)) {
      sock.close(1008, 'not an Echo message');
      return;
    }
    sock.send(JSON.stringify({ text: m.text, n: m.n + 1 }));
  });
});
server.listen(port, '127.0.0.1');
process.on('SIGTERM', () => process.exit(0));
