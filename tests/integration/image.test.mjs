// The scratch OCI image (`make image`, images/oci): its layout and config as
// skopeo reads them, its one-file layer, a reproducible digest, the
// docker-archive through skopeo and podman load, and the image run by runc
// (unpacked by umoci, network namespace dropped so the container shares the
// loopback) under the container contract: PORT, JSON logs, uid 65534, a
// read-only root, SIGTERM drains. Needs root, as `make test` runs.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { ROOT, BODY, RawClient, req, curlResponse, within, commandRunner, needTools, freePort } from './lib.mjs';

const IMAGES = path.join(ROOT, 'build', 'images');
const LAYOUT = path.join(IMAGES, 'oci');
const ARCHIVE = path.join(IMAGES, 'ingot-docker.tar');
const STATIC_BIN = path.join(ROOT, 'build', 'bin', 'service');
const T = { timeout: 60000 };
// The image packages the static binary only: the pass of tests/run against
// the sanitizer build (INGOT_BIN) would test the same image again.
const OTHER_BIN = process.env.INGOT_BIN && path.resolve(process.env.INGOT_BIN) !== STATIC_BIN;
const SKIP = OTHER_BIN ? { skip: 'the image holds build/bin/service; tested in the plain pass' } : {};

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ingot-image-'));
const runcRoot = path.join(tmp, 'runc-state');
const containers = new Set();
after(async () => {
	for (const id of containers) await run('runc', ['--root', runcRoot, 'delete', '--force', id]);
	fs.rmSync(tmp, { recursive: true, force: true });
});

// ---- small helpers ----

const { run, must } = commandRunner({ timeoutMs: 60000 });
const need = needTools;

function needImage() {
	assert.ok(fs.existsSync(path.join(LAYOUT, 'index.json')) && fs.existsSync(ARCHIVE),
		`no image in ${IMAGES}: run make image`);
}

/** The tar entries of buf (ustar): name, mode, uid, gid, size, type. */
function tarEntries(buf) {
	const out = [];
	for (let off = 0; off + 512 <= buf.length;) {
		const h = buf.subarray(off, off + 512);
		if (h.every((b) => b === 0)) break;
		const str = (a, n) => h.subarray(a, a + n).toString('latin1').replace(/\0.*$/s, '');
		const oct = (a, n) => parseInt(str(a, n).trim() || '0', 8);
		const prefix = str(345, 155);
		const e = { name: (prefix ? `${prefix}/` : '') + str(0, 100), mode: oct(100, 8), uid: oct(108, 8),
			gid: oct(116, 8), size: oct(124, 12), mtime: oct(136, 12), type: str(156, 1) || '0' };
		e.data = buf.subarray(off + 512, off + 512 + e.size);
		out.push(e);
		off += 512 + Math.ceil(e.size / 512) * 512;
	}
	return out;
}

/** True if the ELF file has no program interpreter (PT_INTERP): static. */
function isStaticElf(buf) {
	if (buf.readUInt32BE(0) !== 0x7f454c46 || buf[4] !== 2) return false;
	const phoff = Number(buf.readBigUInt64LE(0x20)), phentsize = buf.readUInt16LE(0x36), phnum = buf.readUInt16LE(0x38);
	for (let i = 0; i < phnum; i++) if (buf.readUInt32LE(phoff + i * phentsize) === 3) return false;
	return true;
}

function blob(layout, digest) {
	return fs.readFileSync(path.join(layout, 'blobs', 'sha256', digest.replace(/^sha256:/, '')));
}

function readImage(layout) {
	const index = JSON.parse(fs.readFileSync(path.join(layout, 'index.json'), 'utf8'));
	const manifest = JSON.parse(blob(layout, index.manifests[0].digest));
	const config = JSON.parse(blob(layout, manifest.config.digest));
	return { index, manifest, config };
}

// ---- a container under runc ----

let seq = 0;

/** umoci unpacks the image into a bundle; the bundle's config then loses
 * its network namespace (the container shares the host's loopback, the only
 * network the tests may use) and gets a read-only root and env. */
