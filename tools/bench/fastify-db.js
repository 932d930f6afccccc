// fastify-db: the Node peer of the database bench (tools/bench/db.js):
// TechEmpower's db, queries, fortunes, updates and plaintext tests on
// Fastify with the `postgres` npm driver (postgres.js, which pipelines
// queries on a connection), on the same tables as ingot's reference
// service (schemas/migrations). One process, no logger; PORT, HOST,
// DATABASE_URL and DB_POOL (connections, default 4) from the environment.
'use strict';
const fastify = require('fastify');
const postgres = require('postgres');

const sql = postgres(process.env.DATABASE_URL, {
  max: Number(process.env.DB_POOL || 4),
  prepare: true,     // statements prepared once per connection, like ingot's
  fetch_types: false, // the tests use int4 and varchar only
  onnotice: () => {},
});

const app = fastify({ logger: false });
app.addHook('onSend', (req, reply, payload, done) => {
  reply.header('Server', 'fastify');
  done(null, payload);
});

const World = {
  type: 'object',
  properties: { id: { type: 'integer' }, randomNumber: { type: 'integer' } },
};
const randomId = () => 1 + Math.floor(Math.random() * 10000);
// TechEmpower's rule: 1..500, and anything that is not an integer is 1.
function count(q) {
  const n = Number.parseInt(q, 10);
  return Number.isNaN(n) ? 1 : Math.min(500, Math.max(1, n));
}
const oneWorld = async (id) => {
  const [w] = await sql`SELECT id, randomnumber FROM world WHERE id = ${id}`;
  return { id: w.id, randomNumber: w.randomnumber };
};

app.get('/db', { schema: { response: { 200: World } } }, () => oneWorld(randomId()));

app.get('/queries', { schema: { response: { 200: { type: 'array', items: World } } } }, (req) =>
  Promise.all(Array.from({ length: count(req.query.queries) }, () => oneWorld(randomId()))));

const escapes = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#x27;' };
const escapeHtml = (s) => s.replace(/[&<>"']/g, (c) => escapes[c]);
app.get('/fortunes', async (req, reply) => {
  const rows = await sql`SELECT id, message FROM fortune`;
  const list = rows.map((r) => ({ id: r.id, message: r.message }));
  list.push({ id: 0, message: 'Additional fortune added at request time.' });
  list.sort((a, b) => (a.message < b.message ? -1 : a.message > b.message ? 1 : 0));
  let html = '<!DOCTYPE html><html><head><title>Fortunes</title></head><body><table><tr><th>id</th><th>message</th></tr>';
  for (const f of list) html += `<tr><td>${f.id}</td><td>${escapeHtml(f.message)}</td></tr>`;
  html += '</table></body></html>';
  reply.type('text/html; charset=utf-8');
  return html;
});

app.get('/updates', { schema: { response: { 200: { type: 'array', items: World } } } }, async (req) => {
  const worlds = await Promise.all(Array.from({ length: count(req.query.queries) }, () => oneWorld(randomId())));
  for (const w of worlds) w.randomNumber = randomId();
  // One statement for the batch, ids in order so that concurrent batches
  // take the row locks in the same order and cannot deadlock.
  const rows = [...worlds].sort((a, b) => a.id - b.id).map((w) => [w.id, w.randomNumber]);
  await sql`UPDATE world SET randomnumber = v.r::int FROM (VALUES ${sql(rows)}) AS v (id, r)
    WHERE world.id = v.id::int`;
  return worlds;
});

app.get('/plaintext', (req, reply) => {
  reply.type('text/plain');
  return 'Hello, World!';
});

app.listen({ port: Number(process.env.PORT || 3000), host: process.env.HOST || '127.0.0.1' }).catch((e) => {
  console.error(e);
  process.exit(1);
});
