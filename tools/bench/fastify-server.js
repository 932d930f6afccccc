// fastify-server: the Fastify + Ajv peer of the validation bench
// (tools/bench/validation.js). Serves POST /validate, POST /novalidate and
// POST /blog with the request and response schemas of schemas/service.json
// translated by hand into Fastify route schemas, so Ajv validates and
// fast-json-stringify serializes what ingot's generated code does. One
// process, no logger; PORT and HOST come from the environment.
'use strict';
const fastify = require('fastify');

// ---- schemas/service.json, components.schemas ---------------------------
const ValidateInput = {
  type: 'object',
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 100 },
    nickname: { type: ['string', 'null'], maxLength: 50 },
    ref: { type: ['string', 'integer'] },
    status: { type: 'string', enum: ['active', 'inactive', 'pending'] },
    scores: { type: 'array', items: { type: 'integer', minimum: 0, maximum: 100 }, maxItems: 20 },
    address: {
      type: 'object',
      properties: {
        street: { type: 'string', minLength: 1 },
        city: { type: 'string', minLength: 1 },
        zip: { type: 'string', pattern: '^[0-9]{5}$' },
      },
      required: ['street', 'city', 'zip'],
      additionalProperties: false,
    },
    active: { type: 'boolean' },
  },
  required: ['name', 'nickname', 'ref', 'status', 'scores', 'address', 'active'],
  additionalProperties: false,
};
const ValidateOutput = {
  type: 'object',
  properties: {
    page: { type: 'integer' },
    tags: { type: 'array', items: { type: 'string' } },
    foo: { type: 'string' },
    body: ValidateInput,
  },
  required: ['page', 'tags', 'foo', 'body'],
};
const PostInput = {
  type: 'object',
  properties: {
    title: { type: 'string', minLength: 1, maxLength: 200 },
    body: { type: 'string' },
    likes: { type: 'integer', minimum: 0 },
    tags: { type: 'array', items: { type: 'string' }, maxItems: 10 },
  },
  required: ['title', 'body', 'likes'],
};
const Post = {
  type: 'object',
  properties: {
    id: { type: 'integer', minimum: 1 },
    title: { type: 'string' },
    body: { type: 'string' },
    likes: { type: 'integer', minimum: 0 },
    tags: { type: 'array', items: { type: 'string' } },
  },
  required: ['id', 'title', 'body', 'likes'],
};

// ---- the operations' parameters -------------------------------------------
const validateQuery = {
  type: 'object',
  properties: {
    page: { type: 'integer', minimum: 1, default: 1 },
    tags: { type: 'array', items: { type: 'string', minLength: 1, maxLength: 20 }, maxItems: 10 },
  },
};
const validateHeaders = {
  type: 'object',
  properties: { 'x-foo': { type: 'string', minLength: 1, maxLength: 64 } },
  required: ['x-foo'],
};

// Ajv as Fastify configures it (coerceTypes 'array' for query strings,
// useDefaults), except removeAdditional: Fastify's default strips unknown
// keys where additionalProperties is false; ingot rejects them with a 400,
// and so does this server. allowUnionTypes admits the OpenAPI 3.1 type
// arrays (["string", "null"]) without a strict-mode warning.
const app = fastify({
  logger: false,
  keepAliveTimeout: 120000,
  ajv: { customOptions: { removeAdditional: false, allowUnionTypes: true } },
});

function echo(reply, query, headers, body) {
  reply.send({
    page: query.page,
    tags: query.tags === undefined ? [] : query.tags,
    foo: headers['x-foo'],
    body,
  });
}

app.post('/validate', {
  schema: {
    querystring: validateQuery,
    headers: validateHeaders,
    body: ValidateInput,
    response: { 200: ValidateOutput },
  },
}, (req, reply) => echo(reply, req.query, req.headers, req.body));

// The baseline, as ingot's x-ingot-validate: false: values decoded to their
// types, no constraint checked. No Ajv here; the response is still
// serialized from its schema.
app.post('/novalidate', {
  schema: { response: { 200: ValidateOutput } },
}, (req, reply) => {
  const q = req.query;
  const tags = q.tags === undefined ? [] : Array.isArray(q.tags) ? q.tags : [q.tags];
  echo(reply, { page: q.page === undefined ? 1 : Number(q.page), tags }, req.headers, req.body);
});

// Ids count up from 1 as ingot's do on one core; nothing is stored.
let postsCreated = 0;
app.post('/blog', {
  schema: { body: PostInput, response: { 201: Post } },
}, (req, reply) => {
  const id = ++postsCreated;
  const p = req.body;
  reply.code(201).header('location', `/blog/${id}`)
    .send({ id, title: p.title, body: p.body, likes: p.likes, tags: p.tags });
});

app.listen({ port: Number(process.env.PORT || 8080), host: process.env.HOST || '127.0.0.1' }, (err) => {
  if (err) {
    process.stderr.write(`${err.stack}\n`);
    process.exit(1);
  }
  console.log(JSON.stringify({ msg: 'listening', port: app.server.address().port }));
});
process.on('SIGTERM', () => app.close(() => process.exit(0)));