// The image's admin port (9464) is fixed; here it is a free one by default.
async function bundle(env) {
	env = { INGOT_ADMIN_PORT: '0', ...env };
	const dir = path.join(tmp, `bundle-${++seq}`);
	await must('umoci', ['unpack', '--image', `${LAYOUT}:latest`, dir]);
	const file = path.join(dir, 'config.json');
	const c = JSON.parse(fs.readFileSync(file, 'utf8'));
	c.process.terminal = false;
	c.root.readonly = true;
	c.linux.namespaces = c.linux.namespaces.filter((n) => n.type !== 'network');
	const keys = Object.keys(env);
	c.process.env = c.process.env.filter((e) => !keys.includes(e.split('=')[0]))
		.concat(keys.map((k) => `${k}=${env[k]}`));
	fs.writeFileSync(file, JSON.stringify(c, null, 2));
	return { dir, config: c };
}

class Container {
	/** `runc run` in the foreground: the container's stdout and stderr are
	 * runc's, and runc exits with the container's status. */
	constructor(dir) {
		this.id = `ingot-test-${process.pid}-${++seq}`;
		containers.add(this.id);
		this.proc = spawn('runc', ['--root', runcRoot, 'run', '--bundle', dir, this.id],
			{ stdio: ['ignore', 'pipe', 'pipe'] });
		this.lines = [];
		this.logs = [];
		this.stderr = '';
		this.exit = null;
		this._waiters = [];
		let partial = '';
		this.proc.stdout.setEncoding('utf8');
		this.proc.stdout.on('data', (d) => {
			partial += d;
			for (let nl; (nl = partial.indexOf('\n')) >= 0; partial = partial.slice(nl + 1)) {
				const line = partial.slice(0, nl);
				this.lines.push(line);
				try { this.logs.push(JSON.parse(line)); } catch { this.logs.push({ unparsed: line }); }
			}
			this._check();
		});
		this.proc.stderr.setEncoding('utf8');
		this.proc.stderr.on('data', (d) => { this.stderr += d; });
		this.exited = new Promise((resolve) => this.proc.on('close', (code, signal) => {
			this.exit = { code, signal };
			this._check();
			resolve(this.exit);
		}));
	}

	_check() {
		this._waiters = this._waiters.filter((w) => {
			const hit = this.logs.find(w.pred);
			if (hit) w.resolve(hit);
			else if (this.exit) w.reject(new Error(`runc exited ${JSON.stringify(this.exit)}; stdout: ${this.lines.join('\n')} stderr: ${this.stderr}`));
			else return true;
			return false;
		});
	}

	waitLog(pred, ms = 30000) {
		return within(ms, new Promise((resolve, reject) => {
			this._waiters.push({ pred, resolve, reject });
			this._check();
		}), `a log line from container ${this.id}; stdout: ${this.lines.join('\n')} stderr: ${this.stderr}`);
	}

	async pid() {
		return JSON.parse(await must('runc', ['--root', runcRoot, 'state', this.id])).pid;
	}

	async kill(sig) {
		await must('runc', ['--root', runcRoot, 'kill', this.id, sig]);
	}

	async stopped() {
		const x = await within(30000, this.exited, `container ${this.id} to exit`);
		await run('runc', ['--root', runcRoot, 'delete', '--force', this.id]);
		containers.delete(this.id);
		return x;
	}
}

// ---- the image ----

test('make image: an OCI layout that skopeo inspect accepts, with entrypoint /service, user 65534, PORT=8080, INGOT_ADMIN_PORT=9464, 8080/tcp, 9464/tcp, the version label, and a source label only where the remote is a URL', { ...T, ...SKIP }, async () => {
	await need('skopeo');
	needImage();
	const inspect = JSON.parse(await must('skopeo', ['inspect', `oci:${LAYOUT}:latest`]));
	const { manifest, config } = readImage(LAYOUT);
	assert.equal(inspect.Layers.length, 1, 'one layer');
	assert.equal(inspect.Layers[0], manifest.layers[0].digest);
	const raw = JSON.parse(await must('skopeo', ['inspect', '--config', `oci:${LAYOUT}:latest`]));
	assert.deepEqual(raw, config, 'skopeo reads the same config');
	assert.equal(config.os, 'linux');
	assert.equal(config.architecture, 'amd64');
	assert.deepEqual(config.config.Entrypoint, ['/service']);
	assert.equal(config.config.Cmd, undefined);
	assert.equal(config.config.User, '65534:65534');
	assert.deepEqual(config.config.Env, ['PORT=8080', 'INGOT_ADMIN_PORT=9464']);
	assert.deepEqual(config.config.ExposedPorts, { '8080/tcp': {}, '9464/tcp': {} });
	const version = (await must(STATIC_BIN, ['--version'])).split('\n')[0].trim().split(' ').pop();
	assert.equal(config.config.Labels['org.opencontainers.image.version'], version);
	// The source is the checkout's remote when that is a URL; a remote that
	// is a path (a clone of a clone) would name a directory of this machine.
	const remote = (await run('git', ['-C', ROOT, 'config', '--get', 'remote.origin.url'])).stdout.trim();
	const url = /:\/\/|^[\w.-]+@[^:]+:/.test(remote);
	assert.equal(config.config.Labels['org.opencontainers.image.source'], url ? remote : undefined, `remote ${remote || '(none)'}`);
	assert.equal(manifest.mediaType, 'application/vnd.oci.image.manifest.v1+json');
	assert.equal(manifest.layers[0].mediaType, 'application/vnd.oci.image.layer.v1.tar+gzip');
});

test('the image holds only the static binary: one layer with one file, /service (0755, root), and is at most 512 KiB compressed', { ...T, ...SKIP }, async () => {
	needImage();
	const { manifest, config } = readImage(LAYOUT);
	const gz = blob(LAYOUT, manifest.layers[0].digest);
	const tar = zlib.gunzipSync(gz);
	const entries = tarEntries(tar);
	assert.deepEqual(entries.map((e) => e.name), ['service'], 'no base layer, no shell, nothing else');
	const [e] = entries;
	assert.equal(e.type, '0');
	assert.equal(e.mode & 0o7777, 0o755);
	assert.equal(e.uid, 0);
	assert.equal(e.gid, 0);
	assert.ok(e.data.equals(fs.readFileSync(STATIC_BIN)), 'the layer holds build/bin/service as built');
	assert.ok(isStaticElf(e.data), 'statically linked: no program interpreter');
	const { createHash } = await import('node:crypto');
	assert.equal(config.rootfs.diff_ids[0], `sha256:${createHash('sha256').update(tar).digest('hex')}`);
	const compressed = gz.length + blob(LAYOUT, manifest.config.digest).length +
		fs.statSync(path.join(LAYOUT, 'index.json')).size;
	assert.ok(compressed <= 512 * 1024, `compressed image ${compressed} bytes`);
});

test('the image build is reproducible: the same SOURCE_DATE_EPOCH gives the same digest and archive, another epoch another digest', { ...T, ...SKIP }, async () => {
	await need('tar', 'gzip', 'sha256sum');
	const build = async (dir, epoch) => (await must(path.join(ROOT, 'images', 'oci'), [STATIC_BIN, dir],
		{ env: { ...process.env, SOURCE_DATE_EPOCH: String(epoch) } })).trim();
	const a = await build(path.join(tmp, 'repro-a'), 1700000000);
	const b = await build(path.join(tmp, 'repro-b'), 1700000000);
	const c = await build(path.join(tmp, 'repro-c'), 1700000001);
	assert.match(a, /^sha256:[0-9a-f]{64}$/);
	assert.equal(a, b);
	assert.notEqual(a, c, 'SOURCE_DATE_EPOCH is honoured');
	assert.ok(fs.readFileSync(path.join(tmp, 'repro-a', 'ingot-docker.tar'))
		.equals(fs.readFileSync(path.join(tmp, 'repro-b', 'ingot-docker.tar'))), 'the docker-archive too');
	assert.equal(readImage(path.join(tmp, 'repro-a', 'oci')).config.created, '2023-11-14T22:13:20Z');
});

test('the docker-archive loads: skopeo copies it to an OCI layout with the same layer, and podman load (own storage) tags it', { ...T, ...SKIP }, async () => {
	await need('skopeo', 'podman');
	needImage();
	const dest = path.join(tmp, 'from-archive');
	await must('skopeo', ['copy', `docker-archive:${ARCHIVE}`, `oci:${dest}:latest`]);
	const copied = JSON.parse(await must('skopeo', ['inspect', '--config', `oci:${dest}:latest`]));
	const { config } = readImage(LAYOUT);
	assert.deepEqual(copied.rootfs.diff_ids, config.rootfs.diff_ids, 'the same layer content');
	assert.deepEqual(copied.config.Entrypoint, ['/service']);
	assert.equal(copied.config.User, '65534:65534');
	// podman with its own storage and run directories: nothing of the host's
	// container configuration is read or changed.
	const store = path.join(tmp, 'podman');
	const podman = ['--root', `${store}/root`, '--runroot', `${store}/run`, '--tmpdir', `${store}/tmp`, '--storage-driver', 'vfs',
		'--events-backend', 'none', '--cgroup-manager', 'cgroupfs'];
	const loaded = await must('podman', [...podman, 'load', '--input', ARCHIVE]);
	assert.match(loaded, /Loaded image.*ingot:latest/);
	const fmt = '{{.Config.User}}|{{json .Config.Entrypoint}}|{{json .Config.Env}}';
	const seen = (await must('podman', [...podman, 'image', 'inspect', '--format', fmt, 'ingot:latest'])).trim();
	assert.equal(seen, '65534:65534|["/service"]|["PORT=8080","INGOT_ADMIN_PORT=9464"]');
});

// ---- running it ----

test('runc runs the image (network namespace dropped): /health and /json answer, its admin listener counts them on /metrics, and SIGTERM ends it with status 0', { ...T, ...SKIP }, async () => {
	await need('runc', 'umoci');
	needImage();
	const port = await freePort();
	const { dir } = await bundle({ PORT: String(port), HOST: '127.0.0.1', INGOT_THREADS: '1' });
	const c = new Container(dir);
	await c.waitLog((l) => l.msg === 'listening');
	assert.equal((await curlResponse(port, '/health')).text, BODY.health);
	assert.equal((await curlResponse(port, '/json')).text, BODY.json);
	const admin = c.logs.find((l) => l.msg === 'admin listening');
	assert.ok(admin, 'the image starts its admin listener');
	const m = await curlResponse(admin.port, '/metrics');
	assert.equal(m.status, 200);
	assert.match(m.text, /^http_server_request_duration_seconds_count\{http_request_method="GET",http_route="\/json",http_response_status_code="200"\} 1$/m);
	await c.kill('TERM');
	assert.deepEqual(await c.stopped(), { code: 0, signal: null }, c.stderr);
	assert.ok(c.logs.some((l) => l.msg === 'stopped'));
});

test('container contract: PORT is respected, logs are JSON lines on stdout, the process runs as uid 65534 on a read-only root, and SIGTERM drains an in-flight request within the grace period', { ...T, ...SKIP }, async () => {
	await need('runc', 'umoci');
	needImage();
	const port = await freePort();
	// 10 s: the grace Cloud Run and Knative give after SIGTERM.
	const { dir, config } = await bundle({ PORT: String(port), HOST: '127.0.0.1', INGOT_THREADS: '1', INGOT_GRACE_MS: '10000' });
	assert.deepEqual(config.process.user, { uid: 65534, gid: 65534 }, 'the image user, as umoci maps it');
	const c = new Container(dir);
	const listening = await c.waitLog((l) => l.msg === 'listening');
	assert.equal(listening.port, port, 'PORT is the port it listens on');
	assert.equal(listening.pid, 1, 'PID 1 of its own PID namespace');

	const pid = await c.pid();
	const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
	assert.match(status, /^Uid:\t65534\t65534\t65534\t65534$/m);
	assert.match(status, /^Gid:\t65534\t65534\t65534\t65534$/m);
	const root = fs.readFileSync(`/proc/${pid}/mountinfo`, 'utf8').split('\n')
		.map((l) => l.split(' ')).find((f) => f[4] === '/');
	assert.ok(root, 'a root mount');
	assert.ok(root[5].split(',').includes('ro'), `the root is read-only: ${root.join(' ')}`);

	// /health pipelined before /delay: once its answer is in, the delayed
	// request has been read and is in flight when SIGTERM arrives.
	const client = await RawClient.connect(port);
	await client.write(req('GET', '/health') + req('GET', '/delay/1000'));
	assert.equal((await client.response()).text, BODY.health);
	await c.kill('TERM');
	const r = await client.response();
	assert.equal(r.status, 200);
	assert.equal(r.text, BODY.delay(1000));
	assert.equal(r.headers.connection, 'close');
	await client.waitEnd();
	assert.deepEqual(await c.stopped(), { code: 0, signal: null }, c.stderr);

	const draining = c.logs.find((l) => l.msg === 'draining');
	const stopped = c.logs.find((l) => l.msg === 'stopped');
	assert.equal(draining?.signal, 'SIGTERM');
	assert.equal(draining.grace_ms, 10000);
	assert.equal(stopped?.cut, 0, 'finished within the grace period');
	assert.ok(c.logs.indexOf(draining) < c.logs.indexOf(stopped));
	assert.ok(c.lines.length >= 3);
	for (const line of c.lines) {
		const o = JSON.parse(line);
		assert.equal(typeof o.ts, 'string');
		assert.equal(typeof o.level, 'string');
		assert.equal(typeof o.msg, 'string');
	}
	assert.equal(c.stderr, '', 'nothing on stderr');
});
